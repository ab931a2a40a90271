#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for building and testing ave, then configures
# and builds it. Usage: scripts/setup.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="llvm-19-dev llvm-19-tools lld-19 liblld-19-dev clang-19 libclang-rt-19-dev flex bison libz3-dev z3 cmake ninja-build pkg-config python3"
# The Python package (python/) and its tests: NumPy, pytest, torch (CPU) and pip.
pkgs="$pkgs python3-numpy python3-pytest python3-torch python3-pip"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing$missing"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi
build=${1:-build}
shift || true
cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-19 "$@" >/dev/null
cmake --build "$build"
