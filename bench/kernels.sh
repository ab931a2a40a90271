#!/bin/sh
# The kernel library's full run: every kernel of kernels/ against its NumPy reference on the host
# interpreter and compiled for every GPU target (test/kernels/run_suite.py), with the results as
# JSON (registers, spills, shared memory and compile time per target) and as the Markdown table
# of docs/kernels.md, in build/bench-kernels/.
#
#   bench/kernels.sh [BUILD_DIR] [run_suite.py options]   e.g. bench/kernels.sh build --only softmax
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
out=$build/bench-kernels
mkdir -p "$out"
py=python3
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
start=$(date +%s)
status=0
PYTHONPATH=$root/python AVE_LIBRARY=$build/runtime/libave.so PYTHONDONTWRITEBYTECODE=1 \
	"$py" "$root/test/kernels/run_suite.py" --ave "$build/tools/ave" \
	--json "$out/kernels.json" --markdown "$out/kernels.md" "$@" || status=$?
echo "bench/kernels.sh: $(($(date +%s) - start)) s; results in $out/kernels.json and $out/kernels.md"
exit $status
