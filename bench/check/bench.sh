#!/usr/bin/env bash
# bench.sh — time `ave check` on kernels with something to prove (run on demand, not in CI).
# Usage: bench/check/bench.sh [build-dir] [runs]     (defaults: build, 11)
# For each kernel: the median and best wall time of `ave check` over the runs, and from the
# median run's --stats line the number of Z3 queries and the mean time per query. The target
# for examples/gemm_ws.ave is under 200 ms.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-11}
ave=$build/tools/ave
[ -x "$ave" ] || { echo "bench: no $ave (build first)" >&2; exit 1; }
kernels="examples/gemm_ws.ave test/passes/check-invariants/patterns.ave test/passes/check-invariants/ring-variants.ave"
printf "%-48s %10s %10s %8s %12s\n" kernel "median ms" "best ms" queries "ms/query"
for k in $kernels; do
  walls=() stats=()
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    s=$("$ave" check --stats "$k" 2>&1 >/dev/null | grep '^check-invariants:' || true)
    t1=$(date +%s%N)
    walls+=("$(( (t1 - t0) / 1000 )) $s")
  done
  sorted=$(printf "%s\n" "${walls[@]}" | sort -n)
  med=$(echo "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")
  best=$(echo "$sorted" | head -1 | cut -d' ' -f1)
  us=${med%% *}
  q=$(echo "$med" | sed -n 's/.* \([0-9]*\) queries.*/\1/p')
  per=$(echo "$med" | sed -n 's/.*, \([0-9.]*\) ms\/query.*/\1/p')
  printf "%-48s %10.1f %10.1f %8s %12s\n" "$k" "$(echo "$us / 1000" | bc -l)" \
    "$(echo "$best / 1000" | bc -l)" "$q" "$per"
done
