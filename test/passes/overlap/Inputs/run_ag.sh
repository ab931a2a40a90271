#!/bin/sh
# run_ag.sh PYTHON W TEMPLATE DIR [ave run options]: the local kernel for W ranks with the
# template (ring, swizzle1d, or hand: a hand-written schedule; gather: the ring, made by
# `overlap{mode=gather}` into the kernel behind a collective), run on W simulated ranks (overlap
# applied by ave run), checked by ag_ref.py.
set -e
py=$1 W=$2 T=$3 d=$4
shift 4
here=$(dirname "$0")
mkdir -p "$d"
if [ "$T" = hand ]; then
	# a hand-written schedule: wave w is chunk r + 3 w (a permutation for W prime to 3)
	sed "s/WORLD/$W/g; s/ROWS/$((W * 64))/g; s/template(\"all_gather.TEMPLATE\")/chunk((%r + 3 * %w) mod $W) peer((%r + 3 * %w) mod $W)/" \
		"$here/ag_local.ave" > "$d/k.ave"
elif [ "$T" = gather ]; then
	sed "s/WORLD/$W/g; s/ROWS/$((W * 64))/g; s/TEMPLATE/ring/" "$here/ag_local.ave" > "$d/k0.ave"
	ave-opt "$d/k0.ave" --passes='overlap{mode=gather}' -o "$d/k.ave"
else
	sed "s/WORLD/$W/g; s/ROWS/$((W * 64))/g; s/TEMPLATE/$T/" "$here/ag_local.ave" > "$d/k.ave"
fi
"$py" "$here/ag_ref.py" inputs "$W" "$d"
ave run "$d/k.ave" --world="$W" --grid=$((2 * W)) --arg "@A_full=$d/a{r}.npy" \
	--arg "B=$d/b.npy" --arg "C=zeros:$((W * 64))x32:f32" \
	--out "@A_full=$d/A.npy" --out "C=$d/C.npy" "$@"
"$py" "$here/ag_ref.py" check "$W" "$d"
