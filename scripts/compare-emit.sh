#!/usr/bin/env bash
# Emits the LLVM IR and the target text (PTX or AMDGPU assembly) of every example on every GPU
# target into a folder, so that a behaviour-preserving change can be checked by diffing two runs:
#   scripts/compare-emit.sh build /tmp/before   (on the old tree)
#   scripts/compare-emit.sh build /tmp/after    (on the new tree)
#   diff -r /tmp/before /tmp/after
# A kernel that a target refuses is recorded with its diagnostics, so a change in what is refused
# shows up as a difference as well.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:?usage: scripts/compare-emit.sh BUILD-DIR OUT-DIR}
mkdir -p "$out"
n=0
for f in examples/*.ave; do
	k=$(basename "$f" .ave)
	for t in sm_80 sm_90a gfx942 gfx90a; do
		case $t in sm_*) text=ptx ;; *) text=asm ;; esac
		for e in llvm $text; do
			"$build/tools/ave" compile "$f" --target=$t --no-check --emit=$e -o "$out/$k.$t.$e" \
				2>"$out/$k.$t.$e.err" || echo "exit $?" >>"$out/$k.$t.$e.err"
			n=$((n + 1))
		done
	done
done
echo "compare-emit: $n outputs in $out"
