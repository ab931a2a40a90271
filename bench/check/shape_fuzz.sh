#!/bin/sh
# The long run of test/passes/check-invariants/Inputs/shape_fuzz.py: generated warp-specialized
# GEMMs of many shapes (stages, replicas, tile loops and persistent walks, MMA in flight, drains,
# epilogue roles, role barriers, one or two full barriers) proved and run on ragged K, and one
# to three mutants of each: rejected (counterexample, "cannot check", otherwise) or accepted, an
# accepted one run over 24 schedules (MISSED if the interpreter shows it wrong). Prints the
# FAIL / MISSED lines and the generator's summary line per seed, then the totals.
#   bench/check/shape_fuzz.sh [BUILD_DIR] [SEEDS] [PER_SEED]
# SHAPE_FUZZ_FLAGS=--known also draws the shapes the checker is known to reject falsely.
set -e
build=$(cd "${1:-build}" && pwd)
seeds=${2:-5}
per=${3:-30}
src=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$build/tools:$build/test/interp:$PATH"
export PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
s=1
while [ "$s" -le "$seeds" ]; do
	# shellcheck disable=SC2086
	python3 "$src/test/passes/check-invariants/Inputs/shape_fuzz.py" "$work/$s" "$((s + 2000))" "$per" \
		${SHAPE_FUZZ_FLAGS:-} >"$work/$s.log"
	grep -E -A3 '^(FAIL|MISSED)' "$work/$s.log" | sed "s/^/seed $((s + 2000)): /" || true
	grep -E 'NO KNOWN REASON' "$work/$s.log" | sed "s/^/seed $((s + 2000)): /" || true
	grep -E 'kernels,' "$work/$s.log" | sed "s/^/seed $((s + 2000)): /"
	s=$((s + 1))
done
cat "$work"/*.log | awk '
	/^rejected .*: counterexample:/ { cx++ }
	/^rejected .*: cannot check:/ { cc++ }
	/^rejected .*: rejected otherwise:/ { ro++ }
	/^rejected .*\[cause.s line named\]/ { nl++ }
	/^accepted, equivalent\?/ { acc++; eq++ }
	/^MISSED/ { acc++; mi++ }
	/^ok shape/ { ok++ }
	/^FAIL/ { fail++ }
	END { printf "total: %d kernels ok, %d failures; mutants: %d counterexample, %d cannot check, %d accepted (%d equivalent), %d missed; %d rejected otherwise; %d rejections name the mutated line\n", ok, fail, cx, cc, acc, eq, mi, ro, nl }'
echo "$((seeds * per)) kernels in $(( $(date +%s) - start )) s"
