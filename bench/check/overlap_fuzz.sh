#!/bin/sh
# The long run of test/passes/overlap/Inputs/ov_fuzz.py and rs_fuzz.py: generated local
# all-gather and GEMM + reduce-scatter kernels through the overlap pass (proved inside it), run
# on 2 to 8 simulated ranks and compared with NumPy. Prints the failures and the summary line
# per seed and generator. Figures: docs/passes.md.
#   bench/check/overlap_fuzz.sh [BUILD_DIR] [SEEDS] [PER_SEED]
set -e
build=$(cd "${1:-build}" && pwd)
seeds=${2:-4}
per=${3:-15}
src=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$build/tools:$PATH"
export PATH
py=/usr/bin/python3
[ -x "$py" ] || py=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
s=1
while [ "$s" -le "$seeds" ]; do
	for gen in ov_fuzz rs_fuzz; do
		"$py" "$src/test/passes/overlap/Inputs/$gen.py" "$work/$gen$s" "$((s + 2000))" "$per" |
			grep -E '^FAIL|passed,' | sed "s/^/$gen seed $((s + 2000)): /" || true
	done
	s=$((s + 1))
done
echo "overlap_fuzz: $seeds seeds x $per kernels x 2 generators in $(($(date +%s) - start)) s"
