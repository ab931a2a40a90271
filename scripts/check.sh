#!/usr/bin/env bash
# The whole test suite: a warnings-as-errors release build and an ASan+UBSan build (with the
# libFuzzer target), each running every lit and unit test; a GCC build, where GCC is installed,
# that must emit the same code as the release build and runs the front half's tests; a
# ThreadSanitizer build running the thread tests; and the lint that keeps instruction order
# independent of the C compiler. Counts come from lit's JSON report
# (scripts/lit-count.py): unresolved, timed-out and unexpectedly passing tests are failures,
# unsupported ones are skipped, and a unit-test program counts as its checks. A build that fails
# counts as one failure. lit's progress shows as each build's tests run (its whole output is kept
# in BUILD/lit.log); a table of builds (passed, failed, skipped as unsupported, time of build and
# tests) comes before the last line, "suite: N passed, N failed" and ", N skipped" when some were,
# which tooling reads.
set -uo pipefail
cd "$(dirname "$0")/.."
lit=/usr/lib/llvm-19/build/utils/lit/lit.py
pass=0 fail=0 skip=0 rc=0
rows=() # "name passed failed skipped seconds", one per build, for the table at the end
t0=$SECONDS

# row NAME PASSED FAILED SKIPPED: a line of the table, timed from t0 (reset for the next one).
row() {
  rows+=("${1// /-} $2 $3 $4 $((SECONDS - t0))")
  t0=$SECONDS
}

# run_lit BUILD [TEST...]: runs lit on BUILD's tests (or only TEST...) and adds up its counts.
run_lit() {
  local b=$1
  shift
  local paths=("$@")
  [ ${#paths[@]} -gt 0 ] || paths=("$b/test")
  echo "== lit on $b"
  rm -f "$b/lit-report.json"
  local r counts p f s
  # Unbuffered, so that the progress shows as the tests run.
  python3 -u "$lit" -sv "${paths[@]}" -o "$b/lit-report.json" 2>&1 | tee "$b/lit.log"
  r=${PIPESTATUS[0]}
  counts=$(python3 scripts/lit-count.py "$b/lit-report.json" "$b")
  if [ -z "$counts" ]; then
    echo "== lit on $b: no report (exit status $r)"
    fail=$((fail + 1))
    rc=1
    row "$b" 0 1 0
    return
  fi
  read -r p f s <<<"$counts"
  # lit failing with nothing failed in its report (a configuration error) is a failure too.
  if [ "$r" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  echo "== $b: $p passed, $f failed, $s skipped"
  row "$b" "$p" "$f" "$s"
  pass=$((pass + p))
  fail=$((fail + f))
  skip=$((skip + s))
  [ "$f" -eq 0 ] || rc=1
}

# run_one NAME COMMAND...: a check that is one command, passed when it exits with 0.
run_one() {
  local name=$1
  shift
  if "$@"; then
    pass=$((pass + 1))
    row "$name" 1 0 0
  else
    fail=$((fail + 1))
    rc=1
    row "$name" 0 1 0
  fi
}

# build_failed WHAT LOG: a build that did not finish counts as one failure.
build_failed() {
  echo "== $1: the build failed"
  [ -f "$2" ] && tail -n 40 "$2"
  fail=$((fail + 1))
  rc=1
  row "$1" 0 1 0
}

if scripts/setup.sh build; then run_lit build; else build_failed "release build" /dev/null; fi
if scripts/setup.sh build-asan -DAVE_SANITIZE=ON -DAVE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug; then
  run_lit build-asan
else
  build_failed "ASan build" /dev/null
fi

# The project also builds warnings-as-errors with GCC (Debian's cc), where one is installed: the
# emitted code must not depend on the compiler that built ave. GCC's build emits every example
# and library kernel on every GPU target, byte for byte as the release build does
# (scripts/same-code.sh), and runs the tests of the IR, the interpreter, the lowering, the tools
# and the unit tests; the passes, backends and simulator it compiles are those whose output
# same-code compares.
gcc_tests=(unit ir interp lower tools)
if command -v gcc >/dev/null; then
  mkdir -p build-gcc
  if cmake -S . -B build-gcc -G Ninja -DCMAKE_C_COMPILER=gcc >build-gcc/configure.log 2>&1 &&
     cmake --build build-gcc >build-gcc/build.log 2>&1; then
    run_lit build-gcc "${gcc_tests[@]/#/build-gcc/test/}"
    echo "== same code from the release and GCC builds"
    run_one same-code scripts/same-code.sh build build-gcc
  else
    build_failed "gcc build" build-gcc/build.log
  fi
else
  echo "== gcc build: skipped (no gcc)"
  skip=$((skip + 1))
  row build-gcc 0 0 1
fi

# ThreadSanitizer on the programs that use one context or one process from many threads. LLVM
# is not instrumented; test/tsan.supp says which of its reports are suppressed and why.
tsan_tests=(capi-threads capi-first-compiles capi-lifetime)
mkdir -p build-tsan
if cmake -S . -B build-tsan -G Ninja -DCMAKE_C_COMPILER=clang-19 -DAVE_TSAN=ON \
     >build-tsan/configure.log 2>&1 &&
   cmake --build build-tsan --target "${tsan_tests[@]}" >build-tsan/build.log 2>&1; then
  run_lit build-tsan build-tsan/test/capi/threads.test build-tsan/test/capi/first_compiles.test \
    build-tsan/test/capi/lifetime.test
else
  build_failed "TSan build" build-tsan/build.log
fi

echo "== lint: argument evaluation order of emitting calls"
run_one lint python3 scripts/eval-order.py $(git ls-files 'passes/*.c' 'lower/*.c' 'backend-*/*.c' 'regalloc/*.c')

echo
printf '%-12s %8s %8s %12s %8s\n' build passed failed unsupported time
for r in "${rows[@]}"; do
  read -r name p f s t <<<"$r"
  printf '%-12s %8d %8d %12d %5dm%02ds\n' "$name" "$p" "$f" "$s" $((t / 60)) $((t % 60))
done

if [ "$skip" -gt 0 ]; then
  echo "suite: $pass passed, $fail failed, $skip skipped"
else
  echo "suite: $pass passed, $fail failed"
fi
[ $fail -eq 0 ] || rc=1
exit $rc
