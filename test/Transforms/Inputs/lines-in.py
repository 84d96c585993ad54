"""Exits 1 naming the first table row of FILE (a line starting with '|')
that DOC does not contain: a table in the docs that a run no longer makes.

usage: lines-in.py FILE DOC
"""
import sys

rows = [l for l in open(sys.argv[1]).read().splitlines() if l.startswith("|")]
doc = set(open(sys.argv[2]).read().splitlines())
missing = [r for r in rows if r not in doc]
if missing:
    sys.exit(f"{sys.argv[2]} lacks {len(missing)} rows of this run, first: {missing[0]}")
print(f"{len(rows)} rows found in {sys.argv[2]}")
