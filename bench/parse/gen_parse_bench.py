#!/usr/bin/env python3
"""gen_parse_bench.py [MB] [SEED] — writes a realistic .ave file of about MB megabytes (default
10) to stdout for the parse benchmark: many kernels (elementwise, GEMM with pipelined loops,
warp-specialized GEMM with roles, barriers and tags, attention-like online softmax), with varied
names, tile shapes and index expressions, comments, and a few modules with symmetric buffers.
Deterministic for a given seed. Every kernel parses and verifies."""
import random
import sys

target = int(float(sys.argv[1]) * 1024 * 1024) if len(sys.argv) > 1 else 10 * 1024 * 1024
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)

ELEMS = ["f32", "f16", "bf16"]


def vadd(i):
    e = rng.choice(ELEMS)
    n = rng.choice([256, 512, 1024, 2048])
    op = rng.choice(["add", "mul", "sub", "max", "min"])
    return f"""// elementwise kernel {i}: c = a {op} b, then scaled
ave.kernel @ew{i}(%a: !ave.tensor<?x{e}, global, [1]>, %b: !ave.tensor<?x{e}, global, [1]>,
                 %c: !ave.tensor<?x{e}, global, [1]>, %s: {e}, %n: index) {{threads = {rng.choice([128, 256])}}} {{
  %p = ave.program_id dim(0) : index
  %base = ave.index %p * {n} + %n mod {rng.choice([2, 4, 8])}
  %x = ave.load %a[%base] other(0.0) : !ave.tile<{n}x{e}, reg>
  %y = ave.load %b[%base] : !ave.tile<{n}x{e}, reg>
  %z = ave.{op} %x, %y : !ave.tile<{n}x{e}, reg>
  %w = ave.mul %z, %s : !ave.tile<{n}x{e}, reg>
  %m = ave.cmp gt %w, 0.0 : !ave.tile<{n}xi1, reg>
  %r = ave.select %m, %w, %z : !ave.tile<{n}x{e}, reg>
  ave.store %r into(%c[%base])
  ave.return
}}
"""


def gemm(i):
    e = rng.choice(["f16", "bf16"])
    bm, bn, bk = rng.choice([64, 128]), rng.choice([64, 128, 256]), rng.choice([32, 64])
    st = rng.choice([2, 3, 4])
    return f"""// GEMM {i}: C[{bm}x{bn} tile] = A * B^T, K in steps of {bk}
ave.kernel @gemm{i}(%A: !ave.tensor<?x?x{e}, global, [?, 1]>, %B: !ave.tensor<?x?x{e}, global, [?, 1]>,
                   %C: !ave.tensor<?x?xf32, global, [?, 1]>, %K: index) {{threads = 256}} {{
  %pm = ave.program_id dim(0) : index
  %pn = ave.program_id dim(1) : index
  %nk = ave.cdiv %K, {bk} : index
  %z = ave.zeros : !ave.tile<{bm}x{bn}xf32, reg>
  %acc = ave.for %k = 0 to %nk step 1 iter_args(%c = %z) -> (!ave.tile<{bm}x{bn}xf32, reg>) {{stages = {st}}} {{
    %a = ave.load %A[%pm * {bm}, %k * {bk}] : !ave.tile<{bm}x{bk}x{e}, reg>
    %b = ave.load %B[%pn * {bn}, %k * {bk}] : !ave.tile<{bn}x{bk}x{e}, reg>
    %d = ave.mma %a, %b, %c transpose_b : !ave.tile<{bm}x{bn}xf32, reg>
    ave.yield %d : !ave.tile<{bm}x{bn}xf32, reg>
  }}
  ave.store %acc into(%C[%pm * {bm}, %pn * {bn}])
  ave.return
}}
"""


