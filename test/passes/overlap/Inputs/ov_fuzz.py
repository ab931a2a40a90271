"""Generated local all-gather kernels through `overlap`, run on simulated ranks: random world (2
to 8), template (ring, swizzle1d), tile rows T (16 or 32), tiles per chunk P (1 to 3), one tile
or two half tiles per CTA (rows %p * T and %p * T + T / 2), columns of the chunk (16 to 48,
offset 0 or 16), a 1-D or 2-D grid (the second dimension splits N), the grid exactly world x P
(wave order) or one CTA fewer or more along the rows (program ids kept), 1 or 2 launches. Each
kernel must prove (the pass checks it) and, over 3 seeded schedules, every rank must end with
the gathered buffer and C = (gathered A) B^T on the rows its CTAs computed. One line per case.

  ov_fuzz.py WORKDIR SEED COUNT
"""
import os
import sys

import numpy as np

from fuzz_main import main, run

KERNEL = """ave.module @m {{world = {W}}} {{
  ave.symm.alloc @X : !ave.tensor<{rows}x{cols}xf32, symm>
  ave.symm.alloc @sig : !ave.tensor<{W}xi64, symm>
  ave.chunk @Xc(%c: index) region(@X[%c * {R} : {R}, {lo} : {K}]) signal(@sig[%c])
  ave.chunk_schedule @s(%r: index, %w: index) for(@Xc) template("all_gather.{tmpl}")
  ave.kernel @k(%B: !ave.tensor<{N}x{K}xf32, global>, %C: !ave.tensor<{rows}x{N}xf32, global>)
      {{threads = 128, overlap = @s, overlap_operand = @X}} {{
    %pm = ave.program_id dim(0) : index
{pn}    %z = ave.zeros : !ave.tile<{th}x{bn}xf32, reg>
    %acc = ave.for %k = 0 to {nk} step 1 iter_args(%c = %z) -> (!ave.tile<{th}x{bn}xf32, reg>) {{
{loads}      %b = ave.load %B[{bcol}, %k * 16] : !ave.tile<{bn}x16xf32, reg>
{mmas}      ave.yield {yv} : !ave.tile<{th}x{bn}xf32, reg>
    }}
    ave.store %acc into(%C[%pm * {T}, {bcol}])
{store2}    ave.return
  }}
}}
"""


