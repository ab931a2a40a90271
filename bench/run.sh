#!/bin/sh
# The performance evidence in one command: installs matplotlib where it is missing (Debian's
# python3-matplotlib), then runs bench/perf.py, which writes docs/perf.md (tables) and
# docs/perf/*.png (plots) from a build. GPU figures come from scripts/gpu-check.sh on a GPU and
# are kept in docs/perf.md's "## GPU" section.
#   bench/run.sh [BUILD_DIR] [-n RUNS]
set -e
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
py=/usr/bin/python3
if ! "$py" -c "import matplotlib" 2>/dev/null; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "bench/run.sh: installing python3-matplotlib"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-matplotlib
fi
[ -x "$build/tools/ave" ] || scripts/setup.sh "$build"
exec "$py" bench/perf.py --build "$build" "$@"
