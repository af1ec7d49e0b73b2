#!/usr/bin/env python3
"""Compares the decoded pixels of PNG files in two folders (same relative paths), so charts from two
builds whose encoders compress differently can be checked for the same image.

    scripts/png_same_pixels.py DIR_A DIR_B

Prints one line per pair that differs in size, colour type or any pixel, then a count; exits 1 when
any differs. Pure Python (zlib): 8-bit, non-interlaced PNGs, as pcsim writes them.
"""
import pathlib
import struct
import sys
import zlib


def pixels(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0, (path, header)
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw, stride = zlib.decompress(idat), width * bpp
    out, prev = bytearray(), bytearray(stride)
    for row in range(height):
        f = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
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
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        out += line
        prev = line
    return (width, height, colour), bytes(out)


def main():
    a, b = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    files = sorted(p.relative_to(a) for p in a.rglob("*.png"))
    differ = 0
    for rel in files:
        if pixels(a / rel) != pixels(b / rel):
            differ += 1
            print(f"differs: {rel}")
    print(f"{len(files)} PNG pairs, {len(files) - differ} with identical pixels, {differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
