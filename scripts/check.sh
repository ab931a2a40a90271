#!/usr/bin/env bash
# The whole test suite: a warnings-as-errors release build and an ASan+UBSan build (with the
# libFuzzer target), each running every lit and unit test, and a GCC build where GCC is
# installed. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
lit=/usr/lib/llvm-19/build/utils/lit/lit.py
scripts/setup.sh build || exit 1
scripts/setup.sh build-asan -DAVE_SANITIZE=ON -DAVE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug || exit 1
pass=0 fail=0 rc=0
for b in build build-asan; do
  echo "== lit on $b"
  out=$(python3 "$lit" -sv "$b/test" 2>&1)
  r=$?
  echo "$out" | tail -n 40
  [ $r -eq 0 ] || rc=1
  p=$(echo "$out" | sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' | tail -1)
  f=$(echo "$out" | sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p' | tail -1)
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-0}))
  if [ -z "$p" ] && [ $r -ne 0 ]; then fail=$((fail + 1)); fi
done
# The project also builds warnings-as-errors with GCC (Debian's cc), where one is installed.
if command -v gcc >/dev/null; then
  echo "== gcc build"
  if cmake -S . -B build-gcc -G Ninja -DCMAKE_C_COMPILER=gcc >/dev/null && cmake --build build-gcc >build-gcc/build.log 2>&1; then
    pass=$((pass + 1))
  else
    tail -n 40 build-gcc/build.log
    fail=$((fail + 1))
  fi
else
  echo "== gcc build: UNSUPPORTED (no gcc)"
fi
echo "suite: $pass passed, $fail failed"
[ $fail -eq 0 ] || rc=1
exit $rc
