#!/usr/bin/env bash
# The main job: build ave, then compile-and-check a shipped example on the built-in host device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "== ave check examples/gemm_ws.ave"
build/tools/ave check examples/gemm_ws.ave
echo "ok: examples/gemm_ws.ave parses, verifies and checks"
