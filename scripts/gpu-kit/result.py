#!/usr/bin/env python3
"""Appends one result of the GPU kit to its results file, a JSON object per
line (docs/gpu.md, "Results"):

    result.py FILE KIND NAME [KEY=VALUE ...]

KIND is env, step, check or measure. A VALUE that reads as a number is
written as one; anything else as a string."""
import json
import sys


def typed(value):
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    path, kind, name = argv[1:4]
    record = {"kind": kind, "name": name}
    for pair in argv[4:]:
        key, sep, value = pair.partition("=")
        if not sep:
            sys.exit(f"result.py: {pair!r} is not KEY=VALUE")
        record[key] = typed(value)
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv)
