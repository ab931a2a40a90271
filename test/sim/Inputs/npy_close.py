"""Compares two .npy files the way the simulator tests need: bit-exact, or within a tolerance
(relative to 1 + |reference|) where accumulation order or approximate instructions differ.
bf16 arrays (ave writes them as a record of uint16) are compared as their values.
usage: npy_close.py REF GOT [TOL]  (TOL 0: exact). Prints one line; exit 1 when they differ."""
import sys

import numpy as np


def load(path):
    a = np.load(path)
    if a.dtype.names:
        a = a[a.dtype.names[0]]
        if a.dtype == np.uint16:  # bf16 bits
            a = (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


ref, got = load(sys.argv[1]), load(sys.argv[2])
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
if ref.shape != got.shape:
    print("shapes differ: %s vs %s" % (ref.shape, got.shape))
    sys.exit(1)
nan = np.isnan(ref) != np.isnan(got)
diff = np.where(np.isnan(ref) & np.isnan(got), 0.0, np.abs(ref - got))
bad = nan | (diff > tol * (1.0 + np.abs(ref))) if tol else nan | (diff != 0)
if bad.any():
    i = np.unravel_index(np.argmax(bad), bad.shape)
    print("DIFFER: %d of %d elements, first at %s: %r vs %r" %
          (bad.sum(), bad.size, tuple(int(x) for x in i), ref[i], got[i]))
    sys.exit(1)
print("MATCH: %d elements%s" % (ref.size, " exactly" if not tol else " within %g" % tol))
