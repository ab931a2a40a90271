"""Generated gemm kernels through warp-specialize: random tile (M 64 or 128, N 16 to 128, K 16 to
64), stages 2 to 5, transpose_b or not, lower bound 0 or 3, step 1 or 2, consumers 1 or 2,
inflight 0 or 1, with or without an epilogue (scale by a scalar, convert to f16), with or
without the general form's shapes (an elementwise op after the MMA, C loaded as the start), ragged
M, N, K (K from 0 to 6 tiles), persistent on 1 to 3 CTAs or not (the roles must then walk the
tiles themselves, with either inflight), and persistent ones in ping-pong (mode=pingpong: two
consumers on alternate tiles, a ring each) or cooperative. Each specialized kernel must prove (the pass checks it; ave check
again), agree with the kernel as written in the interpreter element for element over 8
schedules, and, with --compile, compile for sm_90a with no spill and no ptxas diagnostic.
Prints one line per case for FileCheck.

  ws_fuzz.py WORKDIR SEED COUNT [--compile]
"""
import json
import os
import random
import subprocess
import sys

KERNEL = """ave.kernel @g(%A: !ave.tensor<?x?xbf16, global, [?, 1]>, %B: !ave.tensor<?x?xbf16, global, [?, 1]>,
             %C: !ave.tensor<?x?x{ct}, global, [?, 1]>, %K: index) {{threads = {threads}{pers}}} {{
  %pm = ave.program_id dim(0) : index
  %pn = ave.program_id dim(1) : index
  %nk = ave.cdiv %K, {bk} : index
  %two = ave.const 0.5 : f32
{init}
  %acc = ave.for %k = {lb} to %nk + {lb} step {step} iter_args(%c = %z) -> (!ave.tile<{bm}x{bn}xf32, reg>) {{stages = {stages}}} {{
    %a = ave.load %A[%pm * {bm}, (%k - {lb}) * {bk}] : !ave.tile<{bm}x{bk}xbf16, reg>
    %b = ave.load %B[{bcoord}] : !ave.tile<{btile}xbf16, reg>
    %d = ave.mma %a, %b, %c{tb} : !ave.tile<{bm}x{bn}xf32, reg>
{bodyew}    ave.yield {yv} : !ave.tile<{bm}x{bn}xf32, reg>
  }}
{epi}  ave.store {out} into(%C[%pm * {bm}, %pn * {bn}])
  ave.return
}}
"""

EPI = """  %s = ave.mul %acc, %two : !ave.tile<{bm}x{bn}xf32, reg>
  %h = ave.cvt %s : !ave.tile<{bm}x{bn}xf16, reg>
"""


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def draw_loop(r):
    """The tile, transpose, stages, lower bound and step of a case (also test/sim's generator)."""
    bm = r.choice([64, 128])
    bn = r.choice([16, 32, 64, 128])
    bk = r.choice([16, 32, 64])
    trans = r.random() < 0.5
    stages = r.randint(2, 5)
    lb, step = r.choice([0, 0, 3]), r.choice([1, 1, 2])
    return bm, bn, bk, trans, stages, lb, step


