#!/usr/bin/env python3
"""Checks pipeline-compile's program files against each other.

  check-layouts.py PIPELINE-COMPILE [--lower-options=OPTS]
                   [--check PIPELINE-RUN] SPEC...

For each spec: the program written from the plan (the default) has exactly
the bytes of the one written through the rank IR (--through-rank-ir); the
per-rank layout (--layout=per-rank) holds the same document (the index is
its header plus `layout`, `rank_files` with each file's size and CRC-32, and
`collective_groups`, the distinct member lists of its collectives, sorted;
each rank file is its `ranks[r]`); the CBOR encoding (--encoding=cbor, both
layouts) decodes to the same document. The CBOR decoder below is this
test's own (RFC 8949, the subset a program uses), independent of the
writer. With --check, the runtime's `pipeline-run --check` accepts the CBOR
document and both per-rank directories (it validates them across ranks).
Prints one line per spec and exits non-zero on the first mismatch.
A spec's `// lower-options: ...` line is passed as --lower-options.
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib


class Failure(Exception):
    pass


def decode_cbor(data):
    """The document a CBOR byte string holds (maps, arrays, integers, text,
    booleans; definite or indefinite lengths)."""
    pos = 0

    def head():
        nonlocal pos
        byte = data[pos]
        pos += 1
        major, info = byte >> 5, byte & 31
        if info < 24:
            return major, info
        if info == 31:
            return major, None
        size = {24: 1, 25: 2, 26: 4, 27: 8}[info]
        value = int.from_bytes(data[pos:pos + size], "big")
        pos += size
        return major, value

    def item():
        nonlocal pos
        if data[pos] == 0xf4 or data[pos] == 0xf5:
            pos += 1
            return data[pos - 1] == 0xf5
        major, n = head()
        if major == 0:
            return n
        if major == 1:
            return -1 - n
        if major == 3:
            text = data[pos:pos + n].decode()
            pos += n
            return text
        if major in (4, 5):
            out = [] if major == 4 else {}
            count = 0
            while (data[pos] != 0xff) if n is None else count < n:
                if major == 4:
                    out.append(item())
                else:
                    key = item()
                    out[key] = item()
                count += 1
            if n is None:
                pos += 1
            return out
        raise Failure("unexpected CBOR major type %d at byte %d" % (major, pos))

    doc = item()
    if pos != len(data):
        raise Failure("%d bytes after the CBOR document" % (len(data) - pos))
    return doc


def compile_(compiler, spec, options, out, *flags):
    cmd = [compiler, spec, "-o", out] + list(flags)
    if options:
        cmd.append("--lower-options=" + options)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise Failure("%s failed:\n%s" % (" ".join(cmd), p.stderr[-1500:]))


def collective_groups(doc):
    groups = set()
    for rank in doc["ranks"]:
        for op in rank["ops"]:
            if op["op"] in ("allreduce_grad", "reduce_grad", "tied_grad"):
                groups.add(tuple(op["members"]))
    return [list(g) for g in sorted(groups)]


def same(a, b):
    """Equal documents, types included (Python has True == 1 == 1.0)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def check_per_rank(directory, doc, ext, load):
    """The per-rank layout in `directory` against the one document."""
    index = load(os.path.join(directory, "index" + ext))
    header = {k: v for k, v in doc.items() if k != "ranks"}
    rest = {k: v for k, v in index.items()
            if k not in ("layout", "rank_files", "collective_groups")}
    if not same(rest, header):
        raise Failure("the index's header differs from the document's")
    if index["layout"] != "per-rank":
        raise Failure("layout is %r" % index["layout"])
    if not same(index["collective_groups"], collective_groups(doc)):
        raise Failure("collective_groups %r, the ops have %r"
                      % (index["collective_groups"], collective_groups(doc)))
    if len(index["rank_files"]) != len(doc["ranks"]):
        raise Failure("%d rank files for %d ranks" % (len(index["rank_files"]), len(doc["ranks"])))
    for r, entry in enumerate(index["rank_files"]):
        want_name = "rank-%d%s" % (r, ext)
        if entry["rank"] != r or entry["file"] != want_name:
            raise Failure("rank_files[%d] is %r" % (r, entry))
        path = os.path.join(directory, entry["file"])
        data = open(path, "rb").read()
        if entry["bytes"] != len(data) or entry["crc32"] != zlib.crc32(data):
            raise Failure("%s: %d bytes, CRC-32 %d; the index says %d, %d"
                          % (want_name, len(data), zlib.crc32(data), entry["bytes"], entry["crc32"]))
        if not same(load(path), doc["ranks"][r]) or not same(entry["owns"], doc["ranks"][r]["owns"]):
            raise Failure("%s differs from ranks[%d]" % (want_name, r))


def runtime_check(runner, path, doc):
    """pipeline-run --check on a program file or directory."""
    env = dict(os.environ, OMPI_MCA_ess_singleton_isolated="1")
    p = subprocess.run([runner, "--check", path], capture_output=True, text=True, env=env)
    want = "OK: %d ranks, %d stages, %d microbatches" % (
        doc["workers"], doc["stages"], doc["microbatches"])
    if p.returncode != 0 or want not in p.stdout:
        raise Failure("pipeline-run --check %s: %s" % (path, (p.stdout + p.stderr).strip()[-800:]))


def check(compiler, spec, options, tmp, runner=None):
    if options is None:
        m = re.search(r"^// lower-options: (.*)$", open(spec).read(), re.M)
        options = m.group(1).strip() if m else ""
    single = os.path.join(tmp, "program.json")
    compile_(compiler, spec, options, single)
    text = open(single, "rb").read()
    doc = json.loads(text)
    through = os.path.join(tmp, "through-ir.json")
    compile_(compiler, spec, options, through, "--through-rank-ir")
    if open(through, "rb").read() != text:
        raise Failure("the program written from the plan differs from the one "
                      "written through the rank IR")
    cbor = os.path.join(tmp, "program.cbor")
    compile_(compiler, spec, options, cbor, "--encoding=cbor")
    if not same(decode_cbor(open(cbor, "rb").read()), doc):
        raise Failure("the CBOR document differs from the JSON one")
    if runner:
        runtime_check(runner, cbor, doc)
    load_json = lambda p: json.load(open(p))
    load_cbor = lambda p: decode_cbor(open(p, "rb").read())
    for encoding, ext, load in (("json", ".json", load_json), ("cbor", ".cbor", load_cbor)):
        directory = os.path.join(tmp, "ranks-" + encoding)
        compile_(compiler, spec, options, directory, "--layout=per-rank",
                 "--encoding=" + encoding)
        check_per_rank(directory, doc, ext, load)
        if runner:
            runtime_check(runner, directory, doc)
    ops = sum(len(r["ops"]) for r in doc["ranks"])
    return "%d ranks, %d ops: plan = rank IR, per-rank and CBOR equal%s" % (
        len(doc["ranks"]), ops, ", pipeline-run --check: OK" if runner else "")


def main(argv):
    compiler, options, runner, specs = argv[0], None, None, []
    args = argv[1:]
    while args:
        arg = args.pop(0)
        if arg.startswith("--lower-options="):
            options = arg.split("=", 1)[1]
        elif arg == "--check":
            runner = args.pop(0)
        else:
            specs.append(arg)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            try:
                print("%s: %s" % (os.path.basename(spec),
                                  check(compiler, spec, options, tmp, runner)))
            except Failure as e:
                failed += 1
                print("FAIL: %s: %s" % (spec, e))
    print("%d specs, %d failed" % (len(specs), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
