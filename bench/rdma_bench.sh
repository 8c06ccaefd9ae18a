#!/bin/bash
# The rdma module over the shm backend against MPICH's own MPI_Send/MPI_Recv
# ping-pong (bench/mpi_pingpong_ref) on the same two ranks: alternating runs,
# ROUNDS rounds, both pinned to cores 0,1 and timed with CLOCK_MONOTONIC_RAW.
# Prints each round and the ratio of the medians; demands at
# 8 B a median half round trip no higher than MPICH's, at 1 MiB a bandwidth
# no lower than MPICH's.  Also the ofi backend (shm provider) for comparison,
# without a demand.
#
#   bench/rdma_bench.sh [ROUNDS] [COUNT]
set -u
. "$(dirname "$0")/lib.sh" rdma
bench_need_mpi
rounds=${1:-5}
count=${2:-20000}
ref="${NGAUGE_BUILD:-build}/bench/mpi_pingpong_ref"
[ -x "$ref" ] || { echo "no MPI reference program: skipped"; exit 77; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ngmed() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["latency_us"]["median"])' "$1"; }

bad=0
for size in 8 1048576; do
	c=$count; [ $size -gt 65536 ] && c=$((count / 10))
	: >"$T/shm"; : >"$T/mpi"; : >"$T/ofi"
	for r in $(seq "$rounds"); do
		"$NGAUGE" -x rdma --rdma-backend shm -p pingpong --timer clock --pin 0,1 -s $size -c $c -w 1000 \
			-o "$T/r.json" >/dev/null || { echo "ngauge failed"; exit 1; }
		ngmed "$T/r.json" >>"$T/shm"
		REF_PIN=0,1 mpiexec -n 2 "$ref" $size $c 1000 | awk '/median_us/ {print $2}' >>"$T/mpi"
		if "$NGAUGE" -x rdma --rdma-backend ofi --ofi-provider shm -p pingpong --timer clock --pin 0,1 -s $size \
			-c $c -w 1000 -o "$T/o.json" >/dev/null 2>&1; then
			ngmed "$T/o.json" >>"$T/ofi"
		fi
	done
	s=$(median <"$T/shm"); m=$(median <"$T/mpi")
	ratio=$(awk -v a="$s" -v b="$m" 'BEGIN {printf "%.3f", a / b}')
	printf "size %7d: rdma shm median %9.3f us, MPICH %9.3f us, ratio %s" $size "$s" "$m" "$ratio"
	if [ -s "$T/ofi" ]; then printf ", rdma ofi(shm) %9.3f us" "$(median <"$T/ofi")"; fi
	if [ $size -gt 8 ]; then
		awk -v s=$size -v a="$s" -v b="$m" 'BEGIN {printf " (bandwidth %.0f vs %.0f MB/s)", s / a, s / b}'
	fi
	echo
	tr '\n' ' ' <"$T/shm" | sed 's/^/    rdma shm per round: /'; echo
	tr '\n' ' ' <"$T/mpi" | sed 's/^/    MPICH per round:    /'; echo
	awk -v r="$ratio" 'BEGIN { exit !(r > 1.0) }' && { echo "    NOT at most MPICH's time"; bad=1; }
done
[ $bad = 0 ] && echo "rdma over shm: no slower than MPICH at 8 B and 1 MiB" || exit 1
