"""Reference for the reduce-scatter overlap tests. `inputs W DIR`: per-rank A (seed 200 + r), B
(seed 300 + r) and a noisy initial @P (the ring must overwrite what it reads). `check W DIR`:
rank r's rows [64 r, 64 r + 64) of @P after the run are the sum over ranks of A_s B_s^T there."""
import sys

import numpy as np


def main():
    mode, world, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rows = 64 * world
    if mode == "inputs":
        for r in range(world):
            rng = np.random.default_rng(200 + r)
            np.save("%s/a%d.npy" % (d, r), rng.standard_normal((rows, 32)).astype(np.float32))
            np.save("%s/b%d.npy" % (d, r), rng.standard_normal((48, 32)).astype(np.float32))
            np.save("%s/p%d.npy" % (d, r), rng.standard_normal((rows, 48)).astype(np.float32))
        return 0
    ref = sum(np.load("%s/a%d.npy" % (d, r)).astype(np.float64)
              @ np.load("%s/b%d.npy" % (d, r)).astype(np.float64).T for r in range(world))
    bad = 0
    for r in range(world):
        p = np.load("%s/P.rank%d.npy" % (d, r)).astype(np.float64)
        err = np.abs(p[64 * r:64 * r + 64] - ref[64 * r:64 * r + 64]).max()
        print("rank %d: chunk %d max error %.3g" % (r, r, err))
        bad += not err <= 1e-4 * max(1.0, np.abs(ref).max())
    print("PASS" if not bad else "FAIL")
    return 1 if bad else 0


sys.exit(main())
