#!/bin/bash
# ngauge side by side with the OSU Micro-Benchmarks over MPI, 2 ranks: the
# pingpong pattern's mean half round trip against osu_latency's average at
# 1 B, 16 KiB, 64 KiB and 1 MiB, and the bw pattern against osu_bw at 64 KiB
# and 1 MiB.  osu_latency and osu_bw are built here from the OSU source tree
# that OSU_DIR points to (7.x: c/mpi/pt2pt/standard, c/util; older: mpi/pt2pt,
# util), with the mpicc of the MPI that ngauge uses; nothing is installed.
#
#   OSU_DIR=/path/to/osu-micro-benchmarks-7.4 bench/osu_bench.sh [ROUNDS]
#
# Skipped (exit 77) without OSU_DIR, mpiexec or an MPI build.  ROUNDS (3)
# interleaved rounds, each running every measurement of both tools once; the
# figure of a tool is the median of its rounds, and each round's figures are
# printed too.  Like with like:
# - the same launcher and placement for both: mpiexec -bind-to core;
# - the same counts per size: osu_latency's and osu_bw's own defaults (latency
#   10000 iterations after 100 up to 8 KiB, 1000 after 10 above; bandwidth
#   100 windows after 10 up to 8 KiB, 20 after 2 above), times OSU_SCALE,
#   given to both;
# - the same estimator: osu_latency averages the half round trips, so
#   ngauge's "mean" is compared (its median is printed beside it); osu_bw
#   divides all bytes by all the time, so ngauge's figure is window x size
#   over the mean window time (its median per-window bandwidth is printed);
# - the same buffer use: ngauge's defaults (--pp-echo separate, one buffer per
#   side for a bw window) are OSU's.
# Must hold: pingpong within 2% of osu_latency, bw within 3% of osu_bw; the
# script exits 1 when a ratio is outside.
#
# Environment: NGAUGE (the binary), OSU_DIR, OSU_MPICC (default mpicc),
# OSU_BIND (mpiexec placement options, default "-bind-to core"), OSU_PREFIX
# (a command both tools' mpiexec runs under, e.g. "chrt -f 10" on a host that
# others share: the ranks then wait for no one, and neither tool is favoured),
# OSU_SCALE (1: every count times this; longer runs average out more of what
# other processes do to a shared host).
. "$(dirname "$0")/lib.sh" osu
set -u
rounds=${1:-3}
bench_need_mpi
read -r -a bind <<<"${OSU_BIND:--bind-to core}"
read -r -a prefix <<<"${OSU_PREFIX:-}"
scale=${OSU_SCALE:-1}
case $scale in '' | *[!0-9]* | 0) echo "OSU_SCALE must be a positive whole number"; exit 2 ;; esac

# ---- build osu_latency and osu_bw ----------------------------------------
osu_build pt2pt osu_latency osu_bw
echo "ngauge: $("$NGAUGE" --version); launch: ${prefix[*]:+${prefix[*]} }mpiexec ${bind[*]}; $rounds interleaved rounds; counts x $scale; load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the rounds ----------------------------------------------------------
lat_sizes="1 16384 65536 1048576"
bw_sizes="65536 1048576"
# osu_latency's and osu_bw's own counts
lat_counts() { [ "$1" -gt 8192 ] && echo "$((1000 * scale)) $((10 * scale))" || echo "$((10000 * scale)) $((100 * scale))"; }
bw_counts() { [ "$1" -gt 8192 ] && echo "$((20 * scale)) $((2 * scale))" || echo "$((100 * scale)) $((10 * scale))"; }

# ngfig FILE KIND: "VALUE MEDIAN" of the first row (KIND lat: mean and median
# half round trip; bw: window x size / mean time and the median bandwidth).
ngfig() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
x = json.load(open(sys.argv[1]))["results"][0]
if sys.argv[2] == "lat":
    print("%.6g %.6g" % (x["latency_us"]["mean"], x["latency_us"]["median"]))
