#!/usr/bin/env python3
"""Checks a pipeline-report page: every element closed in order, nothing
loaded from elsewhere (no src, no href but in-page anchors, no script), and
the expected numbers of diagrams, job boxes and comparison rows.

usage: check-html.py REPORT.html --diagrams N --boxes N
"""
import argparse
import sys
from html.parser import HTMLParser

VOID = {"meta", "br", "img", "hr", "link", "input"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.svgs, self.boxes, self.rows = [], 0, 0, 0
        self.table = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" or "src" in attrs:
            sys.exit(f"loads or runs something: <{tag} {attrs}>")
        if "href" in attrs and not attrs["href"].startswith("#"):
            sys.exit(f"links out: {attrs['href']}")
        if tag == "svg":
            self.svgs += 1
        if tag == "rect" and attrs.get("class") == "job":
            self.boxes += 1
        if tag == "table" and attrs.get("class") == "comparison":
            self.table = 1
        if tag == "tr" and self.table:
            self.rows += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            sys.exit(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        self.stack.pop()
        if tag == "table":
            self.table = 0


parser = argparse.ArgumentParser()
parser.add_argument("html")
parser.add_argument("--diagrams", type=int, required=True)
parser.add_argument("--boxes", type=int, required=True)
args = parser.parse_args()
checker = Checker()
checker.feed(open(args.html).read())
checker.close()
if checker.stack:
    sys.exit(f"unclosed: {checker.stack}")
rows = checker.rows - 1  # the header row
for what, got, want in [("diagrams", checker.svgs, args.diagrams),
                        ("job boxes", checker.boxes, args.boxes),
                        ("comparison rows", rows, args.diagrams)]:
    if got != want:
        sys.exit(f"{args.html}: {got} {what}, expected {want}")
print(f"ok: {checker.svgs} diagrams, {checker.boxes} job boxes, {rows} rows")
