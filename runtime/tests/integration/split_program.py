#!/usr/bin/env python3
"""Writes a single-document program in the per-rank layout (a test helper;
docs/program-format.md, "Big programs"):

  split_program.py PROGRAM.json DIR [--encoding json|cbor]
                   [--index-encoding json|cbor] [--indefinite]
  split_program.py --restamp DIR


DIR/index.EXT holds the top-level fields but `ranks`, plus `layout`,
`rank_files` (rank, owns, file, bytes, crc32) and `collective_groups`;
DIR/rank-R.EXT holds exactly ranks[R]. CBOR (RFC 8949) is written by the
small encoder below (Python's standard library has none); --indefinite
writes its maps and arrays with indefinite lengths, as a streaming writer
may. --restamp rewrites the `bytes` and `crc32` of DIR/index.json after a
test edited rank files (so that the loader reaches their contents). Python 3
standard library only.
"""
import argparse
import json
import os
import struct
import sys
import zlib

COLLECTIVES = ("allreduce_grad", "reduce_grad", "tied_grad")


def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, n)
    raise ValueError("integer too large for CBOR: %d" % n)


def cbor(value, indefinite=False, out=None):
    out = bytearray() if out is None else out
    if value is None:
        out.append(0xF6)
    elif value is True or value is False:
        out.append(0xF5 if value else 0xF4)
    elif isinstance(value, int):
        out += cbor_head(0, value) if value >= 0 else cbor_head(1, -1 - value)
    elif isinstance(value, float):
        out += b"\xfb" + struct.pack(">d", value)
    elif isinstance(value, str):
        data = value.encode("utf-8")
        out += cbor_head(3, len(data)) + data
    elif isinstance(value, (list, dict)):
        major = 4 if isinstance(value, list) else 5
        out += bytes([major << 5 | 31]) if indefinite else cbor_head(major, len(value))
        for item in value.items() if isinstance(value, dict) else value:
            for part in item if isinstance(value, dict) else (item,):
                cbor(part, indefinite, out)
        if indefinite:
            out.append(0xFF)
    else:
        raise TypeError("no CBOR for %r" % (value,))
    return bytes(out)


def encode(value, encoding, indefinite):
    if encoding == "cbor":
        return cbor(value, indefinite)
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def collective_groups(ranks):
    """The distinct member lists of all collective ops, sorted."""
    groups = set()
    for rank in ranks:
        for op in rank["ops"]:
            if op.get("op") in COLLECTIVES:
                groups.add(tuple(op["members"]))
    return [list(g) for g in sorted(groups)]


def restamp(directory):
    path = os.path.join(directory, "index.json")
    with open(path, "rb") as f:
        doc = json.load(f)
    for entry in doc["rank_files"]:
        with open(os.path.join(directory, entry["file"]), "rb") as f:
            data = f.read()
        entry["bytes"] = len(data)
        entry["crc32"] = zlib.crc32(data)
    with open(path, "wb") as f:
        f.write(encode(doc, "json", False))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--restamp":
        return restamp(sys.argv[2])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("dir")
    parser.add_argument("--encoding", choices=("json", "cbor"), default="json")
    parser.add_argument("--index-encoding", choices=("json", "cbor"))
    parser.add_argument("--indefinite", action="store_true")
    args = parser.parse_args()
    with open(args.program, "rb") as f:
        doc = json.load(f)
    os.makedirs(args.dir, exist_ok=True)
    ranks = doc.pop("ranks")
    files = []
    for r, rank in enumerate(ranks):
        name = "rank-%d.%s" % (r, args.encoding)
        data = encode(rank, args.encoding, args.indefinite)
        with open(os.path.join(args.dir, name), "wb") as f:
            f.write(data)
        files.append({"rank": r, "owns": rank["owns"], "file": name,
                      "bytes": len(data), "crc32": zlib.crc32(data)})
    doc["layout"] = "per-rank"
    doc["rank_files"] = files
    doc["collective_groups"] = collective_groups(ranks)
    index = args.index_encoding or args.encoding
    with open(os.path.join(args.dir, "index." + index), "wb") as f:
        f.write(encode(doc, index, args.indefinite))
    return 0


if __name__ == "__main__":
    sys.exit(main())