else:
    print("%.6g %.6g" % (x["window"] * x["size"] / x["time_us"]["mean"], x["bandwidth_MBps"]["median"]))
EOF
}
# osufig OUTPUT SIZE: the figure OSU printed for SIZE
osufig() { awk -v s="$2" '$1 == s && NF >= 2 { print $2 }' "$1"; }

for r in $(seq "$rounds"); do
	for s in $lat_sizes; do
		read -r c w <<<"$(lat_counts "$s")"
		"${prefix[@]}" mpiexec "${bind[@]}" -n 2 "$NGAUGE" -x mpi -p pingpong -s "$s" -c "$c" -w "$w" -o "$T/ng.json" \
			>/dev/null || { echo "ngauge pingpong failed"; exit 1; }
		echo "$(ngfig "$T/ng.json" lat)" >>"$T/ng-lat-$s"
		"${prefix[@]}" mpiexec "${bind[@]}" -n 2 "$T/osu_latency" -m "$s:$s" -i "$c" -x "$w" >"$T/osu.out" ||
			{ echo "osu_latency failed"; exit 1; }
		osufig "$T/osu.out" "$s" >>"$T/osu-lat-$s"
	done
	for s in $bw_sizes; do
		read -r c w <<<"$(bw_counts "$s")"
		"${prefix[@]}" mpiexec "${bind[@]}" -n 2 "$NGAUGE" -x mpi -p bw -s "$s" -c "$c" -w "$w" -o "$T/ng.json" >/dev/null ||
			{ echo "ngauge bw failed"; exit 1; }
		echo "$(ngfig "$T/ng.json" bw)" >>"$T/ng-bw-$s"
		"${prefix[@]}" mpiexec "${bind[@]}" -n 2 "$T/osu_bw" -m "$s:$s" -i "$c" -x "$w" >"$T/osu.out" ||
			{ echo "osu_bw failed"; exit 1; }
		osufig "$T/osu.out" "$s" >>"$T/osu-bw-$s"
	done
done

# ---- the table -------------------------------------------------------------
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
bad=0
report() { # KIND SIZE UNIT LIMIT
	local kind=$1 s=$2 unit=$3 limit=$4 ng ngmed osu ratio
	ng=$(cut -d' ' -f1 "$T/ng-$kind-$s" | median)
	ngmed=$(cut -d' ' -f2 "$T/ng-$kind-$s" | median)
	osu=$(median <"$T/osu-$kind-$s")
	ratio=$(awk -v a="$ng" -v b="$osu" 'BEGIN {printf "%.4f", a / b}')
	printf "%-9s %8d B  ngauge %10.3f %s (median %10.3f)  OSU %10.3f %s  ratio %s%s\n" \
		"$([ "$kind" = lat ] && echo latency || echo bandwidth)" "$s" "$ng" "$unit" "$ngmed" "$osu" "$unit" \
		"$ratio" "$(awk -v q="$ratio" -v l="$limit" 'BEGIN { if (q > 1 + l || q < 1 - l) print "  OUTSIDE"; }')"
	printf "    rounds: ngauge %s| OSU %s\n" "$(cut -d' ' -f1 "$T/ng-$kind-$s" | tr '\n' ' ')" \
		"$(tr '\n' ' ' <"$T/osu-$kind-$s")"
	awk -v q="$ratio" -v l="$limit" 'BEGIN { exit !(q > 1 + l || q < 1 - l) }' && bad=1
}
echo
echo "pingpong mean half round trip vs osu_latency (must be within 2%); bw vs osu_bw (within 3%), MB = 10^6 B"
for s in $lat_sizes; do report lat "$s" us 0.02; done
for s in $bw_sizes; do report bw "$s" MB/s 0.03; done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$bad" = 0 ] && echo "within the targets" || { echo "NOT within the targets"; exit 1; }
