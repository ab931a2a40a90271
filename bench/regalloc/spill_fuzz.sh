#!/bin/sh
# The long run of the spill fuzz (test/regalloc/Inputs/spill_agree.py): generated kernels whose
# register tiles do not fit, rewritten by regalloc, proved by check-invariants and run in the
# interpreter before and after (bit-exact over several schedules); every fifth one lowered and
# code-generated for its target. Prints each seed's line and the totals.
#
#   bench/regalloc/spill_fuzz.sh [BUILD_DIR] [SEEDS] [PER_SEED]     default: build 5 40
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
seeds=${2:-5}
per=${3:-40}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PATH=$build/tools:$build/test/interp:$PATH
export PATH
start=$(date +%s)
fails=0 kernels=0 generated=0
s=101
while [ "$s" -lt $((101 + seeds)) ]; do
	out=$(python3 "$root/test/regalloc/Inputs/spill_agree.py" fuzz "$work/$s" "$s" "$per")
	echo "$out" | grep -E '^FAIL' || true
	line=$(echo "$out" | tail -1)
	echo "seed $s: $line"
	fails=$((fails + $(echo "$out" | grep -c '^FAIL' || true)))
	kernels=$((kernels + $(echo "$line" | sed -n 's/fuzz: \([0-9]*\) kernels.*/\1/p')))
	generated=$((generated + $(echo "$line" | sed -n 's/.*out of \([0-9]*\) generated/\1/p')))
	s=$((s + 1))
done
echo "spill fuzz: $kernels kernels spilled, proved and agreed out of $generated generated," \
	"$fails failed; $(($(date +%s) - start)) s"
[ "$fails" -eq 0 ]
