"""Generated persistent warp-specialized GEMMs (a tile loop around the k-loop in every role) and
mutants of them, for check-invariants and the interpreter.

Each case draws: stages 2 to 8, 1 to 3 consumer replicas, the tile loop (grid-stride over
128-row... BM-row tiles, or a constant-step loop over the column tiles of the CTA's row panel),
BM 64 or 128 (split among the replicas), BN 16 to 64, BK 16 to 64, ragged M or N and K (K from
0 to 5 tiles). The correct kernel must prove (`ave check`, no unknown query) and its result
must equal the plain C GEMM (ave-interp-ref) after 4 interpreter schedules. Each mutant must be
rejected by `ave check` (the kind of rejection is printed: a counterexample, or "cannot check").

  tile_fuzz.py WORKDIR SEED COUNT

Prints one line per kernel for FileCheck: "ok tile N ..." / "rejected MUTANT ..." or FAIL.
"""
import os
import random
import subprocess
import sys

KERNEL = """ave.kernel @g(%A: !ave.tensor<?x?xbf16, global, [?, 1]>,
             %B: !ave.tensor<?x?xbf16, global, [?, 1]>,
             %C: !ave.tensor<?x?xf32, global, [?, 1]>,
             %K: index, %M: index, %T: index) {{threads = {threads}, target = "sm_90a"}} {{
  ave.tag.func @A(%m: index, %k: index)
  ave.tag.func @B(%n: index, %k: index)
  %sA    = ave.smem.alloc : !ave.ring<{S} x !ave.tile<{bm}x{bk}xbf16, smem>>
  %sB    = ave.smem.alloc : !ave.ring<{S} x !ave.tile<{bn}x{bk}xbf16, smem>>
  %full  = ave.mbar.alloc count(1) : !ave.mbar<{S}>
  %empty = ave.mbar.alloc count({C}) : !ave.mbar<{S}>
  %pm = ave.program_id dim(0) : index
  %np = ave.num_programs dim(0) : index
  %nt = ave.cdiv %M, {bm} : index
  %nk = ave.cdiv %K, {bk} : index
  ave.warp_specialize {{
    ave.role @load warps(4) {{
      %e = ave.for %tl = {loop} iter_args(%it0 = 0 : index) -> (index) {{
        %it1 = ave.for %k = 0 to %nk step 1 iter_args(%it = %it0 : index) -> (index) {{
          %s = ave.index %it mod {S}
          %ph = ave.index (%it floordiv {S} + 1) mod 2
          ave.mbar.wait %empty[%s] parity(%ph)
          ave.mbar.expect_tx %full[%s] bytes({bytes})
          ave.copy.async %A[{arow}, %k * {bk}] into(%sA[%s]) arrive(%full[%s]) tag(@A({mtile}, %k))
          ave.copy.async %B[{brow}, %k * {bk}] into(%sB[%s]) arrive(%full[%s]) tag(@B({ntile}, %k))
          %n = ave.index %it + 1
          ave.yield %n : index
        }}
        ave.yield %it1 : index
      }}
    }}
    ave.role @mma warps(4) replicate({C}) {{
      %wg = ave.replica_id : index
      %z  = ave.zeros : !ave.tile<{rm}x{bn}xf32, reg>
      %e = ave.for %tl = {loop} iter_args(%it0 = 0 : index) -> (index) {{
        %acc, %it1 = ave.for %k = 0 to %nk step 1 iter_args(%c = %z, %it = %it0 : index) -> (!ave.tile<{rm}x{bn}xf32, reg>, index) {{
          %s = ave.index %it mod {S}
          %ph = ave.index (%it floordiv {S}) mod 2
          ave.mbar.wait %full[%s] parity(%ph)
          ave.tag.assert holds(%sA[%s], @A({mtile}, %k))
          ave.tag.assert holds(%sB[%s], @B({ntile}, %k))
          %a = ave.slice %sA[%s] rows(%wg * {rm}, {rm}) : !ave.tile<{rm}x{bk}xbf16, smem>
          %t = ave.mma.async %a, %sB[%s], %c transpose_b : !ave.tile<{rm}x{bn}xf32, reg>
          %d = ave.mma.wait %t pending(0) : !ave.tile<{rm}x{bn}xf32, reg>
          ave.mbar.arrive %empty[%s] count(1)
          %n = ave.index %it + 1
          ave.yield %d, %n : !ave.tile<{rm}x{bn}xf32, reg>, index
        }}
        ave.store %acc into(%C[{arow} + %wg * {rm}, {brow}])
        ave.yield %it1 : index
      }}
    }}
  }}
  ave.return
}}
"""

