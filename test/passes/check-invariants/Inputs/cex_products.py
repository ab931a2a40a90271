"""Reads `ave check` output and checks that every counterexample's values agree with exact
arithmetic for the products and quotients the kernel computes from its arguments: %nk =
cdiv(%K, 64) and %tiles = cdiv(%M, 128) * cdiv(%N, 128) (Inputs/products_release_early.ave).
Prints one line per counterexample and PASS, or FAIL with the line."""
import re
import sys


def cdiv(a, b):
    return -((-a) // b)


seen = 0
for line in sys.stdin:
    if "counterexample:" not in line:
        continue
    v = dict(re.findall(r"(%\w+) = (-?\d+)", line.split("counterexample:", 1)[1]))
    v = {k: int(x) for k, x in v.items() if " in " not in k}
    want = {}
    if all(k in v for k in ("%M", "%N")):
        want["%tiles"] = cdiv(v["%M"], 128) * cdiv(v["%N"], 128)
    if "%K" in v:
        want["%nk"] = cdiv(v["%K"], 64)
    for k, w in want.items():
        if k in v and v[k] != w:
            print("FAIL: %s = %d, but exact arithmetic gives %d: %s" % (k, v[k], w, line.strip()))
            sys.exit(1)
    seen += 1
    print("consistent:", line.strip())
print("PASS" if seen else "FAIL: no counterexample")
sys.exit(0 if seen else 1)
