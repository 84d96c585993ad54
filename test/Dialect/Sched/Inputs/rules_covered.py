#!/usr/bin/env python3
"""Every rule of the compiler's verifiers has a negative test (rules-covered.test).

A rule is a diagnostic the verifiers can emit: an emitOpError/emitError
statement of the sched dialect (dialects/Sched/*.cpp), or a message that
CommPlan::verify returns (lib/Scheduling/CommPlan.cpp). Its key is the
set of string literals of the statement. It is covered when a test states
one of them (12 characters or more; the longest, if all are shorter), or
quotes a part of one: an `expected-error` line of a .mlir test, a CHECK or grep line of a
lit test, or a unit test's expected message (test/unit/*.cpp). A rule no
input can reach is listed in UNREACHABLE with the reason.

  rules_covered.py ROOT      prints each uncovered rule; status 1 if any
"""
import glob
import os
import re
import sys

SOURCES = ["dialects/Sched/*.cpp", "lib/Scheduling/CommPlan.cpp"]
DIAGNOSTIC = re.compile(r"\b(emitOpError|emitError)\s*\(")
# CommPlan::verify's messages: a `return` of a string expression.
RETURNED = re.compile(r"\breturn\s+(where\(|\"|std::string\()")
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
STATED = re.compile(r"expected-(error|warning)|CHECK|grep|EXPECT|ASSERT"
                    # a FileCheck line under any prefix, e.g. "TWO: error: ..."
                    r"|^\s*(#|//)?\s*[A-Z][A-Z0-9_]*(-[A-Z]+)?: ")
# Keys of rules that no input reaches, with why (file: key -> reason).
UNREACHABLE = {
    "dialects/Sched/SchedAttrs.cpp: cost 'unit' must be ns, us or ms (a tick of":
        "the parser maps ns, us and ms to ticks and refuses any other unit "
        "itself: only a C++ builder reaches this check",
    "dialects/Sched/SchedAttrs.cpp: stage graph needs as many sources as targets":
        "the parser reads each edge as a pair: only a C++ builder reaches it",
    "dialects/Sched/SchedAttrs.cpp: stages, their sizes add up to":
        "the parser takes each group's size from its own list: only a C++ "
        "builder reaches it",
}
# A line that continues an expected message: a C++ literal alone.
CONTINUED = re.compile(r'^\s*"')
# A longer message is stated by any part of it this long.
WINDOW = 24


def statement_at(text, start):
    """The text from `start` to the end of its statement (the next ';' at
    nesting depth 0, string literals skipped)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = LITERAL.match(text, i).end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return text[start:i]
        elif c == ";" and depth == 0:
            return text[start:i]
        i += 1
    return text[start:]


def literals_of(statement):
    """The statement's strings, adjacent literals joined as C++ joins them."""
    joined = re.sub(r'"\s*\n?\s*"', "", statement)
    return [unescape(s).strip(" :,;.") for s in LITERAL.findall(joined)]


def rules_in(root, pattern):
    for path in sorted(glob.glob(os.path.join(root, pattern))):
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, root)
        matcher = RETURNED if rel.endswith("CommPlan.cpp") else DIAGNOSTIC
        for m in matcher.finditer(text):
            literals = [s for s in literals_of(statement_at(text, m.start())) if len(s) >= 4]
            if literals:
                yield rel, text.count("\n", 0, m.start()) + 1, literals


def stated_text(root):
    lines = []
    for pattern in ["test/**/*.mlir", "test/**/*.test", "test/unit/*.cpp"]:
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += [l for l in f if STATED.search(l) or CONTINUED.match(l)]
    return unescape("".join(lines))


def covered(literals, stated):
    """Some literal is stated whole or, if longer, by a WINDOW-character
    part of it (a test may quote a message around its numbers)."""
    for s in literals:
        if len(s) <= WINDOW:
            if s in stated:
                return True
        elif any(s[i:i + WINDOW] in stated for i in range(len(s) - WINDOW + 1)):
            return True
    return False


def unescape(literal):
    return literal.replace("\\'", "'").replace('\\"', '"')


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    stated = stated_text(root)
    rules = [r for pattern in SOURCES for r in rules_in(root, pattern)]
    uncovered = [(f, l, k) for f, l, k in rules
                 if not covered(k, stated) and "%s: %s" % (f, max(k, key=len)) not in UNREACHABLE]
    known = {"%s: %s" % (f, max(k, key=len)) for f, _, k in rules}
    for key in sorted(set(UNREACHABLE) - known):
        print("%s: listed as unreachable, but no such rule" % key)
    for f, l, k in uncovered:
        print("%s:%d: no test states this rule: \"%s\"" % (f, l, max(k, key=len)))
    print("rules: %d, covered: %d, unreachable: %d, uncovered: %d"
          % (len(rules), len(rules) - len(uncovered) - len(UNREACHABLE),
             len(UNREACHABLE), len(uncovered)))
    return 1 if uncovered or not set(UNREACHABLE) <= known or len(rules) < 50 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
