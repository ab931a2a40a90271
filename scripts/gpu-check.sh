#!/usr/bin/env bash
# The GPU check, in two halves, for a GPU machine that has the CUDA driver but no LLVM or Z3.
#   scripts/gpu-check.sh prepare DIR   (here)   compile the shared examples into sm_90a bundles,
#       make their inputs and the host interpreter's results (.npy), and copy the runner
#       (ave-rt-run: runtime only) and the comparison tool (ave-interp-ref) into DIR.
#   DIR/run.sh [DEVICE]                 (there)  run every bundle on DEVICE (default cuda), compare
#       with the host results, and time gemm/gemm_ws at 4096^3 and 8192^3 against torch.matmul.
# DIR must be inside the repository and git-ignored to travel (e.g. .gpu/, carried as such).
# On sm_90a the default pipeline compiles examples/gemm.ave and examples/attention.ave through
# warp-specialize (a TMA producer and two wgmma consumer warpgroups): their bundles are the
# auto-specialized kernels, checked against the host interpreter and timed with gemm_ws.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
dir=${2:-.gpu}
[ "$cmd" = prepare ] || { echo "usage: scripts/gpu-check.sh prepare DIR" >&2; exit 2; }
scripts/setup.sh build
ave=build/tools/ave
mkdir -p "$dir"
cp build/tools/ave-rt-run build/test/interp/ave-interp-ref "$dir/"
target=${AVE_GPU_TARGET:-sm_90a}
run() { echo "+ $*"; "$@"; }
py=/usr/bin/python3   # Debian's, with NumPy (scripts/setup.sh installs it)

# Correctness: small problems that are not tile multiples, host results as references.
run $ave compile examples/vadd.ave --target=$target --emit=bundle -o "$dir/vadd.avb"
run $ave run examples/vadd.ave --kernel=@vadd --grid=3 --arg a=rand:3000:f32:1 \
  --arg b=rand:3000:f32:2 --arg c=zeros:3000:f32 --out a="$dir/vadd.a.npy" \
  --out b="$dir/vadd.b.npy" --out c="$dir/vadd.ref.npy"
# gemm_ws1: gemm_ws waiting with pending(1) (its wait must still be wgmma.wait_group 0).
sed 's/pending(0)/pending(1)/' examples/gemm_ws.ave > "$dir/gemm_ws1.ave"
grep -q 'pending(1)' "$dir/gemm_ws1.ave"
for k in gemm gemm_ws; do
  run $ave compile examples/$k.ave --target=$target --emit=bundle -o "$dir/$k.avb"
done
run $ave compile "$dir/gemm_ws1.ave" --target=$target --emit=bundle -o "$dir/gemm_ws1.avb"
# gemm_p: gemm.ave as a persistent kernel on 132 CTAs (an H100/H200's SMs); on sm_90a its roles
# walk the tiles themselves (ring phases across tiles, tiles in groups of 8 rows).
sed 's/{threads = 256}/{threads = 256, persistent = 132}/' examples/gemm.ave > "$dir/gemm_p.ave"
grep -q 'persistent = 132' "$dir/gemm_p.ave"
run $ave compile "$dir/gemm_p.ave" --target=$target --emit=bundle -o "$dir/gemm_p.avb"
# gemm_pp: the same in ping-pong (two consumer warpgroups on alternate tiles, a ring each).
run build/tools/ave-opt "$dir/gemm_p.ave" --passes='warp-specialize{mode=pingpong}' \
  --target=$target -o "$dir/gemm_pp.ave"
grep -q '%pair' "$dir/gemm_pp.ave"
run $ave compile "$dir/gemm_pp.ave" --target=$target --emit=bundle -o "$dir/gemm_pp.avb"
run $ave run examples/gemm.ave --kernel=@gemm --grid=2,2 --arg A=rand:200x264:bf16:1 \
  --arg B=rand:136x264:bf16:2 --arg C=zeros:200x136:f32 --arg K=264 \
  --out A="$dir/gemm.A.npy" --out B="$dir/gemm.B.npy" --out C="$dir/gemm.ref.npy"
run $ave run examples/gemm_ws.ave --kernel=@gemm_ws --grid=2,1 --arg A="$dir/gemm.A.npy" \
  --arg B="$dir/gemm.B.npy" --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm_ws.ref.npy"
run $ave run "$dir/gemm_ws1.ave" --kernel=@gemm_ws --grid=2,1 --arg A="$dir/gemm.A.npy" \
  --arg B="$dir/gemm.B.npy" --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm_ws1.ref.npy"
