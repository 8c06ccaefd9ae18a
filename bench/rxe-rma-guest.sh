#!/bin/bash
# Inside the Soft-RoCE guest (bench/rxe_rma_bench.sh boots it): the rma module's direct design over the
# verbs backend, its scheduling options against none, interleaved in one boot. Each round runs
#   -p rma --rma-test put-pingpong --rma-sync pscw -s 8       with --rma-sched none, then aggregate
#   -p rma --rma-test get-pingpong --rma-sync pscw -s 8       with --rma-sched none, then aggregate
#   -p rma --rma-test sched-1 --rma-sync pscw -s 8,64K        with --rma-sched none, then reorder
# (COUNT iterations each, two ranks, --rdma-poll yield: Soft-RoCE works in kernel threads that spinning
# ranks would starve). The medians over ROUNDS rounds are compared: put aggregation at most 0.8x none's time
# per epoch (one message fewer per epoch: the puts travel with the completion); get aggregation against none
# (the scheduling paper's Fig. 10: the get's request travels with the completion and the target's wait
# answers it, instead of an RDMA read and the done write) and reorder against none on the scheduling paper's
# pattern 1 (16 puts + 16 gets per epoch, where reads and writes share one emulated link) are reported, no
# ratio demanded. The device is emulated: only the ratios mean anything.
#
#   rxe-rma-guest.sh ROUNDS COUNT [NGAUGE OPTION...]
set -u
N=${NGAUGE:-${NGAUGE_BUILD:?}/ngauge}
rounds=${1:-3}
count=${2:-500}
shift 2
W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-rxerma.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT

# run NAME SCHED TEST SIZES: appends "NAME SIZE MEDIAN" lines (time_us per epoch) to $W/all
run() {
	timeout 300 "$N" -x rma --rdma-backend verbs --rdma-poll yield --rma-sched "$2" -p rma --rma-test "$3" \
		--rma-sync pscw -s "$4" -c "$count" -w 50 -o "$W/r.json" "${@:5}" >/dev/null 2>"$W/err" ||
		{ echo "$1 failed:"; sed 's/^/    /' "$W/err"; return 1; }
	python3 - "$W/r.json" "$1" >>"$W/all" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(sys.argv[2], r["size"], r["time_us"]["median"])
PY
}

for r in $(seq "$rounds"); do
	run pp-none none put-pingpong 8 "$@" && run pp-aggregate aggregate put-pingpong 8 "$@" &&
		run gp-none none get-pingpong 8 "$@" && run gp-aggregate aggregate get-pingpong 8 "$@" &&
		run s1-none none sched-1 8,64K "$@" && run s1-reorder reorder sched-1 8,64K "$@" || exit 1
	echo "round $r: $(awk -v r="$r" '{ n[$1" "$2] = $3 } END { for (k in n) printf "%s %s  ", k, n[k] }' "$W/all")"
done
python3 - "$W/all" <<'PY'
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, size, t = line.split()
    v[(name, int(size))].append(float(t))
m = {k: statistics.median(x) for k, x in v.items()}
pp, agg = m[("pp-none", 8)], m[("pp-aggregate", 8)]
ok = agg / pp <= 0.8
print(f"put ping-pong 8 B, pscw: aggregate {agg:.2f} us against none {pp:.2f} us per epoch: ratio "
      f"{agg / pp:.3f} ({'within' if ok else 'NOT within'} 0.8x)")
gp, gagg = m[("gp-none", 8)], m[("gp-aggregate", 8)]
print(f"get ping-pong 8 B, pscw: aggregate {gagg:.2f} us against none {gp:.2f} us per epoch: ratio "
      f"{gagg / gp:.3f} (reported)")
for size in sorted({s for (n, s) in m if n == "s1-none"}):
    a, b = m[("s1-reorder", size)], m[("s1-none", size)]
    print(f"sched-1 (16 puts + 16 gets) {size} B, pscw: reorder {a:.2f} us against none {b:.2f} us per "
          f"epoch: ratio {a / b:.3f} (reported)")
sys.exit(0 if ok else 1)
PY
