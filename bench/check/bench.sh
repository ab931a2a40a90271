#!/usr/bin/env bash
# bench.sh — time `ave check` on kernels with something to prove (run on demand, not in CI).
# Usage: bench/check/bench.sh [build-dir] [runs]     (defaults: build, 11)
# For each kernel, over the runs: the median and best wall time of `ave check`, and from the
# best run's --stats line the number of Z3 queries, the solver time per query and the time to
# create the Z3 context. The target for examples/gemm_ws.ave is under 200 ms.
# Z3_mk_context zeroes two 8.5 MB tables; where 4 KiB page faults are slow (virtual machines),
# that dominates: AVE_BENCH_THP=1 runs with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (transparent
# huge pages for malloc) to show the cost without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-11}
ave=$build/tools/ave
[ -x "$ave" ] || { echo "bench: no $ave (build first)" >&2; exit 1; }
if [ "${AVE_BENCH_THP:-0}" = 1 ]; then export GLIBC_TUNABLES=glibc.malloc.hugetlb=1; fi
kernels="examples/gemm_ws.ave test/passes/check-invariants/patterns.ave test/passes/check-invariants/ring-variants.ave"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); ${GLIBC_TUNABLES:-default malloc}"
printf "%-48s %9s %9s %8s %10s %10s %10s\n" kernel "median ms" "best ms" queries "solver ms" "ms/query" "setup ms"
for k in $kernels; do
  walls=()
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    s=$("$ave" check --stats "$k" 2>&1 >/dev/null | grep '^check-invariants:' || true)
    t1=$(date +%s%N)
    walls+=("$(( (t1 - t0) / 1000 )) $s")
  done
  sorted=$(printf "%s\n" "${walls[@]}" | sort -n)
  med=$(echo "$sorted" | sed -n "$(( (runs + 1) / 2 ))p" | cut -d' ' -f1)
  best=$(echo "$sorted" | head -1)
  q=$(echo "$best" | sed -n 's/.* \([0-9]*\) queries.*/\1/p')
  sol=$(echo "$best" | sed -n 's/.*solver \([0-9.]*\) ms,.*/\1/p')
  per=$(echo "$best" | sed -n 's/.*, \([0-9.]*\) ms\/query.*/\1/p')
  setup=$(echo "$best" | sed -n 's/.*solver setup \([0-9.]*\) ms.*/\1/p')
  printf "%-48s %9.1f %9.1f %8s %10s %10s %10s\n" "$k" "$(echo "$med / 1000" | bc -l)" \
    "$(echo "${best%% *} / 1000" | bc -l)" "$q" "$sol" "$per" "$setup"
done