run $ave compile examples/attention.ave --target=$target --emit=bundle -o "$dir/attention.avb"
run $ave run examples/attention.ave --kernel=@attn_fwd --grid=2,2 --arg Q=rand:512x128:bf16:3 \
  --arg K=rand:512x128:bf16:4 --arg V=rand:512x128:bf16:5 --arg O=zeros:512x128:bf16 \
  --arg S=256 --arg scale=0.1275174 --out Q="$dir/attn.Q.npy" --out K="$dir/attn.K.npy" \
  --out V="$dir/attn.V.npy" --out O="$dir/attn.ref.npy"
# The same kernels on the simulated target (the code the backend emits, run here on the CPU): the
# GPU must agree with them too (docs/testing.md).
sim() { run $ave run "$@" --device=sim-$target; }
sim examples/vadd.ave --kernel=@vadd --grid=3 --arg a="$dir/vadd.a.npy" --arg b="$dir/vadd.b.npy" \
  --arg c=zeros:3000:f32 --out c="$dir/vadd.sim.npy"
sim examples/gemm.ave --kernel=@gemm --grid=2,2 --arg A="$dir/gemm.A.npy" --arg B="$dir/gemm.B.npy" \
  --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm.sim.npy"
sim examples/gemm_ws.ave --kernel=@gemm_ws --grid=2,1 --arg A="$dir/gemm.A.npy" \
  --arg B="$dir/gemm.B.npy" --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm_ws.sim.npy"
sim "$dir/gemm_ws1.ave" --kernel=@gemm_ws --grid=2,1 --arg A="$dir/gemm.A.npy" \
  --arg B="$dir/gemm.B.npy" --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm_ws1.sim.npy"
sim "$dir/gemm_p.ave" --kernel=@gemm --grid=2,2 --arg A="$dir/gemm.A.npy" --arg B="$dir/gemm.B.npy" \
  --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm_p.sim.npy"
cp "$dir/gemm.ref.npy" "$dir/gemm_p.ref.npy"
sim "$dir/gemm_pp.ave" --kernel=@gemm --grid=2,2 --arg A="$dir/gemm.A.npy" --arg B="$dir/gemm.B.npy" \
  --arg C=zeros:200x136:f32 --arg K=264 --out C="$dir/gemm_pp.sim.npy"
cp "$dir/gemm.ref.npy" "$dir/gemm_pp.ref.npy"
sim examples/attention.ave --kernel=@attn_fwd --grid=2,2 --arg Q="$dir/attn.Q.npy" \
  --arg K="$dir/attn.K.npy" --arg V="$dir/attn.V.npy" --arg O=zeros:512x128:bf16 --arg S=256 \
  --arg scale=0.1275174 --out O="$dir/attn.sim.npy" 2>/dev/null

# A world of ranks on one GPU (aveWorldLaunch): the all-gather + GEMM that `overlap` makes, 4
# ranks (ring), and its warp-specialized sm_90a form (TMA from the symmetric buffer), 2 ranks.
sed "s/WORLD/4/g; s/ROWS/256/g; s/TEMPLATE/ring/" test/passes/overlap/Inputs/ag_local.ave > "$dir/ag4.ave"
run $ave compile "$dir/ag4.ave" --target=$target --emit=bundle -o "$dir/ag4.avb" 2>/dev/null
run $ave compile test/passes/overlap/Inputs/ag_ws.ave --target=$target --emit=bundle -o "$dir/agws.avb" 2>/dev/null
mkdir -p "$dir/ag4" "$dir/agws"
run $py test/passes/overlap/Inputs/ag_ref.py inputs 4 "$dir/ag4"
$py -c "import numpy as n; [n.save('$dir/agws/a%d.npy' % r, n.random.default_rng(r).standard_normal((256, 128)).astype(n.float32)) for r in range(2)]; n.save('$dir/agws/b.npy', n.random.default_rng(9).standard_normal((128, 128)).astype(n.float32))"
# The GEMM + reduce-scatter that `overlap` makes (reduce_scatter.ring), 4 ranks.
sed "s/WORLD/4/g; s/ROWS/256/g" test/passes/overlap/Inputs/rs_local.ave > "$dir/rs4.ave"
run $ave compile "$dir/rs4.ave" --target=$target --emit=bundle -o "$dir/rs4.avb" 2>/dev/null
mkdir -p "$dir/rs4"
run $py test/passes/overlap/Inputs/rs_ref.py inputs 4 "$dir/rs4"
# A kernel behind a collective (`gathered = @Ach`, what overlap's cost model picks when one CTA's
# puts cannot keep up): the launch copies every chunk device to device first, 4 ranks.
run $ave compile test/passes/overlap/Inputs/gathered_local.ave --target=$target --emit=bundle \
  -o "$dir/gat4.avb" 2>/dev/null
