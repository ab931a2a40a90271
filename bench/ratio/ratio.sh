#!/usr/bin/env bash
# Compares two builds of `ave` on the same machine in the same run: each command runs N times,
# alternating old and new so that load affects both alike, and the median CPU time (user +
# system, steadier than wall time on a busy machine) of each and their ratio (new / old) are
# printed. Use it to show a change keeps compile latency and
# checker time: bench/ratio/ratio.sh OLD/tools/ave NEW/tools/ave [N]
set -uo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: bench/ratio/ratio.sh OLD-AVE NEW-AVE [N]}
new=${2:?usage: bench/ratio/ratio.sh OLD-AVE NEW-AVE [N]}
n=${3:-11}
cmds=(
	"check examples/gemm_ws.ave"
	"compile examples/gemm_ws.ave --target=sm_90a --emit=ptx --no-check -o /dev/null"
	"compile examples/gemm_ws.ave --target=sm_90a --emit=ptx -o /dev/null"
	"compile examples/gemm.ave --target=gfx942 --emit=asm --no-check -o /dev/null"
	"compile examples/attention.ave --target=sm_90a --emit=llvm --no-check -o /dev/null"
)
TIMEFORMAT='%U %S'
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-80s %12s %12s %7s\n' "command ($n runs each)" "old cpu ms" "new cpu ms" "ratio"
for c in "${cmds[@]}"; do
	to=() tn=()
	for ((i = 0; i < n; i++)); do
		for which in old new; do
			bin=$old
			[ $which = new ] && bin=$new
			ms=$( { time $bin $c >/dev/null 2>&1; } 2>&1 | awk '{print ($1 + $2) * 1000}')
			if [ $which = old ]; then to+=("$ms"); else tn+=("$ms"); fi
		done
	done
	mo=$(printf '%s\n' "${to[@]}" | median)
	mn=$(printf '%s\n' "${tn[@]}" | median)
	printf '%-80s %12.1f %12.1f %7.3f\n' "ave $c" "$mo" "$mn" "$(echo "$mn / $mo" | bc -l)"
done
