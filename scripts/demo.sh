#!/usr/bin/env bash
# The main job: build ave; check a shipped example (verifier + invariant proofs); compile it for
# the built-in host device into a bundle and run that bundle there (the reference interpreter),
# under several interleavings of its warp roles; compare the result with a plain C reference.
# Where ptxas is installed it also compiles the example for sm_90a and shows what ptxas reports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== ave check examples/gemm_ws.ave"
build/tools/ave check examples/gemm_ws.ave
echo "== ave compile examples/gemm_ws.ave --target=host --emit=bundle"
build/tools/ave compile examples/gemm_ws.ave --target=host --emit=bundle -o "$out/gemm_ws.avb"
echo "== ave-rt-run gemm_ws.avb on host (M=200 N=136 K=260, 8 schedules)"
build/tools/ave-rt-run "$out/gemm_ws.avb" --device=host --grid=2,1 --schedules=8 --print-stats \
  --arg A=rand:200x260:bf16:1 --arg B=rand:136x260:bf16:2 --arg C=zeros:200x136:f32 --arg K=260 \
  --out A="$out/A.npy" --out B="$out/B.npy" --out C="$out/C.npy"
echo "== compare with the C reference (|c - ref| <= 1e-3 + 1e-4 |ref|)"
build/test/interp/ave-interp-ref gemm "$out/A.npy" "$out/B.npy" "$out/C.npy"
if command -v ptxas >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/ptxas ]; then
  echo "== ave compile examples/gemm_ws.ave --target=sm_90a (cubin)"
  build/tools/ave compile examples/gemm_ws.ave --target=sm_90a -o "$out/gemm_ws.cubin" \
    --emit-metadata="$out/gemm_ws.json"
  grep -E '"(registers|spill_stores|spill_loads|shared_bytes|setmaxnreg)"' "$out/gemm_ws.json"
fi
echo "ok: examples/gemm_ws.ave checks, compiles, runs on host and matches the reference"
