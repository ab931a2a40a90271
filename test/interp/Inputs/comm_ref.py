"""NumPy references for the multi-rank tests: `ag W PREFIX` checks each rank's C against the GEMM
of the gathered A (A_full = the ranks' chunks stacked); `rs W PREFIX` checks each rank's reduced
block against the sum over ranks of their partial products. Files are PREFIX.X.rankR.npy."""
import sys

import numpy as np


def load(prefix, name, r):
    return np.load("%s.%s.rank%d.npy" % (prefix, name, r)).astype(np.float64)


def main():
    mode, world, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    bad = 0
    if mode == "ag":
        a_full = np.concatenate([load(prefix, "A", r) for r in range(world)])
        ref = a_full @ load(prefix, "B", 0).T
        for r in range(world):
            c = load(prefix, "C", r)
            err = np.abs(c - ref).max()
            print("rank %d: C %dx%d max error %.3g" % (r, c.shape[0], c.shape[1], err))
            bad += not err <= 1e-4 * max(1.0, np.abs(ref).max())
    elif mode == "rs":
        # rank r holds A_r (M x K) and B_r (N x K); the sum over r of A_r B_r^T is scattered in
        # blocks of M / world rows: rank r receives block r
        total = sum(load(prefix, "A", r) @ load(prefix, "B", r).T for r in range(world))
        rows = total.shape[0] // world
        for r in range(world):
            out = load(prefix, "Out", r)
            err = np.abs(out - total[r * rows:(r + 1) * rows]).max()
            print("rank %d: block %dx%d max error %.3g" % (r, out.shape[0], out.shape[1], err))
            bad += not err <= 1e-4 * max(1.0, np.abs(total).max())
    print("FAIL" if bad else "PASS")
    return 1 if bad else 0


sys.exit(main())
