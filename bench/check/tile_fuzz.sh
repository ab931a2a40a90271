#!/bin/sh
# The long run of test/passes/check-invariants/Inputs/tile_fuzz.py: generated persistent
# warp-specialized GEMMs (tile loop around the k-loop) proved and run, and a mutant of each
# rejected. Prints the generator's summary line per seed. Figures: docs/invariants.md.
#   bench/check/tile_fuzz.sh [BUILD_DIR] [SEEDS] [PER_SEED]
set -e
build=$(cd "${1:-build}" && pwd)
seeds=${2:-5}
per=${3:-27}
src=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$build/tools:$build/test/interp:$PATH"
export PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
s=1
while [ "$s" -le "$seeds" ]; do
	python3 "$src/test/passes/check-invariants/Inputs/tile_fuzz.py" "$work/$s" "$((s + 1000))" "$per" |
		grep -E '^FAIL|kernels,' | sed "s/^/seed $((s + 1000)): /"
	s=$((s + 1))
done
echo "$((seeds * per)) kernels in $(( $(date +%s) - start )) s"
