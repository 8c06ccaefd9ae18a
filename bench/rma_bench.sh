#!/bin/bash
# The rma module's direct design over --rdma-backend shm against mpirma (MPICH's own one-sided operations)
# with the rma pattern on the same two ranks (pinned to cores 0 and 1, both timed with CLOCK_MONOTONIC_RAW),
# in alternating runs, ROUNDS rounds:
#   PSCW put ping-pong at 8 B       time per epoch (two epochs per iteration, MPI-2 one-sided paper 5.2)
#   synchronisation-only PSCW       time per iteration (start/complete against post/wait, one origin)
#   put bandwidth, 16 x 64 KiB      per access epoch (PSCW)
# Prints every round's medians, the median over the rounds and each ratio direct / mpirma, and checks the
# targets of the one-sided modules: the first two at most 0.5, the bandwidth ratio at least 1.  Skipped (77) while mpirma
# is not built or mpiexec is missing.
#
#   bench/rma_bench.sh [ROUNDS] [COUNT]
set -u
. "$(dirname "$0")/lib.sh" rma
bench_need_mpi
"$NGAUGE" --list | grep -q "^  mpirma " || { echo "module mpirma not built: skipped"; exit 77; }
rounds=${1:-5}
count=${2:-5000}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# pick FILE TEST KEY INDEX: the median of KEY in the INDEX-th PSCW row of TEST (rows by size)
pick() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
x = [x for x in r["results"] if x["test"] == sys.argv[2] and x["sync"] == "pscw"]
print(x[int(sys.argv[4])][sys.argv[3]]["median"])' "$@"
}
args=(-p rma --rma-test put-pingpong,sync,put-bw --rma-sync pscw --rma-burst 16 --timer clock --pin 0,1 -c "$count"
	-w $((count / 10)))

for r in $(seq "$rounds"); do
	# the sizes of one run: 8 B (ping-pong) and 64 KiB (bandwidth); each file holds both
	"$NGAUGE" -x rma --rdma-backend shm "${args[@]}" -s 8,64K -o "$T/d$r.json" >/dev/null ||
		{ echo "rma direct failed"; exit 1; }
	mpiexec -n 2 "$NGAUGE" -x mpirma "${args[@]}" -s 8,64K -o "$T/m$r.json" >/dev/null ||
		{ echo "mpirma failed"; exit 1; }
done

bad=0
# NAME|TEST|KEY|ROW INDEX|max or min|LIMIT of the ratio direct / mpirma
for spec in "PSCW put ping-pong 8 B, us per epoch|put-pingpong|time_us|0|max|0.5" \
	"sync-only PSCW, us per iteration|sync|time_us|0|max|0.5" \
	"put bandwidth 16 x 64 KiB, MB/s|put-bw|bandwidth_MBps|1|min|1.0"; do
	IFS='|' read -r name test key idx kind limit <<<"$spec"
	: >"$T/d"; : >"$T/m"
	for r in $(seq "$rounds"); do
		pick "$T/d$r.json" "$test" "$key" "$idx" >>"$T/d"
		pick "$T/m$r.json" "$test" "$key" "$idx" >>"$T/m"
	done
	d=$(median <"$T/d"); m=$(median <"$T/m")
	ratio=$(awk -v a="$d" -v b="$m" 'BEGIN {printf "%.3f", a / b}')
	printf "%-38s rma direct (shm) %10.3f  mpirma %10.3f  ratio %s (target %s %s)\n" "$name" "$d" "$m" \
		"$ratio" "$([ "$kind" = max ] && echo "<=" || echo ">=")" "$limit"
	tr '\n' ' ' <"$T/d" | sed 's/^/    rma direct per round: /'; echo
	tr '\n' ' ' <"$T/m" | sed 's/^/    mpirma per round:     /'; echo
	if [ "$kind" = max ]; then
		awk -v r="$ratio" -v l="$limit" 'BEGIN { exit !(r > l) }' && { echo "    NOT met"; bad=1; }
	else
		awk -v r="$ratio" -v l="$limit" 'BEGIN { exit !(r < l) }' && { echo "    NOT met"; bad=1; }
	fi
done
[ $bad = 0 ] && echo "rma direct over shm: the targets against mpirma met" || exit 1
