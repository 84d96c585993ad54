#!/usr/bin/env python3
"""Functions that fit on a screen: no function outside the tests is longer
than --max lines (default 80), counted from the line of its opening brace
to the line of its closing one.

  function-size.py [--max N] [ROOT]
      prints each long function as FILE:LINE: NAME: N lines; status 1

A function is a brace block opened after a parameter list at namespace or
class scope (lambdas and local blocks count toward the function around
them). Comments, string and character literals are blanked first, so
braces inside them do not count. Standard library only.
"""
import argparse
import os
import re
import sys

FOLDERS = ["lib", "dialects", "include", "tools", "runtime/src", "runtime/include",
           "bench", "fuzz"]
SUFFIXES = (".cpp", ".h", ".cu", ".c")
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*(\(|$)")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")
NAME = re.compile(r"([~A-Za-z_][\w:<>~,\s]*?(?:operator\s*\S+?)?)\s*\(")


def blank(text):
    """The text with comments and literals replaced by spaces (newlines
    kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def head_kind(head):
    """What a '{' opens, from the text since the previous ; { or }."""
    h = " ".join(head.split())
    if not h or SCOPE.search(h) or h.startswith("extern"):
        return "scope"
    if CONTROL.search(h) or h.endswith("=") or h.endswith("return"):
        return "block"
    if re.search(r"\)\s*(const|noexcept|override|final|mutable|->[^{]*|:[^{]*|\s)*$", h):
        return "function"
    return "block"


def long_functions(path, limit):
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    stack, head_start, found = [], 0, []
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";{}":
            if c == "{":
                kind = head_kind(text[head_start:i])
                in_function = any(k == "function" for k, _, _ in stack)
                if kind == "function" and in_function:
                    kind = "block" # a lambda or a local class's method
                name = ""
                if kind == "function":
                    m = list(NAME.finditer(text[head_start:i]))
                    name = " ".join(m[0].group(1).split()) if m else "?"
                stack.append((kind, line, name))
            elif c == "}" and stack:
                kind, start, name = stack.pop()
                if kind == "function" and line - start + 1 > limit:
                    found.append((start, name, line - start + 1))
            head_start = i + 1
    return found


def source_files(root):
    for folder in FOLDERS:
        for base, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if d not in ("tests", "test"))
            for f in sorted(files):
                if f.endswith(SUFFIXES):
                    yield os.path.join(base, f)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max", type=int, default=80)
    p.add_argument("root", nargs="?", default=".")
    args = p.parse_args(argv)
    count, long = 0, []
    for path in source_files(args.root):
        count += 1
        rel = os.path.relpath(path, args.root)
        for start, name, n in long_functions(path, args.max):
            long.append("%s:%d: %s: %d lines" % (rel, start, name, n))
    print("\n".join(long + ["function-size: %d files, %d functions over %d lines"
                            % (count, len(long), args.max)]))
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
