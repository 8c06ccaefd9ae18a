#!/bin/bash
# ngauge's coll pattern beside the OSU Micro-Benchmarks' collectives over MPI: the module's own (native)
# MPI_Allreduce, MPI_Bcast and MPI_Barrier timed the OSU way (--coll-timing barrier), against osu_allreduce,
# osu_bcast and osu_barrier, built here from the OSU source tree OSU_DIR points to (7.x: c/mpi/collective/blocking,
# c/util; older: mpi/collective, util) with the mpicc of the MPI that ngauge uses; nothing is installed.
#
#   OSU_DIR=/path/to/osu-micro-benchmarks-7.4 bench/osu_coll_bench.sh [ROUNDS]
#   NGAUGE=build-ompi/ngauge OSU_MPICC=mpicc.openmpi OSU_DIR=... bench/osu_coll_bench.sh     (Open MPI)
#
# Skipped (exit 77) without OSU_DIR, mpiexec or an MPI build.  ROUNDS (5) interleaved rounds, each running every
# measurement of both tools once.  Like with like:
# - the same launcher, placement and rank count: mpiexec -bind-to core -n NP (NP 2: more busy-polling ranks than
#   cores time the scheduler, not the library);
# - the same counts: OSU's defaults (1000 iterations after 200 up to 8 KiB, 100 after 10 above) given to both;
# - the same type: float sums, --coll-type float and OSU's -T mpi_float (OSU 7.x sums MPI_CHAR by default: four
#   times the elements, and a reduction MPICH does element by element);
# - the same estimator: OSU's "Avg Latency" is the average over the ranks of each rank's mean call time, which is
#   the row's "rank_mean_us" under barrier timing (doc/coll.md); ngauge's median of the slowest rank's time is
#   printed beside it.
# Must hold (issue 38): each of ngauge's figures within OSU's own round-to-round spread of OSU's figure (the
# spread: OSU's largest round less its smallest, over their median); the script exits 1 when one is outside.
#
# Environment: NGAUGE (the binary), OSU_DIR, OSU_MPICC (default mpicc), OSU_BIND (default "-bind-to core"),
# NP (2).
. "$(dirname "$0")/lib.sh" osu_coll
set -u
rounds=${1:-5}
np=${NP:-2}
bench_need_mpi
read -r -a bind <<<"${OSU_BIND:--bind-to core}"

# ---- build osu_allreduce, osu_bcast, osu_barrier --------------------------------
osu_build collective osu_allreduce osu_bcast osu_barrier
echo "ngauge: $("$NGAUGE" --version); mpiexec ${bind[*]} -n $np; $rounds interleaved rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the rounds ----------------------------------------------------------------
# what: OP SIZE (barrier: size 0)
what="allreduce:8 allreduce:1024 allreduce:65536 bcast:8 bcast:1024 bcast:65536 barrier:0"
counts() { [ "$1" -gt 8192 ] && echo "100 10" || echo "1000 200"; }

# ngfig FILE: "rank_mean_us median_us" of the first row
ngfig() {
	python3 - "$1" <<'EOF'
import json, sys
x = json.load(open(sys.argv[1]))["results"][0]
print("%.6g %.6g" % (x["rank_mean_us"], x["time_us"]["median"]))
EOF
}
# osufig OUTPUT SIZE: the Avg Latency OSU printed for SIZE (barrier: its only number)
osufig() {
	if [ "$2" = 0 ]; then
		awk '!/^#/ && NF >= 1 && $1 ~ /^[0-9.]+$/ { v = $1 } END { print v }' "$1"
	else
		awk -v s="$2" '$1 == s && NF >= 2 { print $2 }' "$1"
	fi
}

for r in $(seq "$rounds"); do
	for w in $what; do
		op=${w%%:*} s=${w#*:}
		read -r c wu <<<"$(counts "$s")"
		mpiexec "${bind[@]}" -n "$np" "$NGAUGE" -x mpi -p coll --coll-op "$op" --coll-algo native \
			--coll-timing barrier --coll-type float -s "$([ "$s" = 0 ] && echo 8 || echo "$s")" -c "$c" -w "$wu" \
			-o "$T/ng.json" >/dev/null 2>"$T/ng.err" || { echo "ngauge coll $op failed: $(tail -1 "$T/ng.err")"; exit 1; }
		ngfig "$T/ng.json" >>"$T/ng-$op-$s"
		if [ "$s" = 0 ]; then
			mpiexec "${bind[@]}" -n "$np" "$T/osu_$op" -i "$c" -x "$wu" >"$T/osu.out" 2>&1
		else
			mpiexec "${bind[@]}" -n "$np" "$T/osu_$op" -m "$s:$s" -i "$c" -x "$wu" -T mpi_float >"$T/osu.out" 2>&1
		fi || { echo "osu_$op failed: $(tail -1 "$T/osu.out")"; exit 1; }
		fig=$(osufig "$T/osu.out" "$s")
		[ -n "$fig" ] || { echo "osu_$op printed no figure for $s:"; tail -3 "$T/osu.out"; exit 1; }
		echo "$fig" >>"$T/osu-$op-$s"
	done
done

# ---- the table -------------------------------------------------------------------
echo
echo "native collectives under --coll-timing barrier: ngauge's rank_mean_us against OSU's Avg Latency (us);"
echo "must be within OSU's own round-to-round spread"
python3 - "$T" "$what" <<'EOF'
import statistics, sys
d, what = sys.argv[1], sys.argv[2].split()
bad = 0
for w in what:
    op, s = w.split(":")
    ng = [tuple(map(float, l.split())) for l in open("%s/ng-%s-%s" % (d, op, s))]
    osu = [float(l) for l in open("%s/osu-%s-%s" % (d, op, s))]
    ngm = statistics.median(x[0] for x in ng)
    ngmed = statistics.median(x[1] for x in ng)
    om = statistics.median(osu)
    spread = (max(osu) - min(osu)) / om
    ratio = ngm / om
    out = abs(ratio - 1) > spread
    bad += out
    print("%-9s %7s B  ngauge %9.3f (median of the slowest rank %9.3f)  OSU %9.3f  ratio %.4f  OSU spread %.1f%%%s"
          % (op, s, ngm, ngmed, om, ratio, 100 * spread, "  OUTSIDE" if out else ""))
    print("    rounds: ngauge %s| OSU %s" % (" ".join("%.3f" % x[0] for x in ng), " ".join("%.3f" % x for x in osu)))
print("within OSU's spread" if not bad else "%d figure(s) NOT within OSU's spread" % bad)
sys.exit(1 if bad else 0)
EOF
rc=$?
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