def case(work, name, r):
    W = r.choice([2, 3, 4, 5, 8])
    tmpl = r.choice(["ring", "swizzle1d"])
    T = r.choice([16, 32])
    P = r.randint(1, 3)
    halves = r.random() < 0.4
    K = r.choice([16, 32, 48])
    lo = r.choice([0, 16])
    two_d = r.random() < 0.4
    N = r.choice([16, 32])
    bn = N // 2 if two_d else N
    grid0 = W * P + r.choice([0, 0, 0, -1, 1])
    launches = r.choice([1, 1, 2])
    R = P * T
    rows, cols = W * R, lo + K
    th = T // 2 if halves else T
    if halves:
        loads = ("      %a = ave.load @X[%pm * {T}, {lo} + %k * 16] : !ave.tile<{th}x16xf32, reg>\n"
                 "      %a2 = ave.load @X[%pm * {T} + {th}, {lo} + %k * 16] : !ave.tile<{th}x16xf32, reg>\n")
        mmas = ("      %d = ave.mma %a, %b, %c transpose_b : !ave.tile<{th}x{bn}xf32, reg>\n"
                "      %d2 = ave.mma %a2, %b, %c2 transpose_b : !ave.tile<{th}x{bn}xf32, reg>\n")
    else:
        loads = "      %a = ave.load @X[%pm * {T}, {lo} + %k * 16] : !ave.tile<{th}x16xf32, reg>\n"
        mmas = "      %d = ave.mma %a, %b, %c transpose_b : !ave.tile<{th}x{bn}xf32, reg>\n"
    bcol = "%pn * {bn}".format(bn=bn) if two_d else "0"
    text = KERNEL.format(W=W, rows=rows, cols=cols, R=R, lo=lo, K=K, tmpl=tmpl, N=N, T=T, th=th,
                         bn=bn, nk=K // 16, bcol=bcol,
                         pn="    %pn = ave.program_id dim(1) : index\n" if two_d else "",
                         loads=loads.format(T=T, th=th, lo=lo),
                         mmas=mmas.format(th=th, bn=bn),
                         yv="%d, %d2" if halves else "%d",
                         store2="")
    if halves:
        # two accumulators: carried together, the second stored below the first
        text = text.replace("iter_args(%c = %z) -> (!ave.tile<{th}x{bn}xf32, reg>)".format(th=th, bn=bn),
                            "iter_args(%c = %z, %c2 = %z) -> (!ave.tile<{th}x{bn}xf32, reg>, !ave.tile<{th}x{bn}xf32, reg>)".format(th=th, bn=bn))
        text = text.replace("ave.yield %d, %d2 : !ave.tile<{th}x{bn}xf32, reg>".format(th=th, bn=bn),
                            "ave.yield %d, %d2 : !ave.tile<{th}x{bn}xf32, reg>, !ave.tile<{th}x{bn}xf32, reg>".format(th=th, bn=bn))
        text = text.replace("    %acc = ave.for", "    %acc, %acc2 = ave.for")
        text = text.replace("    ave.return", "    ave.store %acc2 into(%C[%pm * {T} + {th}, {bcol}])\n    ave.return".format(T=T, th=th, bcol=bcol))
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "k.ave")
    with open(src, "w") as f:
        f.write(text)
    rng = np.random.default_rng(r.randrange(1 << 30))
    for q in range(W):
        np.save(os.path.join(d, "x%d.npy" % q), rng.standard_normal((rows, cols)).astype(np.float32))
    b = rng.standard_normal((N, K)).astype(np.float32)
    np.save(os.path.join(d, "b.npy"), b)
    grid = "%d,2" % grid0 if two_d else "%d" % grid0
    desc = ("W=%d %s T=%d P=%d halves=%d K=%d lo=%d grid=%s launches=%d"
            % (W, tmpl, T, P, halves, K, lo, grid, launches))
    rc, out = run(["ave", "run", src, "--world=%d" % W, "--grid=" + grid,
                   "--arg", "@X=" + os.path.join(d, "x{r}.npy"), "--arg", "B=" + os.path.join(d, "b.npy"),
                   "--arg", "C=zeros:%dx%d:f32" % (rows, N), "--schedules=3", "--seed=%d" % r.randrange(1000),
                   "--launches=%d" % launches,
                   "--out", "@X=" + os.path.join(d, "X.npy"), "--out", "C=" + os.path.join(d, "C.npy")])
    if rc != 0 or "remark: overlap:" not in out:
        return "FAIL %s (%s): ave run: %s" % (name, desc, out[-2000:])
    xs = [np.load(os.path.join(d, "x%d.npy" % q)) for q in range(W)]
    full = np.concatenate([xs[q][q * R:(q + 1) * R] for q in range(W)])
    ref = full[:, lo:].astype(np.float64) @ b.astype(np.float64).T
    done = min(grid0, W * P) * T  # rows the grid's CTAs computed (program ids kept when not W x P)
    for q in range(W):
        got = np.load(os.path.join(d, "X.rank%d.npy" % q) if W > 1 else os.path.join(d, "X.npy"))
        if not np.array_equal(got[:, lo:], full[:, lo:]):
            return "FAIL %s (%s): rank %d's buffer is not the gathered one" % (name, desc, q)
        c = np.load(os.path.join(d, "C.rank%d.npy" % q)).astype(np.float64)
        err = np.abs(c[:done] - ref[:done]).max()
        if not err <= 1e-4 * max(1.0, np.abs(ref).max()) or np.abs(c[done:]).max(initial=0) != 0:
            return "FAIL %s (%s): rank %d's C is off by %g" % (name, desc, q, err)
    return "ok overlap %s (%s)" % (name, desc)


sys.exit(main(case))
