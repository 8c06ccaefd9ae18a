#!/bin/bash
# Accuracy of the calibrated computation of the overlap and skew patterns:
# how long X microseconds of computation really take, timed by the pattern
# around every computation (compute_measured_us), against X, over lengths
# from 10 us to 2 ms, in BENCH_ROUNDS runs (default 3) of
#   ngauge -x tcp -p overlap --overlap-side both --overlap-compute 0,10,100,1000,2000
# Printed per run and length: the median measured length / X for each rank,
# and the calibration's change between the start and the end of the run.
#
# Requirement checked: the median over the runs of every length's ratio is
# within 5% of 1 (the clock of a CPU may change by a few percent during a
# run: that is what the recheck shows).  Exit 1 otherwise.
set -u
. "$(dirname "$0")/lib.sh" compute
rounds=${BENCH_ROUNDS:-3}
for ((i = 1; i <= rounds; i++)); do
	timeout -k 5 300 "$NGAUGE" -x tcp -p overlap --overlap-side both --overlap-compute 0,10,100,1000,2000 \
		-s 64 -c 200 -w 10 --pin 0,1 -o "$T/run$i.json" >"$T/out" 2>"$T/err" || {
		echo "run $i failed:" >&2
		tail -3 "$T/err" >&2
		exit 1
	}
done
python3 - "$T" "$rounds" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
ratios = {}
for i in range(1, rounds + 1):
    r = json.load(open(f"{d}/run{i}.json"))
    cal = ", ".join(f"rank {c['rank']} {c['iters_per_us']:.1f} -> {c['iters_per_us_end']:.1f} it/us "
                    f"({100 * c['change']:+.1f}%)" for c in r["overlap"]["compute"]["ranks"])
    print(f"run {i}: calibration {cal}")
    for row in r["results"]:
        x = row["compute_us"]
        if x <= 0:
            continue
        q = row["compute_measured_us"]["median"] / x
        ratios.setdefault(x, []).append(q)
        print(f"  {row['side']:>8} X {x:7.1f} us: measured {row['compute_measured_us']['median']:9.2f} us, ratio {q:.4f}")
bad = 0
for x, qs in sorted(ratios.items()):
    m = statistics.median(qs)
    ok = abs(m - 1) <= 0.05
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} X {x:7.1f} us: median measured / asked {m:.4f} (target within 5%)")
sys.exit(1 if bad else 0)
PY
