#!/bin/bash
# ngauge's ping-pong against a minimal hand-written ping-pong over the same
# transport, alternating runs, several rounds; prints the ratio of the medians
# (ngauge / reference) per size, and each round's figures.  tcp is measured
# both ways of waiting (--tcp-poll sleep and spin; the reference with
# REF_SPIN=1 for spin).  Also NetPIPE where installed.
#
# Both buffer uses are compared like with like: ngauge --pp-echo separate
# (the default: the echoing rank answers from its own send buffer) against
# the reference with REF_ECHO=separate, and --pp-echo same (it answers from
# the buffer it received into, as Netgauge) against REF_ECHO=same.
#
# Both sides are pinned the same way (ngauge --pin, REF_PIN for the
# references): where the two processes run decides more of a loopback
# latency than anything else (a wake-up across cores costs microseconds), so
# an unpinned comparison measures the scheduler.  ngauge uses the clock the
# references use (--timer clock: CLOCK_MONOTONIC_RAW), so the same timer cost
# is inside both figures.  Two placements: the two
# ranks on two cores (0,1), and both on one core (0,0).
#
#   bench/pingpong_bench.sh [tcp|mpi] [ROUNDS] [COUNT]
#
# Environment: NGAUGE (the binary), NGAUGE_BUILD (build dir with bench/*_ref), NGAUGE_MPI_IMPL (the MPI
# the build uses, mpich or ompi: named in the lines printed; meson test sets it, and puts that MPI's mpiexec
# first in PATH: benchmarks pingpong-mpich and pingpong-ompi).
set -u
transport=${1:-tcp}
rounds=${2:-7}
count=${3:-20000}
build=${NGAUGE_BUILD:-build}
ngauge=${NGAUGE:-$build/ngauge}
ref="$build/bench/${transport}_pingpong_ref"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ "$transport" = mpi ]; then
	command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
	[ -x "$ref" ] || { echo "built without MPI: skipped"; exit 77; }
	launch=(mpiexec -n 2)
else
	launch=()
fi

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

ncpu=$(nproc)
placements="0,1 0,0"
[ "$ncpu" -lt 2 ] && placements="0,0"
# Two busy-polling MPI ranks on one core only measure the scheduler's time slice.
[ "$transport" = mpi ] && placements="0,1"
# tcp both ways of waiting (--tcp-poll sleep|spin, the reference alike); two
# spinning processes on one core measure the scheduler, as for mpi.
waits="sleep"
[ "$transport" = tcp ] && waits="sleep spin"
for echo in separate same; do
for wait_mode in $waits; do
for pin in $placements; do
	[ "$wait_mode" = spin ] && [ "$pin" = 0,0 ] && continue
	extra=(); ref_spin=0
	if [ "$transport" = tcp ]; then extra=(--tcp-poll "$wait_mode"); fi
	[ "$wait_mode" = spin ] && ref_spin=1
for size in 1 65536; do
	: >"$T/ng.$size"; : >"$T/ref.$size"
	for r in $(seq "$rounds"); do
		"${launch[@]}" "$ngauge" -x "$transport" "${extra[@]}" -p pingpong --pp-echo $echo --timer clock --pin $pin -s $size \
			-c "$count" -w 1000 -o "$T/r.json" >/dev/null || { echo "ngauge failed"; exit 1; }
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["latency_us"]["median"])' \
			"$T/r.json" >>"$T/ng.$size"
		REF_ECHO=$echo REF_SPIN=$ref_spin REF_PIN=$pin "${launch[@]}" "$ref" $size "$count" 1000 | awk '/median_us/ {print $2}' \
			>>"$T/ref.$size"
	done
	ng=$(median <"$T/ng.$size"); rf=$(median <"$T/ref.$size")
	ratio=$(awk -v a="$ng" -v b="$rf" 'BEGIN {printf "%.4f", a / b}')
	label=$transport; [ "$transport" = tcp ] && label="tcp ($wait_mode)"
	[ "$transport" = mpi ] && [ -n "${NGAUGE_MPI_IMPL:-}" ] && label="mpi ($NGAUGE_MPI_IMPL)"
	printf "%-12s echo %-8s cpus %s size %6d: ngauge median %8.3f us, reference %8.3f us, ratio %s (%d alternating rounds)\n" \
		"$label" "$echo" "$pin" "$size" "$ng" "$rf" "$ratio" "$rounds"
	echo "$transport $size $ratio" >>"$T/ratios"
	tr '\n' ' ' <"$T/ng.$size" | sed 's/^/    ngauge per round: /'; echo
	tr '\n' ' ' <"$T/ref.$size" | sed 's/^/    reference per round: /'; echo
done
done
done
done

# NetPIPE, where installed, as a second reference (its own output format).
if [ "$transport" = tcp ] && command -v NPtcp >/dev/null; then
	# The receiver ends after one run (no -r); the time limits make sure a
	# failed client never leaves it behind.
	(cd "$T" && exec timeout 90 NPtcp -l 1 -u 1 -n 1000 >/dev/null 2>&1) &
	np_srv=$!
	sleep 1
	if (cd "$T" && timeout 60 NPtcp -h 127.0.0.1 -l 1 -u 1 -n 1000 -o np.out >/dev/null 2>&1); then
		awk 'NR==1 {printf "NetPIPE tcp size 1: %.3f us (half round trip)\n", $3 * 1e6}' "$T/np.out"
	else
		echo "NetPIPE did not run (NPtcp client failed)"
	fi
	kill "$np_srv" 2>/dev/null
	wait "$np_srv" 2>/dev/null
fi
awk '{ if ($3 > 1.03 || $3 < 0.97) bad = 1 } END { exit bad }' "$T/ratios" &&
	echo "within 3% of the reference" || { echo "NOT within 3% of the reference"; exit 1; }