mkdir -p "$dir/gat4"
cp "$dir"/ag4/a*.npy "$dir/ag4/b.npy" "$dir/gat4/"
cp test/passes/overlap/Inputs/ag_ref.py test/passes/overlap/Inputs/ws_ref.py \
  test/passes/overlap/Inputs/rs_ref.py "$dir/"
# The same worlds on the simulated target first: the check of the script itself.
sim "$dir/ag4.ave" --world=4 --grid=8 --arg "@A_full=$dir/ag4/a{r}.npy" --arg B="$dir/ag4/b.npy" \
  --arg C=zeros:256x32:f32 --out "@A_full=$dir/ag4/A.npy" --out C="$dir/ag4/C.npy" 2>/dev/null
$py test/passes/overlap/Inputs/ag_ref.py check 4 "$dir/ag4" | tail -1
sim "$dir/rs4.ave" --world=4 --grid=8,2 --arg "A=$dir/rs4/a{r}.npy" --arg "B=$dir/rs4/b{r}.npy" \
  --arg "@P=$dir/rs4/p{r}.npy" --out "@P=$dir/rs4/P.npy" 2>/dev/null
$py test/passes/overlap/Inputs/rs_ref.py check 4 "$dir/rs4" | tail -1
sim test/passes/overlap/Inputs/gathered_local.ave --world=4 --grid=8 --arg "@A_full=$dir/gat4/a{r}.npy" \
  --arg B="$dir/gat4/b.npy" --arg C=zeros:256x32:f32 --out "@A_full=$dir/gat4/A.npy" \
  --out C="$dir/gat4/C.npy" --launches=2 2>/dev/null