def case(work, name, r, compile_too):
    bm, bn, bk, trans, stages, lb, step = draw_loop(r)
    cons = r.choice([1, 2]) if bm == 128 else 1
    inflight = r.choice([0, 1])
    epi = r.random() < 0.4
    # The general form (the body as written on each consumer's rows): an elementwise op after
    # the MMA, and the accumulator started from a loaded tile instead of zeros.
    bodyew = inflight == 0 and r.random() < 0.3
    warm = inflight == 0 and not epi and r.random() < 0.3
    k = r.choice([0, r.randint(1, bk), r.randint(1, 6 * bk)])
    m, n = r.randint(1, 2 * bm), r.randint(1, 2 * bn)
    persist = r.choice([0, 0, 1, 2, 3])
    pingpong = persist > 0 and r.random() < 0.4
    desc = "bm=%d bn=%d bk=%d trans=%d stages=%d lb=%d step=%d consumers=%d inflight=%d epi=%d " \
           "bodyew=%d warm=%d m=%d n=%d k=%d persistent=%d pingpong=%d" % (
               bm, bn, bk, trans, stages, lb, step, cons, inflight, epi, bodyew, warm, m, n, k,
               persist, pingpong)
    if trans:
        bcoord, btile = "%%pn * %d, (%%k - %d) * %d" % (bn, lb, bk), "%dx%d" % (bn, bk)
    else:
        bcoord, btile = "(%%k - %d) * %d, %%pn * %d" % (lb, bk, bn), "%dx%d" % (bk, bn)
    src = KERNEL.format(bm=bm, bn=bn, bk=bk, lb=lb, step=step, stages=stages, bcoord=bcoord,
                        btile=btile, tb=" transpose_b" if trans else "", threads=128 * cons,
                        pers=", persistent = %d" % persist if persist else "",
                        ct="f16" if epi else "f32", epi=EPI.format(bm=bm, bn=bn) if epi else "",
                        out="%h" if epi else "%acc",
                        bodyew="    %%e = ave.mul %%d, %%two : !ave.tile<%dx%dxf32, reg>\n" %
                        (bm, bn) if bodyew else "", yv="%e" if bodyew else "%d",
                        init=("  %%z = ave.load %%C[%%pm * %d, %%pn * %d] : !ave.tile<%dx%dxf32, reg>"
                              % (bm, bn, bm, bn)) if warm else
                        "  %%z = ave.zeros : !ave.tile<%dx%dxf32, reg>" % (bm, bn))
    orig = os.path.join(work, name + ".ave")
    ws = os.path.join(work, name + ".ws.ave")
    with open(orig, "w") as f:
        f.write(src)
    mode = "mode=pingpong" if pingpong else "consumers=%d" % cons
    rc, out = run(["ave-opt", orig, "--target=sm_90a", "-o", ws,
                   "--passes=warp-specialize{%s inflight=%d}" % (mode, inflight)])
    if rc or "ave.warp_specialize" not in open(ws).read():
        return "FAIL %s: warp-specialize did not apply: %s (%s)" % (name, out.strip(), desc)
    if persist and "ave.cta_id" not in open(ws).read():
        return "FAIL %s: the roles do not walk the tiles: %s (%s)" % (name, out.strip(), desc)
    if pingpong and "%pair" not in open(ws).read():
        return "FAIL %s: no ping-pong walk over pairs of tiles: %s (%s)" % (name, out.strip(),
                                                                           desc)
    rc, out = run(["ave", "check", ws])
    if rc:
        return "FAIL %s: ave check: %s (%s)" % (name, out.strip(), desc)
    b = "%dx%d" % (n, k) if trans else "%dx%d" % (k, n)
    grid = "%d,%d" % (max(1, -(-m // bm)), max(1, -(-n // bn)))
    outs = []
    for tag, f, sch in (("orig", orig, 1), ("ws", ws, 8)):
        c = os.path.join(work, "%s.%s.C.npy" % (name, tag))
        rc, out = run(["ave", "run", f, "--kernel=@g", "--grid=" + grid,
                       "--arg", "A=rand:%dx%d:bf16:%d" % (m, k, 1),
                       "--arg", "B=rand:%s:bf16:%d" % (b, 2),
                       "--arg", "C=%s:%dx%d:%s" % ("rand" if warm else "zeros", m, n,
                                                   "f16" if epi else "f32") +
                       (":3" if warm else ""),
                       "--arg", "K=%d" % k, "--out", "C=" + c, "--schedules=%d" % sch])
        if rc:
            return "FAIL %s (%s): %s (%s)" % (name, tag, out.strip(), desc)
        outs.append(c)
    if open(outs[0], "rb").read() != open(outs[1], "rb").read():
        return "FAIL %s: outputs differ (%s)" % (name, desc)
    if compile_too:
        meta = os.path.join(work, name + ".json")
        rc, out = run(["ave", "compile", ws, "--target=sm_90a", "-o",
                       os.path.join(work, name + ".cubin"), "--emit-metadata=" + meta])
        if rc:
            return "FAIL %s: compile: %s (%s)" % (name, out.strip(), desc)
        kern = json.load(open(meta))["kernels"][0]
        if kern["spill_stores"] or kern["spill_loads"] or kern["diagnostics"]:
            return "FAIL %s: spills %d/%d, diagnostics %s (%s)" % (
                name, kern["spill_stores"], kern["spill_loads"], kern["diagnostics"], desc)
    return "ok %s (%s)" % (name, desc)


if __name__ == "__main__":
    work, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    r = random.Random(seed)
    for i in range(count):
        print(case(work, "ws%d_%d" % (seed, i), r, "--compile" in sys.argv[4:]))
        sys.stdout.flush()
