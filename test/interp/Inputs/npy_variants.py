#!/usr/bin/env python3
"""Writes .npy files that exercise the reader's version and error paths (numpy not needed):
v2.npy and v3.npy (valid, 4-byte header length), fortran.npy, big.npy (big-endian), v4.npy
(unknown version), v2-truncated.npy, v2-huge-header.npy, short-data.npy and no-shape.npy.
The valid files hold f32 [1, -2.5, 1000, 0.333333333]. usage: npy_variants.py OUTDIR"""
import os
import struct
import sys

VALUES = [1.0, -2.5, 1000.0, 0.333333333]


def npy(major, header, data=b"", hl=None):
    wide = major >= 2
    pre = 6 + 2 + (4 if wide else 2)
    text = header.encode("latin1")
    pad = (64 - (pre + len(text) + 1) % 64) % 64
    text += b" " * pad + b"\n"
    n = len(text) if hl is None else hl
    size = struct.pack("<I", n) if wide else struct.pack("<H", n)
    return b"\x93NUMPY" + bytes([major, 0]) + size + text + data


def main(out):
    f32 = struct.pack("<4f", *VALUES)
    plain = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
    files = {
        "v2.npy": npy(2, plain, f32),
        "v3.npy": npy(3, plain, f32),
        "fortran.npy": npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f32),
        "big.npy": npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
                       struct.pack(">4f", *VALUES)),
        "v4.npy": npy(4, plain, f32),
        "v2-truncated.npy": npy(2, plain, b"", hl=1000)[:40],
        "v2-huge-header.npy": npy(2, plain, f32, hl=1 << 25),
        "short-data.npy": npy(1, plain, f32[:8]),
        "no-shape.npy": npy(1, "{'descr': '<f4', 'fortran_order': False, }", f32),
    }
    os.makedirs(out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
