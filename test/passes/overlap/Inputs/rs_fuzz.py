"""Generated local GEMM + reduce-scatter kernels through `overlap`, run on simulated ranks:
random world (2 to 8), tile rows T (16 or 32), tiles per chunk P (1 to 3), contraction K (16 or
32), columns N (16 to 48) stored either by a second program id in tiles of TN (16 or 32) at an
offset inside the tile, or at a constant column by a 1-D grid, the grid exactly world x P (wave
order) or one CTA more along the rows (program ids kept), the column grid exact or one over, 1
or 2 launches, a noisy initial buffer, and the schedule: the template or (2 in 5) a hand-written
rotation chunk((r + s w + s) mod W) peer((r + s) mod W), s = 1 or W - 1 (partials go to r - s).
Each kernel must prove (the pass checks it) and, over 3
seeded schedules, every rank r must end with the sum over the ranks of A_s B_s^T in its chunk
r. One line per case.

  rs_fuzz.py WORKDIR SEED COUNT
"""
import os
import sys

import numpy as np

from fuzz_main import main, run

KERNEL = """ave.module @m {{world = {W}}} {{
  ave.symm.alloc @X : !ave.tensor<{rows}x{N}xf32, symm>
  ave.symm.alloc @sig : !ave.tensor<{W}xi64, symm>
  ave.chunk @Xc(%c: index) region(@X[%c * {R} : {R}, 0 : {N}]) signal(@sig[%c])
  ave.chunk_schedule @s(%r: index, %w: index) for(@Xc) {sched}
  ave.kernel @k(%A: !ave.tensor<{rows}x{K}xf32, global>, %B: !ave.tensor<{N}x{K}xf32, global>)
      {{threads = 128, overlap = @s, overlap_operand = @X}} {{
    %pm = ave.program_id dim(0) : index
{pn}    %z = ave.zeros : !ave.tile<{T}x{bw}xf32, reg>
    %acc = ave.for %k = 0 to {nk} step 1 iter_args(%c = %z) -> (!ave.tile<{T}x{bw}xf32, reg>) {{
      %a = ave.load %A[%pm * {T}, %k * 16] : !ave.tile<{T}x16xf32, reg>
      %b = ave.load %B[{col}, %k * 16] : !ave.tile<{bw}x16xf32, reg>
      %d = ave.mma %a, %b, %c transpose_b : !ave.tile<{T}x{bw}xf32, reg>
      ave.yield %d : !ave.tile<{T}x{bw}xf32, reg>
    }}
    ave.store %acc into(@X[%pm * {T}, {col}])
    ave.return
  }}
}}
"""


def case(work, name, r):
    W = r.choice([2, 3, 4, 5, 8])
    T = r.choice([16, 32])
    P = r.randint(1, 3)
    K = r.choice([16, 32])
    N = r.choice([16, 24, 32, 48])
    two_d = r.random() < 0.6
    launches = r.choice([1, 1, 2])
    grid0 = W * P + r.choice([0, 0, 1])
    R = P * T
    rows = W * R
    if two_d:
        TN = r.choice([16, 32])
        bw = r.choice([w for w in (8, 16) if w <= TN])
        off = r.choice([0, TN - bw])
        col = "%%pn * %d + %d" % (TN, off) if off else "%%pn * %d" % TN
        nc = -(-N // TN)
        grid = "%d,%d" % (grid0, nc + r.choice([0, 0, 1]))
        cols = [(j * TN + off, min(j * TN + off + bw, N)) for j in range(nc)
                if j * TN + off < N]
    else:
        bw = r.choice([8, 16])
        off = r.choice([0, N - bw])  # a constant column: one tile, inside the buffer
        col = "%d" % off
        grid = "%d" % grid0
        cols = [(off, off + bw)]
    sched, sdesc = 'template("reduce_scatter.ring")', "ring"
    if r.random() < 0.4:
        st = r.choice([1, W - 1])  # the ring either way (overlap takes neighbours only)
        sched = "chunk((%%r + %d * %%w + %d) mod %d) peer((%%r + %d) mod %d)" % (st, st, W, st, W)
        sdesc = "stride %d" % st
    text = KERNEL.format(W=W, rows=rows, N=N, R=R, K=K, T=T, bw=bw, nk=K // 16, col=col, sched=sched,
                         pn="    %pn = ave.program_id dim(1) : index\n" if two_d else "")
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "k.ave")
    with open(src, "w") as f:
        f.write(text)
    rng = np.random.default_rng(r.randrange(1 << 30))
    ref = np.zeros((rows, N))
    for q in range(W):
        a = rng.standard_normal((rows, K)).astype(np.float32)
        b = rng.standard_normal((N, K)).astype(np.float32)
        np.save(os.path.join(d, "a%d.npy" % q), a)
        np.save(os.path.join(d, "b%d.npy" % q), b)
        np.save(os.path.join(d, "x%d.npy" % q), rng.standard_normal((rows, N)).astype(np.float32))
        ref += a.astype(np.float64) @ b.astype(np.float64).T
    desc = "W=%d T=%d P=%d K=%d N=%d col=%s grid=%s launches=%d %s" % (W, T, P, K, N, col, grid,
                                                                       launches, sdesc)
    rc, out = run(["ave", "run", src, "--world=%d" % W, "--grid=" + grid,
                   "--arg", "A=" + os.path.join(d, "a{r}.npy"),
                   "--arg", "B=" + os.path.join(d, "b{r}.npy"),
                   "--arg", "@X=" + os.path.join(d, "x{r}.npy"), "--schedules=3",
                   "--seed=%d" % r.randrange(1000), "--launches=%d" % launches,
                   "--out", "@X=" + os.path.join(d, "X.npy")])
    if rc != 0 or "remark: overlap:" not in out:
        return "FAIL %s (%s): ave run: %s" % (name, desc, out[-2000:])
    scale = max(1.0, np.abs(ref).max())
    for q in range(W):
        got = np.load(os.path.join(d, "X.rank%d.npy" % q)).astype(np.float64)
        for lo, hi in cols:
            err = np.abs(got[q * R:(q + 1) * R, lo:hi] - ref[q * R:(q + 1) * R, lo:hi]).max()
            if not err <= 1e-4 * scale:
                return "FAIL %s (%s): rank %d's chunk is off by %g in columns %d:%d" % (
                    name, desc, q, err, lo, hi)
    return "ok overlap %s (%s)" % (name, desc)


sys.exit(main(case))
