#!/bin/sh
# The figure of the README's superpipeline section: ping-pong bandwidth of the five spipe modes, measured
# (points with the 95% CI of the median) and predicted by the start-up model (dotted lines), over one
# backend.  The result files, the gnuplot script and its data stay in results/spipe/ (redo the figure
# there with `gnuplot spipe-modes.gp`); the PNG is copied to OUT.
#
#   scripts/spipe-figure.sh [OUT.png [ngauge options...]]
#   scripts/spipe-figure.sh doc/figures/spipe-modes.png --rdma-backend ofi --ofi-provider 'tcp;ofi_rxm'
set -eu
cd "$(dirname "$0")/.."
NG=${NGAUGE:-build/ngauge}
OUT=${1:-doc/figures/spipe-modes.png}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- --rdma-backend ofi --ofi-provider 'tcp;ofi_rxm'
DIR=${SPIPE_FIGURE_DIR:-results/spipe}
SIZES=${SPIPE_FIGURE_SIZES:-16K-16M:x2}
mkdir -p "$DIR"

files=""
labels=""
for mode in reg rcache copy pipeline super; do
	echo "== spipe --spipe-mode $mode $*"
	"$NG" -x spipe "$@" --spipe-mode "$mode" -p pingpong --pin 0,1 -s "$SIZES" -c 30 -w 3 -o "$DIR/$mode.json"
	files="$files $DIR/$mode.json"
	labels="$labels --label $mode"
done
# shellcheck disable=SC2086
"$NG" plot $files $labels --kind bandwidth -o "$DIR/spipe-modes.png"
cp "$DIR/spipe-modes.png" "$OUT"
echo "spipe-figure: $OUT (data and script in $DIR/)"
