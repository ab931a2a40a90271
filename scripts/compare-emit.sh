#!/usr/bin/env bash
# Emits the LLVM IR and the target text (PTX or AMDGPU assembly) of every example on every GPU
# target into a folder, so that a behaviour-preserving change can be checked by diffing two runs:
#   scripts/compare-emit.sh build /tmp/before   (on the old tree)
#   scripts/compare-emit.sh build /tmp/after    (on the new tree)
#   diff -r /tmp/before /tmp/after
# With --kernels, the kernel library's target text (kernels/*.ave) is emitted as well. A kernel
# that a target refuses is recorded with its diagnostics, so a change in what is refused shows up
# as a difference as well. scripts/same-code.sh compares two builds of one tree this way.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:?usage: scripts/compare-emit.sh BUILD-DIR OUT-DIR [--kernels]}
mkdir -p "$out"
n=0
# emit FILE TARGET KIND: one output and its diagnostics (and exit status, when not 0).
emit() {
	local k
	k=$(basename "$1" .ave)
	"$build/tools/ave" compile "$1" --target="$2" --no-check --emit="$3" -o "$out/$k.$2.$3" \
		2>"$out/$k.$2.$3.err" || echo "exit $?" >>"$out/$k.$2.$3.err"
	n=$((n + 1))
}
for t in sm_80 sm_90a gfx942 gfx90a; do
	case $t in sm_*) text=ptx ;; *) text=asm ;; esac
	for f in examples/*.ave; do
		emit "$f" $t llvm
		emit "$f" $t $text
	done
	if [ "${3:-}" = --kernels ]; then
		for f in kernels/*.ave; do emit "$f" $t $text; done
	fi
done
echo "compare-emit: $n outputs in $out"
