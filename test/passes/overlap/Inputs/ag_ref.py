"""Reference for the overlap tests. `inputs W DIR`: per-rank @A_full inputs (rank r's own chunk,
rows [64 r, 64 r + 64), from seed r; the other rows are noise the gather must overwrite) and B.
`check W DIR`: every rank's @A_full after the run is the ranks' own chunks stacked, and every
rank's C is that gathered A times B^T."""
import sys

import numpy as np


def main():
    mode, world, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rows = 64 * world
    if mode == "inputs":
        for r in range(world):
            a = np.random.default_rng(100 + r).standard_normal((rows, 32)).astype(np.float32)
            np.save("%s/a%d.npy" % (d, r), a)
        np.save("%s/b.npy" % d, np.random.default_rng(7).standard_normal((32, 32)).astype(np.float32))
        return 0
    own = [np.load("%s/a%d.npy" % (d, r))[64 * r:64 * r + 64] for r in range(world)]
    full = np.concatenate(own).astype(np.float64)
    ref = full @ np.load("%s/b.npy" % d).astype(np.float64).T
    bad = 0
    for r in range(world):
        a = np.load("%s/A.rank%d.npy" % (d, r))
        c = np.load("%s/C.rank%d.npy" % (d, r)).astype(np.float64)
        ga = np.array_equal(a, full.astype(np.float32))
        err = np.abs(c - ref).max()
        print("rank %d: gathered %s, C max error %.3g" % (r, "yes" if ga else "NO", err))
        bad += (not ga) + (not err <= 1e-4 * max(1.0, np.abs(ref).max()))
    print("PASS" if not bad else "FAIL")
    return 1 if bad else 0


sys.exit(main())
