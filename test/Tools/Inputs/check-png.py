#!/usr/bin/env python3
"""Checks that a screenshot shows a picture, not a blank page: decodes the
PNG (standard library only: zlib and the five PNG filters) and requires a
share of non-white pixels and a number of distinct colours.

usage: check-png.py SHOT.png --min-ink FRACTION --min-colors N
"""
import argparse
import struct
import sys
import zlib

parser = argparse.ArgumentParser()
parser.add_argument("png")
parser.add_argument("--min-ink", type=float, required=True)
parser.add_argument("--min-colors", type=int, required=True)
args = parser.parse_args()

data = open(args.png, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{args.png}: not a PNG")
pos, idat, header = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        header = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, color_type, _, _, interlace = header
if depth != 8 or color_type not in (2, 6) or interlace:
    sys.exit(f"{args.png}: unsupported PNG (depth {depth}, type {color_type})")
bpp = 3 if color_type == 2 else 4
raw = zlib.decompress(idat)
stride = width * bpp
rows, prev = [], bytearray(stride)
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
            line[i] = (line[i] + pred) & 255
    rows.append(bytes(line))
    prev = line
ink, colors = 0, set()
for line in rows:
    for x in range(0, stride, bpp):
        rgb = line[x:x + 3]
        colors.add(rgb)
        if rgb != b"\xff\xff\xff":
            ink += 1
share = ink / (width * height)
print(f"{args.png}: {width}x{height}, {share:.1%} ink, {len(colors)} colours")
if share < args.min_ink:
    sys.exit(f"{args.png}: only {share:.2%} of the pixels are not white: blank?")
if len(colors) < args.min_colors:
    sys.exit(f"{args.png}: {len(colors)} colours, expected at least {args.min_colors}")
