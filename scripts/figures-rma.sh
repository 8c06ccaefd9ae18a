#!/bin/sh
# The README's figures of the rma pattern, from a fresh clone in one command:
#   ./scripts/figures-rma.sh [RESULTS-DIR]
# Builds ngauge when build/ngauge is missing, then measures on two local ranks pinned to cores 0 and 1:
# the rma module's direct and sendrecv designs over --rdma-backend shm and mpirma (MPICH's own one-sided
# operations, under mpiexec), PSCW put ping-pong (time per epoch) and put bandwidth (16 puts per epoch),
# and draws doc/figures/rma-put-pingpong.png and doc/figures/rma-put-bw.png.  The result files stay in
# RESULTS-DIR (default results/rma-figures).  The ranks run at real-time priority (chrt -f 10) where that is
# permitted, so other work on a shared host does not take their cores in the middle of an epoch
# (NGAUGE_RT=0: normal priority).
set -eu
cd "$(dirname "$0")/.."
NG=${NGAUGE:-build/ngauge}
OUT=${1:-results/rma-figures}
if [ ! -x "$NG" ]; then
	[ -d build ] || meson setup build
	ninja -C build
fi
mkdir -p "$OUT" doc/figures

common="-p rma --rma-sync pscw --pin 0,1 -s 1-1M:x4"
prio=""
if [ "${NGAUGE_RT:-1}" = 1 ] && chrt -f 10 true 2>/dev/null; then
	prio="chrt -f 10"
fi
files_pp=""
files_bw=""
labels=""
# measure NAME LABEL LAUNCH... -- MODULE-ARGS...
measure() {
	name=$1 label=$2
	shift 2
	echo "== $label: put-pingpong and put-bw"
	# shellcheck disable=SC2086
	$prio "$@" $common --rma-test put-pingpong -c 2000 -w 200 -o "$OUT/pp-$name.json"
	# shellcheck disable=SC2086
	$prio "$@" $common --rma-test put-bw --rma-burst 16 -c 200 -w 20 -o "$OUT/bw-$name.json"
	files_pp="$files_pp $OUT/pp-$name.json"
	files_bw="$files_bw $OUT/bw-$name.json"
	labels="$labels|$label"
}

measure direct "rma direct (shm)" "$NG" -x rma --rma-design direct --rdma-backend shm
measure sendrecv "rma sendrecv (shm)" "$NG" -x rma --rma-design sendrecv --rdma-backend shm
if "$NG" --list | grep -q "^  mpirma " && command -v mpiexec >/dev/null; then
	measure mpirma "mpirma (MPICH)" mpiexec -n 2 "$NG" -x mpirma
else
	echo "figures-rma: module mpirma not built here: the figures show the rma module only" >&2
fi

# plot FILES OUT: one figure, the labels in the order of the files
plot() {
	files=$1 out=$2
	set --
	for f in $files; do set -- "$@" "$f"; done
	IFS='|'
	for l in ${labels#|}; do set -- "$@" --label "$l"; done
	unset IFS
	"$NG" plot "$@" -o "$out"
}
plot "$files_pp" "$OUT/rma-put-pingpong.png"
plot "$files_bw" "$OUT/rma-put-bw.png"
cp "$OUT/rma-put-pingpong.png" "$OUT/rma-put-bw.png" doc/figures/
echo "figures-rma: doc/figures/rma-put-pingpong.png, doc/figures/rma-put-bw.png (data, scripts in $OUT/)"
