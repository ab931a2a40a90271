"""Runs a gemm-shaped kernel in the interpreter as written and after `pipeline{stages=N}`, over
many schedules, and compares the outputs element for element (ave-interp-ref same). Also checks
that check-invariants proves the pipelined kernel. Prints one line per case for FileCheck.

  agree.py matrix WORKDIR            the fixed cases: bf16 gemm with and without transpose_b,
                                     M, N, K ragged, K < tile, K = 0, 2, 3 and 4 stages
                                     [SCHEDULES: of the pipelined kernel, default 50]
  agree.py fuzz WORKDIR SEED COUNT   random tile sizes, stages, trip counts and step/lower bound
"""
import os
import random
import subprocess
import sys

KERNEL = """ave.kernel @g(%A: !ave.tensor<?x?xbf16, global, [?, 1]>, %B: !ave.tensor<?x?xbf16, global, [?, 1]>,
             %C: !ave.tensor<?x?xf32, global, [?, 1]>, %K: index) {{threads = {threads}}} {{
  %pm = ave.program_id dim(0) : index
  %pn = ave.program_id dim(1) : index
  %nk = ave.cdiv %K, {bk} : index
  %z = ave.zeros : !ave.tile<{bm}x{bn}xf32, reg>
  %acc = ave.for %k = {lb} to %nk + {lb} step {step} iter_args(%c = %z) -> (!ave.tile<{bm}x{bn}xf32, reg>) {{stages = 2}} {{
    %a = ave.load %A[%pm * {bm}, (%k - {lb}) * {bk}] : !ave.tile<{bm}x{bk}xbf16, reg>
    %b = ave.load %B[{bcoord}] : !ave.tile<{btile}xbf16, reg>
{viareg}    %d = ave.mma {aop}, %b, %c{tb} : !ave.tile<{bm}x{bn}xf32, reg>
    ave.yield %d : !ave.tile<{bm}x{bn}xf32, reg>
  }}
  ave.store %acc into(%C[%pm * {bm}, %pn * {bn}])
  ave.return
}}
"""


def kernel(bm, bn, bk, trans, lb=0, step=1, threads=128, viareg=False):
    # viareg: A also goes through an elementwise op (exact: doubling), so the pass reads it back
    # with ave.smem.load instead of handing the ring slot to the MMA.
    # With step s the loop runs ceil(nk / s) times and reads every s-th K tile: the reference is
    # the same kernel as written, so any step is a valid test of the transformation.
    if trans:
        bcoord, btile = "%%pn * %d, (%%k - %d) * %d" % (bn, lb, bk), "%dx%d" % (bn, bk)
    else:
        bcoord, btile = "(%%k - %d) * %d, %%pn * %d" % (lb, bk, bn), "%dx%d" % (bk, bn)
    vr = "    %%a2 = ave.add %%a, %%a : !ave.tile<%dx%dxbf16, reg>\n" % (bm, bk) if viareg else ""
    return KERNEL.format(bm=bm, bn=bn, bk=bk, lb=lb, step=step, bcoord=bcoord, btile=btile,
                         viareg=vr, aop="%a2" if viareg else "%a",
                         tb=" transpose_b" if trans else "", threads=threads)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def case(work, name, src, stages, m, n, k, bm, bn, trans, schedules, seed=1):
    orig = os.path.join(work, name + ".ave")
    piped = os.path.join(work, name + ".p.ave")
    with open(orig, "w") as f:
        f.write(src)
    rc, out = run(["ave-opt", orig, "--passes=pipeline{stages=%d}" % stages, "-o", piped])
    text = open(piped).read() if rc == 0 else ""
    if rc or "ave.copy.async" not in text:
        return "FAIL %s: pipeline did not apply: %s" % (name, out.strip())
    rc, out = run(["ave-opt", piped, "--passes=check-invariants", "-o", os.devnull])
    if rc:
        return "FAIL %s: check-invariants: %s" % (name, out.strip())
    b = "%dx%d" % (n, k) if trans else "%dx%d" % (k, n)
    grid = "%d,%d" % (max(1, -(-m // bm)), max(1, -(-n // bn)))
    outs = []
    for tag, f, sch in (("orig", orig, 1), ("pipe", piped, schedules)):
        c = os.path.join(work, "%s.%s.C.npy" % (name, tag))
        rc, out = run(["ave", "run", f, "--kernel=@g", "--grid=" + grid,
                       "--arg", "A=rand:%dx%d:bf16:%d" % (m, k, seed),
                       "--arg", "B=rand:%s:bf16:%d" % (b, seed + 1),
                       "--arg", "C=zeros:%dx%d:f32" % (m, n), "--arg", "K=%d" % k,
                       "--out", "C=" + c, "--schedules=%d" % sch])
        if rc:
            return "FAIL %s (%s): %s" % (name, tag, out.strip())
        outs.append(c)
    rc, out = run(["ave-interp-ref", "same", outs[0], outs[1]])
    if rc or "max abs err 0," not in out or "PASS" not in out:
        return "FAIL %s: outputs differ: %s" % (name, out.strip())
    return "ok %s" % name


def matrix(work, schedules=50):
    shapes = [("ragged", 50, 40, 37), ("ksmall", 40, 33, 10), ("kzero", 33, 40, 0),
              ("whole", 64, 64, 48)]
    for trans in (True, False):
        for stages in (2, 3, 4):
            for tag, m, n, k in shapes:
                name = "%s_s%d_%s" % ("nt" if trans else "nn", stages, tag)
                # nt: both operands straight from the rings; nn: A through registers
                print(case(work, name, kernel(32, 32, 16, trans, viareg=not trans), stages, m, n,
                           k, 32, 32, trans, schedules))
                sys.stdout.flush()


def fuzz(work, seed, count):
    r = random.Random(seed)
    for i in range(count):
        bm, bn, bk = r.choice([16, 32]), r.choice([16, 32]), r.choice([8, 16, 32])
        trans = r.random() < 0.5
        stages = r.randint(2, 5)
        lb, step = r.choice([0, 0, 3]), r.choice([1, 1, 2])
        viareg = r.random() < 0.5
        k = r.choice([0, r.randint(1, bk), r.randint(1, 6 * bk)])
        m, n = r.randint(1, 2 * bm), r.randint(1, 2 * bn)
        name = "fz%d_%d" % (seed, i)
        res = case(work, name, kernel(bm, bn, bk, trans, lb, step, 64, viareg), stages, m, n, k,
                   bm, bn, trans, 8, seed=i + 1)
        print("%s (bm=%d bn=%d bk=%d trans=%d viareg=%d stages=%d lb=%d step=%d m=%d n=%d k=%d)" %
              (res, bm, bn, bk, trans, viareg, stages, lb, step, m, n, k))
        sys.stdout.flush()


if __name__ == "__main__":
    os.makedirs(sys.argv[2], exist_ok=True)
    if sys.argv[1] == "matrix":
        matrix(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 50)
    else:
        fuzz(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
