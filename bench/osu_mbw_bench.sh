#!/bin/bash
# ngauge's mbw beside the OSU Micro-Benchmarks' osu_mbw_mr over MPI: the aggregate message rate of k pairs, one
# way, windows of non-blocking sends acknowledged by the receiver.  osu_mbw_mr is built here from the OSU source
# tree OSU_DIR points to (7.x: c/mpi/pt2pt/standard, c/util; older: mpi/pt2pt, util) with the mpicc of the MPI
# that ngauge uses; nothing is installed.
#
#   OSU_DIR=/path/to/osu-micro-benchmarks-7.4 bench/osu_mbw_bench.sh [ROUNDS]
#
# Skipped (exit 77) without OSU_DIR, mpiexec or an MPI build.  ROUNDS (5) interleaved rounds, each running every
# measurement of both tools once.  Like with like:
# - the same launcher, placement and ranks: mpiexec -bind-to core -n NP (NP 2, one pair: more busy-polling ranks
#   than cores time the scheduler); the pairs are the halves (rank i with i + NP/2) in both;
# - the same window (64, osu_mbw_mr's) and counts (osu_mbw_mr's: 100 windows after 10 up to 8 KiB, 20 after 2
#   above);
# - the same estimator: osu_mbw_mr divides all messages by the senders' summed window times, so ngauge's figure is
#   k x window over the mean window time (its median rate is printed beside it).
# Must hold (issue 39): ngauge's rate within osu_mbw_mr's own round-to-round spread of OSU's rate (the spread: its
# largest round less its smallest, over their median); the script exits 1 when one is outside.
#
# Environment: NGAUGE (the binary), OSU_DIR, OSU_MPICC (default mpicc), OSU_BIND (default "-bind-to core"),
# NP (2).
. "$(dirname "$0")/lib.sh" osu_mbw
set -u
rounds=${1:-5}
np=${NP:-2}
bench_need_mpi
read -r -a bind <<<"${OSU_BIND:--bind-to core}"

osu_build pt2pt osu_mbw_mr
echo "ngauge: $("$NGAUGE" --version); mpiexec ${bind[*]} -n $np; $rounds interleaved rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"

sizes="8 4096 65536"
counts() { [ "$1" -gt 8192 ] && echo "20 2" || echo "100 10"; }
pairs=$((np / 2))
for r in $(seq "$rounds"); do
	for s in $sizes; do
		read -r c w <<<"$(counts "$s")"
		mpiexec "${bind[@]}" -n "$np" "$NGAUGE" -x mpi -p mbw --mbw-pairs "$pairs" -s "$s" -c "$c" -w "$w" \
			-o "$T/ng.json" >/dev/null 2>"$T/ng.err" || { echo "ngauge mbw failed: $(tail -1 "$T/ng.err")"; exit 1; }
		# the row of all pairs: k x window x 1e6 / the mean window, and the median rate
		python3 - "$T/ng.json" "$pairs" >>"$T/ng-$s" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
x = [x for x in r["results"] if x["pairs"] == int(sys.argv[2])][0]
print("%.6g %.6g" % (x["pairs"] * r["mbw"]["window"] * 1e6 / x["time_us"]["mean"], x["message_rate_per_s"]["median"]))
EOF
		mpiexec "${bind[@]}" -n "$np" "$T/osu_mbw_mr" -p "$pairs" -W 64 -m "$s:$s" -i "$c" -x "$w" >"$T/osu.out" 2>&1 ||
			{ echo "osu_mbw_mr failed: $(tail -1 "$T/osu.out")"; exit 1; }
		fig=$(awk -v s="$s" '$1 == s && NF >= 3 { print $3 }' "$T/osu.out")
		[ -n "$fig" ] || { echo "osu_mbw_mr printed no rate for $s:"; tail -3 "$T/osu.out"; exit 1; }
		echo "$fig" >>"$T/osu-$s"
	done
done

echo
echo "aggregate message rate, $pairs pair(s), window 64: ngauge (k x window / mean window) against osu_mbw_mr's"
echo "Messages/s; must be within osu_mbw_mr's own round-to-round spread"
python3 - "$T" "$sizes" <<'EOF'
import statistics, sys
d, sizes = sys.argv[1], sys.argv[2].split()
bad = 0
for s in sizes:
    ng = [tuple(map(float, l.split())) for l in open("%s/ng-%s" % (d, s))]
    osu = [float(l) for l in open("%s/osu-%s" % (d, s))]
    ngm = statistics.median(x[0] for x in ng)
    ngmed = statistics.median(x[1] for x in ng)
    om = statistics.median(osu)
    spread = (max(osu) - min(osu)) / om
    ratio = ngm / om
    out = abs(ratio - 1) > spread
    bad += out
    print("%7s B  ngauge %12.0f msg/s (median rate %12.0f)  OSU %12.0f msg/s  ratio %.4f  OSU spread %.1f%%%s"
          % (s, ngm, ngmed, om, ratio, 100 * spread, "  OUTSIDE" if out else ""))
    print("    rounds: ngauge %s| OSU %s" % (" ".join("%.0f" % x[0] for x in ng), " ".join("%.0f" % x for x in osu)))
print("within osu_mbw_mr's spread" if not bad else "%d figure(s) NOT within osu_mbw_mr's spread" % bad)
sys.exit(1 if bad else 0)
EOF
rc=$?
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
