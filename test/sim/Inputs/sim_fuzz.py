"""Generated GEMM kernels (the shapes of test/passes/warp-specialize/Inputs/ws_fuzz.py: tile
M 64 or 128, N 16 to 128, K 16 to 64, stages 2 to 5, transpose_b or not, loop lower bound and
step, an epilogue that scales and converts to f16, an elementwise op after the MMA, C loaded as
the start) compiled by the default pipeline for each simulated target (so on sm_90a the
pipeline and warp-specialize passes apply) and run as the backend emits them, against the
interpreter running the kernel as written. Sizes are ragged against the tiles; row lengths are
multiples of 8 elements (a TMA copy needs rows of a multiple of 16 bytes). Results must be equal
bit for bit (both sum products in k order), except where an f16 epilogue's rounding may differ
by one unit. Prints one line per case and target for FileCheck.

  sim_fuzz.py WORKDIR SEED COUNT TARGET[,TARGET...]
"""
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "passes", "warp-specialize", "Inputs"))
import ws_fuzz  # noqa: E402  (its kernel template and loop shapes)

import numpy as np  # noqa: E402


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def load(path):
    a = np.load(path)
    if a.dtype.names:
        a = a[a.dtype.names[0]]
    return a


def case(work, name, r, targets):
    bm, bn, bk, trans, stages, lb, step = ws_fuzz.draw_loop(r)
    epi = r.random() < 0.4
    bodyew = r.random() < 0.3
    warm = not epi and r.random() < 0.3
    k = 8 * r.choice([0, r.randint(1, bk // 8), r.randint(1, 6 * bk // 8)])
    m, n = r.randint(1, 2 * bm), 8 * r.randint(1, 2 * bn // 8)
    desc = "bm=%d bn=%d bk=%d trans=%d stages=%d lb=%d step=%d epi=%d bodyew=%d warm=%d " \
           "m=%d n=%d k=%d" % (bm, bn, bk, trans, stages, lb, step, epi, bodyew, warm, m, n, k)
    if trans:
        bcoord, btile = "%%pn * %d, (%%k - %d) * %d" % (bn, lb, bk), "%dx%d" % (bn, bk)
    else:
        bcoord, btile = "(%%k - %d) * %d, %%pn * %d" % (lb, bk, bn), "%dx%d" % (bk, bn)
    src = ws_fuzz.KERNEL.format(
        bm=bm, bn=bn, bk=bk, lb=lb, step=step, stages=stages, bcoord=bcoord, btile=btile,
        tb=" transpose_b" if trans else "", threads=256 if bm == 128 else 128, pers="",
        ct="f16" if epi else "f32", epi=ws_fuzz.EPI.format(bm=bm, bn=bn) if epi else "",
        out="%h" if epi else "%acc",
        bodyew="    %%e = ave.mul %%d, %%two : !ave.tile<%dx%dxf32, reg>\n" % (bm, bn)
        if bodyew else "", yv="%e" if bodyew else "%d",
        init=("  %%z = ave.load %%C[%%pm * %d, %%pn * %d] : !ave.tile<%dx%dxf32, reg>"
              % (bm, bn, bm, bn)) if warm else
        "  %%z = ave.zeros : !ave.tile<%dx%dxf32, reg>" % (bm, bn))
    path = os.path.join(work, name + ".ave")
    with open(path, "w") as f:
        f.write(src)
    b = "%dx%d" % (n, k) if trans else "%dx%d" % (k, n)
    grid = "%d,%d" % (max(1, -(-m // bm)), max(1, -(-n // bn)))
    argv = ["--kernel=@g", "--grid=" + grid, "--arg", "A=rand:%dx%d:bf16:1" % (m, k),
            "--arg", "B=rand:%s:bf16:2" % b,
            "--arg", "C=%s:%dx%d:%s" % ("rand" if warm else "zeros", m, n,
                                        "f16" if epi else "f32") + (":3" if warm else ""),
            "--arg", "K=%d" % k]
    ref = os.path.join(work, name + ".host.npy")
    rc, out = run(["ave", "run", path] + argv + ["--out", "C=" + ref])
    if rc:
        return ["FAIL %s host: %s (%s)" % (name, out.strip(), desc)]
    lines = []
    for t in targets:
        got = os.path.join(work, "%s.%s.npy" % (name, t))
        rc, out = run(["ave", "run", path, "--device=sim-" + t] + argv + ["--out", "C=" + got])
        if rc:
            lines.append("FAIL %s %s: %s (%s)" % (name, t, out.strip(), desc))
            continue
        x, y = load(ref), load(got)
        if x.tobytes() == y.tobytes():
            lines.append("ok %s %s exact (%s)" % (name, t, desc))
            continue
        if epi:
            # f16: the epilogue's products may round differently only if the f32 sums differed
            d = np.abs(x.astype(np.float64) - y.astype(np.float64))
            ulp = np.abs(np.spacing(x.astype(np.float16))).astype(np.float64)
            if (d <= ulp).all():
                lines.append("ok %s %s within 1 ulp (%s)" % (name, t, desc))
                continue
        bad = np.argwhere(x != y)
        lines.append("FAIL %s %s: %d elements differ, first at %s (%s)"
                     % (name, t, len(bad), tuple(bad[0]), desc))
    return lines


if __name__ == "__main__":
    work, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    targets = sys.argv[4].split(",")
    os.makedirs(work, exist_ok=True)
    r = random.Random(seed)
    for i in range(count):
        for line in case(work, "sim%d_%d" % (seed, i), r, targets):
            print(line)
            sys.stdout.flush()
