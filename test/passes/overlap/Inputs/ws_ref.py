"""ws_ref.py DIR W: every rank's @A_full (bf16, DIR/A.rankR.npy) is the ranks' own chunks of
their inputs DIR/aR.npy (rounded to bf16), and C.rankR = A_full B^T (B from DIR/B.rank0.npy)."""
import sys

import numpy as np


def bf16(x):
    """The interpreter writes bf16 as a structured array of uint16 ('bf16')."""
    if x.dtype.names:
        return (x[x.dtype.names[0]].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def main():
    d, world = sys.argv[1], int(sys.argv[2])
    a = [bf16(np.load("%s/A.rank%d.npy" % (d, r))) for r in range(world)]
    b = bf16(np.load("%s/B.rank0.npy" % d))
    rows = a[0].shape[0] // world
    bad = 0
    for r in range(world):
        own = np.load("%s/a%d.npy" % (d, r))[r * rows:(r + 1) * rows].astype(np.float64)
        for q in range(world):
            bad += not np.abs(a[q][r * rows:(r + 1) * rows] - own).max() <= 0.01 * np.abs(own).max()
        c = np.load("%s/C.rank%d.npy" % (d, r)).astype(np.float64)
        ref = a[r] @ b.T
        err = np.abs(c - ref).max()
        print("rank %d: C max error %.3g" % (r, err))
        bad += not err <= 1e-4 * max(1.0, np.abs(ref).max())
    print("PASS" if not bad else "FAIL")
    return 1 if bad else 0


sys.exit(main())
