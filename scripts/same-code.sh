#!/usr/bin/env bash
# Shows that two builds of this tree (scripts/check.sh: clang's release build and GCC's) emit
# the same code: the LLVM IR and target text of every example and the target text of every
# library kernel, on every GPU target (scripts/compare-emit.sh), byte for byte, diagnostics of
# refused kernels included. The two builds emit at once (one process each). Exits 1, with the
# differences, when any output differs.
#   scripts/same-code.sh build build-gcc
set -uo pipefail
cd "$(dirname "$0")/.."
a=${1:?usage: scripts/same-code.sh BUILD-A BUILD-B}
b=${2:?usage: scripts/same-code.sh BUILD-A BUILD-B}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scripts/compare-emit.sh "$a" "$out/a" --kernels >/dev/null &
scripts/compare-emit.sh "$b" "$out/b" --kernels >/dev/null
wait
n=$(find "$out/a" -type f ! -name '*.err' | wc -l)
if [ "$n" -eq 0 ]; then
	echo "same-code: $a emitted nothing"
	exit 1
fi
if diff -r "$out/a" "$out/b" >"$out/diff"; then
	echo "same-code: $a and $b emit the same code ($n outputs)"
	exit 0
fi
head -n 60 "$out/diff"
echo "same-code: $a and $b emit different code ($(grep -c '^diff\|^Only' "$out/diff") files differ)"
exit 1