# (name, old, new, which occurrence: None = every one). Each makes the kernel wrong.
MUTANTS = [
    ("reset-consumer", "iter_args(%c = %z, %it = %it0 : index)", "iter_args(%c = %z, %it = 0 : index)", None),
    ("reset-producer", "iter_args(%it = %it0 : index) -> (index) {{\n          %s", "iter_args(%it = 0 : index) -> (index) {{\n          %s", None),
    ("no-empty-wait", "          ave.mbar.wait %empty[%s] parity(%ph)\n", "", None),
    ("producer-parity", "%ph = ave.index (%it floordiv {S} + 1) mod 2", "%ph = ave.index (%it floordiv {S}) mod 2", None),
    ("consumer-parity", "%ph = ave.index (%it floordiv {S}) mod 2\n          ave.mbar.wait %full", "%ph = ave.index (%it floordiv {S} + 1) mod 2\n          ave.mbar.wait %full", None),
    ("wrong-tag", "tag(@A({mtile}, %k))", "tag(@A({mtile}, %k + 1))", None),
    ("empty-count", "count({C}) : !ave.mbar", "count({C1}) : !ave.mbar", None),
    ("consumer-step", "%n = ave.index %it + 1\n          ave.yield %d", "%n = ave.index %it + 2\n          ave.yield %d", None),
    ("release-before-wait", "          %d = ave.mma.wait %t pending(0) : !ave.tile<{rm}x{bn}xf32, reg>\n          ave.mbar.arrive %empty[%s] count(1)\n",
     "          ave.mbar.arrive %empty[%s] count(1)\n          %d = ave.mma.wait %t pending(0) : !ave.tile<{rm}x{bn}xf32, reg>\n", None),
]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def params(r):
    C = r.choice([1, 2, 3]) if r.random() < 0.8 else 1
    rm = 64 if C > 1 else r.choice([64, 128])  # wgmma: M a multiple of 64
    bm = rm * C
    bn = r.choice([16, 32, 64])
    bk = r.choice([16, 32, 64])
    S = r.randint(2, 8)
    while S > 2 and S * (bm + bn) * bk * 2 > 200 * 1024:  # the rings fit sm_90a's shared memory
        S -= 1
    gs = r.random() < 0.5
    kt = r.randint(0, 5)
    K = max(0, kt * bk - r.choice([0, 0, 3, bk // 2]))
    if gs:
        # Grid-stride over BM-row tiles of C (its N is one BN tile).
        grid = r.randint(1, 3)
        M = r.randint(1, 5) * bm - r.choice([0, 0, 5])
        N, T = bn, 1
        loop, mtile, ntile, arow, brow = "%pm to %nt step %np", "%tl", "0", "%%tl * %d" % bm, "0"
    else:
        # Each CTA owns a BM-row panel and walks %T column tiles of it.
        grid = r.randint(1, 2)
        T = r.randint(1, 4)
        M = grid * bm
        N = T * bn - r.choice([0, 0, 3])
        loop, mtile, ntile = "0 to %T step 1", "%pm", "%tl"
        arow, brow = "%%pm * %d" % bm, "%%tl * %d" % bn
    return dict(C=C, C1=C + 1, rm=rm, bm=bm, bn=bn, bk=bk, S=S, K=K, M=max(M, 1), N=max(N, 1),
                T=T, grid=grid, loop=loop, mtile=mtile, ntile=ntile, arow=arow, brow=brow,
                threads=128 * (1 + C), bytes=(bm + bn) * bk * 2, gs=gs)


def main():
    work, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    r = random.Random(seed)
    fails = 0
    kinds = {}
    for i in range(count):
        p = params(r)
        src = KERNEL.format(**p)
        path = os.path.join(work, "t%d.ave" % i)
        with open(path, "w") as f:
            f.write(src)
        desc = "S=%d C=%d %s bm=%d bn=%d bk=%d M=%d N=%d K=%d grid=%d" % (
            p["S"], p["C"], "grid-stride" if p["gs"] else "panel T=%d" % p["T"], p["bm"], p["bn"],
            p["bk"], p["M"], p["N"], p["K"], p["grid"])
        rc, out = run(["ave", "check", "--stats", path])
        if rc != 0 or " 0 unknown" not in out:
            print("FAIL tile %d (%s): not proved\n%s" % (i, desc, out))
            fails += 1
            continue
        o = {n: os.path.join(work, "t%d.%s.npy" % (i, n)) for n in "ABC"}
        rc, out = run(["ave", "run", path, "--grid=%d" % p["grid"],
                       "--arg", "A=rand:%dx%d:bf16:%d" % (p["M"], p["K"], i + 1),
                       "--arg", "B=rand:%dx%d:bf16:%d" % (p["N"], p["K"], i + 101),
                       "--arg", "C=zeros:%dx%d:f32" % (p["M"], p["N"]),
                       "--arg", "K=%d" % p["K"], "--arg", "M=%d" % p["M"], "--arg", "T=%d" % p["T"],
                       "--schedules=4", "--out", "A=" + o["A"], "--out", "B=" + o["B"],
                       "--out", "C=" + o["C"]])
        if rc != 0:
            print("FAIL tile %d (%s): the interpreter failed\n%s" % (i, desc, out))
            fails += 1
            continue
        rc, out = run(["ave-interp-ref", "gemm", o["A"], o["B"], o["C"]])
        if rc != 0 or "PASS" not in out:
            print("FAIL tile %d (%s): differs from the C GEMM\n%s" % (i, desc, out))
            fails += 1
            continue
        print("ok tile %d: %s" % (i, desc))
        # One mutant per case, in turn.
        name, old, new, _ = MUTANTS[i % len(MUTANTS)]
        old, new = old.format(**p), new.format(**p)
        if old not in src:
            print("FAIL mutant %s of tile %d: pattern not found" % (name, i))
            fails += 1
            continue
        mpath = os.path.join(work, "t%d.%s.ave" % (i, name))
        with open(mpath, "w") as f:
            f.write(src.replace(old, new))
        rc, out = run(["ave", "check", mpath])
        if rc == 0 or "error:" not in out:
            print("FAIL mutant %s of tile %d (%s): accepted\n%s" % (name, i, desc, out))
            fails += 1
            continue
        kind = "counterexample" if "counterexample:" in out else (
            "cannot check" if any(w in out for w in ("cannot check", "cannot prove", "cannot tell"))
            else "error")
        print("rejected %s of tile %d: %s" % (name, i, kind))
        kinds[kind] = kinds.get(kind, 0) + 1
    print("%d kernels, %d failures; mutants rejected: %s" % (
        count, fails, ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items())) or "none"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
