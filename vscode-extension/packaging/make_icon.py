"""hexplore's icon (media/icon.png): a hexagon over an iteration-space lattice, 128x128 RGBA PNG, standard library
only. Run `python3 packaging/make_icon.py` after changing it."""
import math
import struct
import zlib
from pathlib import Path

N = 128
SS = 4  # supersampling per axis

def inside_hex(x, y, cx, cy, r):
    # flat-top hexagon
    dx, dy = abs(x - cx), abs(y - cy)
    return dy <= r * math.sqrt(3) / 2 and dx * math.sqrt(3) / 2 + dy / 2 <= r * math.sqrt(3) / 2

def sample(x, y):
    cx = cy = N / 2
    bg = (0, 0, 0, 0)
    if inside_hex(x, y, cx, cy, 62):
        if not inside_hex(x, y, cx, cy, 55):
            return (86, 182, 194, 255)  # rim
        col = (30, 40, 66, 255)
        # lattice points
        step = 14
        gx, gy = (x - cx) / step, (y - cy) / step
        rx, ry = round(gx), round(gy)
        d = math.hypot(gx - rx, gy - ry) * step
        if d < 3.2:
            # points of a triangle i <= j (a modeled domain) bright, others dim
            if rx >= ry - 0 and abs(rx) <= 3 and abs(ry) <= 3 and rx - ry <= 4:
                return (255, 196, 64, 255)
            return (92, 110, 150, 255)
        return col
    return bg

rows = []
for py in range(N):
    row = bytearray([0])
    for px in range(N):
        acc = [0, 0, 0, 0]
        for sy in range(SS):
            for sx in range(SS):
                c = sample(px + (sx + 0.5) / SS, py + (sy + 0.5) / SS)
                a = c[3]
                for k in range(3):
                    acc[k] += c[k] * a
                acc[3] += a
        a = acc[3]
        if a:
            row += bytes([round(acc[0] / a), round(acc[1] / a), round(acc[2] / a), round(a / SS / SS)])
        else:
            row += bytes([0, 0, 0, 0])
    rows.append(bytes(row))

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", N, N, 8, 6, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
(Path(__file__).resolve().parents[1] / "media" / "icon.png").write_bytes(png)
