#!/usr/bin/python3
"""png_check.py PNG x0 y0 x1 y1 [...]: decodes a PNG (8-bit RGB or RGBA, as Chromium writes
them) with zlib alone and prints, for the whole image and then for each box, the fraction of
non-white pixels and the number of pixels near dpsynth's report colours: real (#1f77b4),
synthetic (#ff7f0e) and the heat map's reds."""
import struct, sys, zlib


def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), "unexpected PNG format"
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def near(px, rgb, tol=40):
    return all(abs(px[i] - rgb[i]) <= tol for i in range(3))


def stats(w, h, bpp, rows, x0, y0, x1, y1):
    ink = blue = orange = red = total = 0
    for y in range(max(0, y0), min(h, y1), 2):
        for x in range(max(0, x0), min(w, x1), 2):
            px = rows[y][x * bpp:x * bpp + 3]
            total += 1
            ink += min(px) < 245
            blue += near(px, (0x1f, 0x77, 0xb4))
            orange += near(px, (0xff, 0x7f, 0x0e))
            red += px[0] > 200 and px[1] < 150 and abs(px[1] - px[2]) < 12
    return "%.4f %d %d %d" % (ink / max(total, 1), blue, orange, red)


w, h, bpp, rows = decode(sys.argv[1])
print("%d %d %s" % (w, h, stats(w, h, bpp, rows, 0, 0, w, h)))
args = [int(a) for a in sys.argv[2:]]
for i in range(0, len(args), 4):
    print(stats(w, h, bpp, rows, *args[i:i + 4]))
