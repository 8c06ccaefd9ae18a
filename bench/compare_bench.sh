#!/bin/bash
# `ngauge compare`'s false-alarm rate: REPS (default 20) pairs of emu runs over tcp with the same injected
# o_s (10 us), each pair compared at the default threshold (5%); a repetition passes when every size is
# "same" (exit 0).  The ground truth asks for at least 95% (19 of 20).  2000 samples per size (40 ms): one
# time slice taken by another process moves a minority of them, not the median.  Prints one line per
# repetition and the rate; exit 1 below 95%.
#   NGAUGE=build/ngauge bash bench/compare_bench.sh [REPS]
. "$(dirname "$0")/lib.sh" compare
REPS=${1:-20}
emu=(-x emu --emu-os 10 -p pingpong -s 1-4K -c 2000 --raw --pin 0,1)
same=0
for i in $(seq "$REPS"); do
	"$NGAUGE" "${emu[@]}" -o "$T/a.json" >/dev/null 2>&1 &&
		"$NGAUGE" "${emu[@]}" -o "$T/b.json" >/dev/null 2>&1 || { echo "rep $i: a run failed"; exit 1; }
	"$NGAUGE" compare "$T/a.json" "$T/b.json" >"$T/out"
	rc=$?
	n=$(grep -vc '^#' "$T/out")
	s=$(grep -v '^#' "$T/out" | awk '$NF == "same"' | wc -l)
	worst=$(grep -v '^#' "$T/out" | awk '{d = $5 - 1; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.4f", m}')
	echo "rep $i: exit $rc, $s of $n sizes same, largest |ratio - 1| $worst"
	[ "$rc" = 0 ] && [ "$s" = "$n" ] && same=$((same + 1))
done
rate=$((100 * same / REPS))
echo "compare: $same of $REPS repetitions same at every size ($rate%; ground truth: at least 95%)"
[ "$rate" -ge 95 ]
