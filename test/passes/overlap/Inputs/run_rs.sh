#!/bin/sh
# run_rs.sh PYTHON W DIR [ave run options]: the local GEMM + reduce-scatter for W ranks, run on W
# simulated ranks (overlap applied by ave run), checked by rs_ref.py. RS_SCHED, if set, replaces the
# schedule's template("reduce_scatter.ring") (a hand-written chunk(...) peer(...)).
set -e
py=$1 W=$2 d=$3
shift 3
here=$(dirname "$0")
mkdir -p "$d"
sched=${RS_SCHED:-'template("reduce_scatter.ring")'}
sed "s/WORLD/$W/g; s/ROWS/$((W * 64))/g; s|template(\"reduce_scatter.ring\")|$sched|" \
	"$here/rs_local.ave" > "$d/k.ave"
"$py" "$here/rs_ref.py" inputs "$W" "$d"
ave run "$d/k.ave" --world="$W" --arg "A=$d/a{r}.npy" --arg "B=$d/b{r}.npy" \
	--arg "@P=$d/p{r}.npy" --out "@P=$d/P.npy" "$@"
"$py" "$here/rs_ref.py" check "$W" "$d"
