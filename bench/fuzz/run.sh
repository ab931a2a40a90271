#!/usr/bin/env bash
# The long runs of the fuzzers (on demand, not part of the suite), on the ASan + UBSan build:
#   bench/fuzz/run.sh [MUTANTS] [SECONDS]
# - the pipeline mutation fuzzer: MUTANTS (default 500) mutants that parse and verify, through
#   ave check, ave compile for every GPU target and the default pipeline;
# - the libFuzzer targets for the parser (ave-fuzz) and for bundles and cache entries
#   (ave-fuzz-bundle), SECONDS (default 600) each.
# Prints each run's figures; reproducers are kept under build-asan/fuzz-out.
set -uo pipefail
cd "$(dirname "$0")/../.."
mutants=${1:-500}
seconds=${2:-600}
scripts/setup.sh build-asan -DAVE_SANITIZE=ON -DAVE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug || exit 1
out=build-asan/fuzz-out
mkdir -p "$out/corpus-parse" "$out/corpus-bundle"
t0=$(date +%s)
python3 test/fuzz/mutate_pipeline.py build-asan/tools . --mutants "$mutants" --seed "$(date +%s)" \
	--out "$out/mutants" | tail -n 3
echo "pipeline mutants: $(($(date +%s) - t0)) s"
build-asan/test/fuzz/ave-fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
	-dict=test/fuzz/ave.dict -artifact_prefix="$out/parse-" -print_final_stats=1 \
	"$out/corpus-parse" test/fuzz/corpus 2>&1 | grep -E "Done|stat::number_of_executed_units|ERROR"
for e in vadd gemm gemm_ws; do
	build-asan/tools/ave compile "examples/$e.ave" --target=host --emit=bundle --no-check \
		-o "$out/corpus-bundle/$e.avb"
done
build-asan/test/fuzz/ave-fuzz-bundle -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
	-artifact_prefix="$out/bundle-" -print_final_stats=1 "$out/corpus-bundle" 2>&1 |
	grep -E "Done|stat::number_of_executed_units|ERROR"
