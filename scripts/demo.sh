#!/usr/bin/env bash
# The main job: build ave, check a shipped example, then run it on the built-in host device
# (the reference interpreter) under several interleavings of its warp roles and compare the
# result with a plain C reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "== ave check examples/gemm_ws.ave"
build/tools/ave check examples/gemm_ws.ave
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== ave run examples/gemm_ws.ave on host (M=200 N=136 K=260, 8 schedules)"
build/tools/ave run examples/gemm_ws.ave --kernel=@gemm_ws --device=host --grid=2,1 \
  --arg A=rand:200x260:bf16:1 --arg B=rand:136x260:bf16:2 --arg C=zeros:200x136:f32 --arg K=260 \
  --schedules=8 --print-stats --out A="$out/A.npy" --out B="$out/B.npy" --out C="$out/C.npy"
echo "== compare with the C reference (|c - ref| <= 1e-3 + 1e-4 |ref|)"
build/test/interp/ave-interp-ref gemm "$out/A.npy" "$out/B.npy" "$out/C.npy"
echo "ok: examples/gemm_ws.ave checks, runs on host and matches the reference"