$py test/passes/overlap/Inputs/ag_ref.py check 4 "$dir/gat4" | tail -1
rm -f "$dir"/ag4/*.rank*.npy "$dir"/rs4/*.rank*.npy "$dir"/gat4/*.rank*.npy "$dir"/gat4/[AC].npy

cat > "$dir/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the prepared bundles on a GPU and compares with the host interpreter's results.
set -uo pipefail
cd "$(dirname "$0")"
dev=${1:-cuda}
fail=0
step() { echo "== $*"; }
step vadd
./ave-rt-run vadd.avb --device=$dev --grid=3 --arg a=vadd.a.npy --arg b=vadd.b.npy \
  --arg c=zeros:3000:f32 --out c=vadd.out.npy && ./ave-interp-ref vadd vadd.a.npy vadd.b.npy vadd.out.npy || fail=1
for k in gemm gemm_ws gemm_ws1 gemm_p gemm_pp; do
  step $k
  g=2,1; [ $k = gemm ] || [ $k = gemm_p ] || [ $k = gemm_pp ] && g=2,2
  if ./ave-rt-run $k.avb --device=$dev --grid=$g --arg A=gemm.A.npy --arg B=gemm.B.npy \
    --arg C=zeros:200x136:f32 --arg K=264 --out C=$k.out.npy &&
    ./ave-interp-ref gemm gemm.A.npy gemm.B.npy $k.out.npy; then
    cmp -s $k.out.npy $k.ref.npy && echo "$k: bit-identical to the host" ||
      echo "$k: within tolerance of the host (not bit-identical)"
  else
    fail=1
    echo "$k: FAILED (launch or comparison above)"
  fi
  cmp -s $k.out.npy $k.sim.npy && echo "$k: bit-identical to the simulator" || echo "$k: NOT bit-identical to the simulator (sim-sm_90a)"
done
step attention
./ave-rt-run attention.avb --device=$dev --grid=2,2 --arg Q=attn.Q.npy --arg K=attn.K.npy \
  --arg V=attn.V.npy --arg O=zeros:512x128:bf16 --arg S=256 --arg scale=0.1275174 \
  --out O=attn.out.npy && ./ave-interp-ref attention attn.Q.npy attn.K.npy attn.V.npy attn.out.npy 256 0.1275174 || fail=1
cmp -s attn.out.npy attn.sim.npy && echo "attention: bit-identical to the simulator" || echo "attention: not bit-identical to the simulator (ex2.approx is modelled by exp2f)"
cmp -s vadd.out.npy vadd.sim.npy && echo "vadd: bit-identical to the simulator" || { echo "vadd: NOT bit-identical to the simulator"; fail=1; }
step "world on one GPU: all-gather + GEMM, 4 ranks"
./ave-rt-run ag4.avb --device=$dev --world=4 --grid=8 --arg '@A_full=ag4/a{r}.npy' \
  --arg B=ag4/b.npy --arg C=zeros:256x32:f32 --out @A_full=ag4/A.npy --out C=ag4/C.npy \
  --launches=3 && python3 ag_ref.py check 4 ag4 || fail=1
step "world on one GPU: GEMM + reduce-scatter (ring), 4 ranks"
./ave-rt-run rs4.avb --device=$dev --world=4 --grid=8,2 --arg 'A=rs4/a{r}.npy' \
  --arg 'B=rs4/b{r}.npy' --arg '@P=rs4/p{r}.npy' --out @P=rs4/P.npy --launches=3 &&
  python3 rs_ref.py check 4 rs4 || fail=1
step "world on one GPU: a kernel behind a collective (gathered: device-to-device copies), 4 ranks"
./ave-rt-run gat4.avb --device=$dev --world=4 --grid=8 --arg '@A_full=gat4/a{r}.npy' \
  --arg B=gat4/b.npy --arg C=zeros:256x32:f32 --out @A_full=gat4/A.npy --out C=gat4/C.npy \
  --launches=3 && python3 ag_ref.py check 4 gat4 || fail=1
step "world on one GPU: warp-specialized all-gather + GEMM (TMA from symmetric memory), 2 ranks"
./ave-rt-run agws.avb --device=$dev --world=2 --grid=2,2 --arg '@A_full=agws/a{r}.npy' \
  --arg B=agws/b.npy --arg C=zeros:256x128:f32 --out C=agws/C.npy --out @A_full=agws/A.npy \
  --out B=agws/B.npy --launches=3 && python3 ws_ref.py agws 2 || fail=1
[ "$dev" = host ] && exit $fail   # the interpreter checks the script; speed is for GPUs
step "speed: gemm / gemm_ws / gemm_p / gemm_pp vs torch.matmul (bf16, f32 accumulation)"
for n in 4096 8192; do
  flops=$(python3 -c "print(2*$n**3)")
  ./ave-rt-run gemm.avb --device=$dev --grid=$((n/128)),$((n/128)) --arg A=rand:${n}x${n}:bf16:1 \
    --arg B=rand:${n}x${n}:bf16:2 --arg C=zeros:${n}x${n}:f32 --arg K=$n --repeat=20 --flops=$flops || fail=1
  ./ave-rt-run gemm_ws.avb --device=$dev --grid=$((n/128)),$((n/256)) --arg A=rand:${n}x${n}:bf16:1 \
    --arg B=rand:${n}x${n}:bf16:2 --arg C=zeros:${n}x${n}:f32 --arg K=$n --repeat=20 --flops=$flops || fail=1
  ./ave-rt-run gemm_p.avb --device=$dev --grid=$((n/128)),$((n/128)) --arg A=rand:${n}x${n}:bf16:1 \
    --arg B=rand:${n}x${n}:bf16:2 --arg C=zeros:${n}x${n}:f32 --arg K=$n --repeat=20 --flops=$flops || fail=1
  ./ave-rt-run gemm_pp.avb --device=$dev --grid=$((n/128)),$((n/128)) --arg A=rand:${n}x${n}:bf16:1 \
    --arg B=rand:${n}x${n}:bf16:2 --arg C=zeros:${n}x${n}:f32 --arg K=$n --repeat=20 --flops=$flops || fail=1
  python3 - $n <<'PY' || true
import sys, torch
n = int(sys.argv[1])
a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
for _ in range(3): torch.matmul(a, b.t())
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(20): torch.matmul(a, b.t())
e.record(); torch.cuda.synchronize()
ms = s.elapsed_time(e) / 20
print(f"torch.matmul {n}^3 bf16: {ms:.3f} ms per call, {2*n**3/ms*1e-9:.1f} TFLOP/s")
PY
done
exit $fail
RUN
chmod +x "$dir/run.sh"
echo "prepared $dir: carry it to the GPU machine and run $dir/run.sh"
