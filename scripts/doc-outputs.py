#!/usr/bin/env python3
"""Keeps the outputs shown in docs/ true: a Markdown comment
`<!-- $ COMMAND -->` followed by a fenced block promises that COMMAND, run
from the repository root, prints exactly that block. Checks every promise
(exit 1 and a diff when one is broken), or with --update rewrites the blocks.

usage: doc-outputs.py [--bin DIR] [--update] FILE.md...
  --bin DIR  where the tools are: `build/bin/` in a command becomes DIR/
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

PROMISE = re.compile(r"^<!-- \$ (.*?) -->\n(```[a-z]*\n)(.*?)^```\n", re.S | re.M)

parser = argparse.ArgumentParser()
parser.add_argument("--bin", default="build/bin")
parser.add_argument("--update", action="store_true")
parser.add_argument("files", nargs="+")
args = parser.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

broken = 0
for path in args.files:
    text = open(path).read()
    checked = 0

    def run(m):
        global broken, checked
        command = m.group(1).replace("build/bin/", os.path.abspath(args.bin) + "/")
        result = subprocess.run(command, shell=True, cwd=root, text=True,
                                capture_output=True, executable="/bin/bash")
        if result.returncode != 0:
            sys.exit(f"{path}: `{m.group(1)}` failed ({result.returncode}):\n"
                     f"{result.stderr}")
        checked += 1
        if result.stdout != m.group(3):
            if not args.update:
                broken += 1
                line = text.count("\n", 0, m.start()) + 1
                print(f"{path}:{line}: `{m.group(1)}` prints something else:")
                sys.stdout.writelines(difflib.unified_diff(
                    m.group(3).splitlines(True), result.stdout.splitlines(True),
                    "documented", "printed"))
        return f"<!-- $ {m.group(1)} -->\n{m.group(2)}{result.stdout}```\n"

    updated = PROMISE.sub(run, text)
    if args.update and updated != text:
        open(path, "w").write(updated)
    print(f"{path}: {checked} outputs {'updated' if args.update else 'checked'}")
sys.exit(1 if broken else 0)