def gemm_ws(i):
    slots = rng.choice([2, 3, 4])
    return f"""// warp-specialized GEMM {i}: one producer warpgroup, two consumer replicas, {slots} slots
ave.kernel @gemm_ws{i}(%A: !ave.tensor<?x?xbf16, global, [?, 1]>, %B: !ave.tensor<?x?xbf16, global, [?, 1]>,
                      %C: !ave.tensor<?x?xf32, global, [?, 1]>, %K: index) {{threads = 384, target = "sm_90a"}} {{
  ave.tag.func @A(%m: index, %kk: index)
  ave.tag.func @B(%n: index, %kk: index)
  %sA = ave.smem.alloc : !ave.ring<{slots} x !ave.tile<128x64xbf16, smem, #sw128>>
  %sB = ave.smem.alloc : !ave.ring<{slots} x !ave.tile<256x64xbf16, smem, #sw128>>
  %full = ave.mbar.alloc count(1) : !ave.mbar<{slots}>
  %empty = ave.mbar.alloc count(2) : !ave.mbar<{slots}>
  %pm = ave.program_id dim(0) : index
  %pn = ave.program_id dim(1) : index
  %nk = ave.cdiv %K, 64 : index
  ave.warp_specialize {{
    ave.role @load warps(4) regs(40) issue(1) {{
      %phx = ave.for %k = 0 to %nk step 1 iter_args(%ph = 1 : i1) -> (i1) {{
        %s = ave.index %k mod {slots}
        ave.mbar.wait %empty[%s] parity(%ph)
        ave.mbar.expect_tx %full[%s] bytes(49152)
        ave.copy.async %A[%pm * 128, %k * 64] into(%sA[%s]) arrive(%full[%s]) tag(@A(%pm, %k))
        ave.copy.async %B[%pn * 256, %k * 64] into(%sB[%s]) arrive(%full[%s]) tag(@B(%pn, %k))
        %ph1 = ave.phase.next %ph at(%s, {slots})
        ave.yield %ph1 : i1
      }}
    }}
    ave.role @mma warps(4) regs(232) replicate(2) {{
      %wg = ave.replica_id : index
      %z = ave.zeros : !ave.tile<64x256xf32, reg>
      %acc, %phy = ave.for %k = 0 to %nk step 1 iter_args(%c = %z, %ph = 0 : i1) -> (!ave.tile<64x256xf32, reg>, i1) {{
        %s = ave.index %k mod {slots}
        ave.mbar.wait %full[%s] parity(%ph)
        ave.tag.assert holds(%sA[%s], @A(%pm, %k)) msg("A slot consumed at k holds tile k")
        %a = ave.slice %sA[%s] rows(%wg * 64, 64) : !ave.tile<64x64xbf16, smem, #sw128>
        %t = ave.mma.async %a, %sB[%s], %c transpose_b : !ave.tile<64x256xf32, reg>
        %d = ave.mma.wait %t pending(0) : !ave.tile<64x256xf32, reg>
        ave.mbar.arrive %empty[%s] count(1)
        %ph1 = ave.phase.next %ph at(%s, {slots})
        ave.yield %d, %ph1 : !ave.tile<64x256xf32, reg>, i1
      }}
      ave.store %acc into(%C[%pm * 128 + %wg * 64, %pn * 256])
    }}
  }}
  ave.return
}}
"""


