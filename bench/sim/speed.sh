#!/usr/bin/env bash
# The simulator's speed: a 256x256x256 bf16 GEMM (examples/gemm.ave, 4 CTAs) on each simulated
# target, compile included (a fresh cache), against the reference interpreter on the same problem.
# Prints seconds per run and the simulated rate in GFLOP/s. usage: bench/sim/speed.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
ave=${1:-build}/tools/ave
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args="--grid=2,2 --arg A=rand:256x256:bf16:1 --arg B=rand:256x256:bf16:2 --arg C=zeros:256x256:f32 --arg K=256"
printf "%-12s %8s %10s\n" device seconds GFLOP/s
for dev in host sim-sm_80 sim-sm_90a sim-gfx942 sim-gfx90a; do
  t0=$(date +%s.%N)
  AVE_CACHE_DIR="$tmp/cache-$dev" $ave run examples/gemm.ave --device=$dev $args --out C="$tmp/$dev.npy" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "s=$t1-$t0; print('%-12s %8.2f %10.3f' % ('$dev', s, 2*256**3/s/1e9))"
done
for dev in sim-sm_80 sim-sm_90a sim-gfx942 sim-gfx90a; do
  cmp -s "$tmp/host.npy" "$tmp/$dev.npy" || { echo "$dev: result differs from the host's" >&2; exit 1; }
done
echo "all simulated results equal the interpreter's, bit for bit"
