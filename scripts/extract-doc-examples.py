#!/usr/bin/env python3
"""Writes every ```mlir block of the given Markdown files as one -split-input-file
input, so that the examples of docs/ are tested (they must parse and verify)."""
import re
import sys

blocks = []
for path in sys.argv[1:]:
    with open(path) as f:
        text = f.read()
    for m in re.finditer(r"^```mlir\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 2
        blocks.append(f"// {path}:{line}\n{m.group(1)}")
if not blocks:
    sys.exit("no ```mlir block found")
print("\n// -----\n".join(blocks))