def attention(i):
    d = rng.choice([64, 128])
    return f"""// attention {i}: online softmax over 128-row blocks, head dim {d}
ave.kernel @attn{i}(%Q: !ave.tensor<?x{d}xbf16, global, [{d}, 1]>, %K: !ave.tensor<?x{d}xbf16, global, [{d}, 1]>,
                   %V: !ave.tensor<?x{d}xbf16, global, [{d}, 1]>, %O: !ave.tensor<?x{d}xbf16, global, [{d}, 1]>,
                   %S: index, %scale: f32) {{threads = 256}} {{
  %qb = ave.program_id dim(0) : index
  %bh = ave.program_id dim(1) : index
  %nkv = ave.cdiv %S, 128 : index
  %row0 = ave.mul %bh, %S : index
  %q = ave.load %Q[%row0 + %qb * 128, 0] : !ave.tile<128x{d}xbf16, reg>
  %o0 = ave.zeros : !ave.tile<128x{d}xf32, reg>
  %mi = ave.const -inf : f32
  %m0 = ave.full %mi : !ave.tile<128x1xf32, reg>
  %l0 = ave.zeros : !ave.tile<128x1xf32, reg>
  %o, %m, %l = ave.for %j = 0 to %nkv step 1 iter_args(%oi = %o0, %mj = %m0, %li = %l0)
      -> (!ave.tile<128x{d}xf32, reg>, !ave.tile<128x1xf32, reg>, !ave.tile<128x1xf32, reg>) {{stages = 2}} {{
    %k = ave.load %K[%row0 + %j * 128, 0] : !ave.tile<128x{d}xbf16, reg>
    %v = ave.load %V[%row0 + %j * 128, 0] : !ave.tile<128x{d}xbf16, reg>
    %z = ave.zeros : !ave.tile<128x128xf32, reg>
    %s0 = ave.mma %q, %k, %z transpose_b : !ave.tile<128x128xf32, reg>
    %s1 = ave.mul %s0, %scale : !ave.tile<128x128xf32, reg>
    %rm = ave.reduce max %s1 dim(1) : !ave.tile<128x1xf32, reg>
    %mn = ave.max %mj, %rm : !ave.tile<128x1xf32, reg>
    %mb = ave.bcast %mn dim(1) : !ave.tile<128x128xf32, reg>
    %sd = ave.sub %s1, %mb : !ave.tile<128x128xf32, reg>
    %p = ave.exp2 %sd : !ave.tile<128x128xf32, reg>
    %dm = ave.sub %mj, %mn : !ave.tile<128x1xf32, reg>
    %al = ave.exp2 %dm : !ave.tile<128x1xf32, reg>
    %rs = ave.reduce add %p dim(1) : !ave.tile<128x1xf32, reg>
    %ln = ave.fma %li, %al, %rs : !ave.tile<128x1xf32, reg>
    %ab = ave.bcast %al dim(1) : !ave.tile<128x{d}xf32, reg>
    %os = ave.mul %oi, %ab : !ave.tile<128x{d}xf32, reg>
    %pb = ave.cvt %p : !ave.tile<128x128xbf16, reg>
    %on = ave.mma %pb, %v, %os : !ave.tile<128x{d}xf32, reg>
    ave.yield %on, %mn, %ln : !ave.tile<128x{d}xf32, reg>, !ave.tile<128x1xf32, reg>, !ave.tile<128x1xf32, reg>
  }}
  %lb = ave.bcast %l dim(1) : !ave.tile<128x{d}xf32, reg>
  %of = ave.div %o, %lb : !ave.tile<128x{d}xf32, reg>
  %ob = ave.cvt %of : !ave.tile<128x{d}xbf16, reg>
  ave.store %ob into(%O[%row0 + %qb * 128, 0])
  ave.return
}}
"""


def module(i):
    return f"""// tensor-parallel module {i}
ave.module @tp{i} {{world = 8}} {{
  ave.symm.alloc @A_full : !ave.tensor<8192x4096xbf16, symm, [4096, 1]>
  ave.symm.alloc @sig : !ave.tensor<8xi64, symm>
  ave.chunk @Ach(%c: index) region(@A_full[%c * 1024 : 1024, 0 : 4096]) signal(@sig[%c])
  ave.chunk_schedule @ag(%r: index, %w: index) for(@Ach) chunk((%r + %w) mod 8) peer((%r + %w) mod 8)
  ave.kernel @ag_gemm(%B: !ave.tensor<?x4096xbf16, global, [4096, 1]>,
                      %C: !ave.tensor<8192x?xf32, global, [?, 1]>) {{threads = 256, overlap = @ag, overlap_operand = @A_full}} {{
    %pm = ave.program_id dim(0) : index
    %pn = ave.program_id dim(1) : index
    %z = ave.zeros : !ave.tile<128x128xf32, reg>
    %acc = ave.for %k = 0 to 64 step 1 iter_args(%c = %z) -> (!ave.tile<128x128xf32, reg>) {{stages = 3}} {{
      %a = ave.load @A_full[%pm * 128, %k * 64] : !ave.tile<128x64xbf16, reg>
      %b = ave.load %B[%pn * 128, %k * 64] : !ave.tile<128x64xbf16, reg>
      %d = ave.mma %a, %b, %c transpose_b : !ave.tile<128x128xf32, reg>
      ave.yield %d : !ave.tile<128x128xf32, reg>
    }}
    ave.store %acc into(%C[%pm * 128, %pn * 128])
    ave.return
  }}
}}
"""


kinds = [(vadd, 4), (gemm, 3), (gemm_ws, 2), (attention, 2), (module, 1)]
pool = [f for f, w in kinds for _ in range(w)]
out = ["// Generated by bench/parse/gen_parse_bench.py: kernels for the parse benchmark.\n",
       "#sw128 = #ave.smem<swizzle = 128, order = [1, 0]>\n\n"]
size = sum(len(s) for s in out)
i = 0
while size < target:
    s = rng.choice(pool)(i) + "\n"
    out.append(s)
    size += len(s)
    i += 1
sys.stdout.write("".join(out))
