#!/bin/bash
# Distributions: every STATS carries the --percentiles (null where the count cannot support one, "-" in the
# table), --histogram writes each STATS's buckets, and the quantiles the buckets give agree with the exact
# ones of the --raw samples within 1%; bad lists are refused.
. "$(dirname "$0")/lib.sh"

# quantile(buckets) as analysis/hist.c computes it: GSL's interpolation, order statistics read as their
# bucket's midpoint, clamped to [min, max] (both exact)
HISTQ='
def hist_q(h, lo_, hi_, n, q):
    def order(k):
        if k == 0: return lo_
        if k + 1 >= n: return hi_
        seen = h["nonpositive"]
        if k < seen: return lo_
        for lo, hi, c in h["buckets"]:
            seen += c
            if k < seen: return min(max((lo + hi) / 2, lo_), hi_)
        return hi_
    pos = q * (n - 1); j = int(pos); f = pos - j
    a = order(j)
    return a if f == 0 or j + 1 >= n else a + f * (order(j + 1) - a)
def exact_q(x, q):
    x = sorted(x); pos = q * (len(x) - 1); j = int(pos); f = pos - j
    return x[j] if j + 1 >= len(x) else x[j] + f * (x[j + 1] - x[j])
'

if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,4K -c 2000 -w 20 --raw --histogram -o "$T/pp.json"; then
	pycheck "$T/pp.json" "pingpong: default percentiles, p99.99 null at n = 2000, histogram quantiles within 1%" "
$HISTQ
assert r['parameters']['percentiles'] == '50,90,99,99.9,99.99' and r['parameters']['histogram'] is True
for row in r['results']:
    lat, raw, h = row['latency_us'], row['raw']['latency_us'], row['histogram']['latency_us']
    assert lat['n'] == 2000 and lat['p50'] == lat['median'] and lat['p99.99'] is None, lat
    assert abs(lat['p90'] - exact_q(raw, 0.9)) <= 1e-9 * lat['p90'] and abs(lat['p99.9'] - exact_q(raw, 0.999)) <= 1e-9 * lat['p99.9']
    assert h['buckets_per_octave'] == 128 and sum(c for _, _, c in h['buckets']) + h['nonpositive'] == 2000, h
    for lo, hi, c in h['buckets']:
        assert hi - lo <= lo / 128 * (1 + 1e-9), (lo, hi)
    for q in (0.5, 0.9, 0.99, 0.999, 0.9999):
        got, want = hist_q(h, lat['min'], lat['max'], 2000, q), exact_q(raw, q)
        assert abs(got - want) <= 0.01 * want, (row['size'], q, got, want)
    assert set(row['histogram']) == {'latency_us', 'bandwidth_MBps'}, row['histogram'].keys()
"
	# the table keeps its columns (p99) without --percentiles
	grep -q "ci95_total(median) *p99 *\[latency_us\]" "$T/out" && pass "table: p99 without --percentiles" ||
		fail "table without --percentiles: $(head -2 "$T/out")"
fi

if run 0 "$NGAUGE" -x tcp -p bw -s 64 -c 50 -w 2 --percentiles 10,50,99.9 -o "$T/bw.json"; then
	pycheck "$T/bw.json" "--percentiles 10,50,99.9: those keys, p99.9 null with 50 samples" "
for row in r['results']:
    for k in ('bandwidth_MBps', 'messages_per_s', 'time_us'):
        s = row[k]
        assert s['p10'] is not None and s['p50'] == s['median'] and s['p99.9'] is None, s
        assert 'p90' not in s and 'p99.99' not in s and 'histogram' not in row, s
"
	grep -qE "^# .* p10 +p50 +p99.9 " "$T/out" && grep -qE "^ +64 +50 .* -( |$)" "$T/out" &&
		pass "table: the chosen percentiles, '-' for p99.9" || fail "table with --percentiles: $(cat "$T/out")"
fi

# every pattern's STATS carry them (the sampler makes every STATS)
for p in "1n --np 3" "n1 --np 3" "bibw" "alltoall --np 3" "mpbibw --np 4"; do
	if run 0 "$NGAUGE" -x tcp -p $p -s 8 -c 20 -w 1 -o "$T/p.json"; then
		pycheck "$T/p.json" "$p: every STATS has p50 and p90" "
def walk(v):
    if isinstance(v, dict):
        if 'median' in v and 'ci95' in v:
            assert 'p50' in v and 'p90' in v and 'p99.9' in v and v['p99.9'] is None, v
            yield 1
        for x in v.values(): yield from walk(x)
    elif isinstance(v, list):
        for x in v: yield from walk(x)
assert sum(walk(r['results'])) >= 2
"
	fi
done

# Stationarity: an emu run whose o_s grows with every send (--emu-os-drift, 10 ns a send: +10 us over a
# size, the halves' medians +5 us apart) is flagged "unstable" at every size, and said in one line after the
# table that counts the flagged rows ("3 of 3 sizes drifted ..."); with --verbose a line for each size as
# well; a steady one is not flagged.
# The steady run's o_s is 50 us so that the 1% a shift must exceed (500 ns) lies above the wobble of the few
# tens of ns a shared host adds to every sample (seen: +95 ns between the halves of a 5 us run, p = 6e-44, a
# real drift of the host's, rightly flagged). A loaded host can make a steady run drift for real, and a burst
# of load in the first half of the planted run can cancel its drift (seen once: a sample of 17.7 ms): each is
# tried up to three times, the numbers of every try printed.
planted() {
	run 0 "$NGAUGE" -x emu --emu-os 5 --emu-os-drift 0.01 -p pingpong -s 1,2,4 -c 1000 -w 20 $1 -o "$T/drift.json" &&
		python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
for x in rows:
    s, b = x["latency_us"], x["bandwidth_MBps"]
    print("planted drift: size %d: median %.3f us, max %.1f us, unstable %s/%s" % (x["size"], s["median"], s["max"], s.get("unstable"), b.get("unstable")))
sys.exit(0 if all(x["latency_us"].get("unstable") is True and x["bandwidth_MBps"].get("unstable") is True for x in rows) else 1)' "$T/drift.json" &&
		[ "$(grep -c 'pingpong: 3 of 3 sizes drifted between the halves of their samples' "$T/err")" = 1 ] &&
		[ "$(grep -c 'warning: pingpong: ' "$T/err")" = "$2" ] &&
		[ "$(grep -c 'differs from the first' "$T/err")" = "$3" ]
}
if planted "" 1 0 || planted "" 1 0 || planted "" 1 0; then
	pass "planted drift: every size flagged unstable, one line after the table counting them"
else
	fail "planted drift: not flagged with one summary line in three tries: $(cat "$T/err")"
fi
if planted --verbose 4 3 || planted --verbose 4 3 || planted --verbose 4 3; then
	pass "planted drift with --verbose: a line for each size and the summary"
else
	fail "planted drift with --verbose: not a line per size and one summary in three tries: $(cat "$T/err")"
fi
# A steady run flagged is judged by its own samples (--raw, in the order measured): the flag is wrong only
# when the halves' medians lie within 1% of the median or a rank test of the halves does not give p < 1e-3
# (the rule of analysis/stats.c, recomputed here); a flag the samples bear out is the host's drift (seen at
# load 10-25, three times in a row), and the run is tried again, up to three times. Exit status of steady:
# 0 not flagged, 1 wrongly flagged, 3 rightly flagged.
steady() {
	run 0 "$NGAUGE" -x emu --emu-os 50 -p pingpong -s 1 -c 1000 -w 20 --raw -o "$T/steady.json" &&
		python3 - "$T/steady.json" <<'PY'
import json, math, statistics, sys
x = json.load(open(sys.argv[1]))["results"][0]
if "unstable" not in x["latency_us"]:
    sys.exit(0)
v = x["raw"]["latency_us"]
h = len(v) // 2
a, b = v[:h], v[h:2 * h]
shift, med = statistics.median(b) - statistics.median(a), statistics.median(v)
# Mann-Whitney U of the halves, normal approximation with ties and continuity (as analysis/stats.c)
ranked = sorted((y, k) for k, y in enumerate(a + b))
ranks, i = [0.0] * (2 * h), 0
ties = 0.0
while i < 2 * h:
    j = i
    while j < 2 * h and ranked[j][0] == ranked[i][0]:
        j += 1
    for k in range(i, j):
        ranks[ranked[k][1]] = (i + j + 1) / 2.0
    ties += (j - i) ** 3 - (j - i)
    i = j
n = 2.0 * h
u = sum(ranks[:h]) - h * (h + 1) / 2.0
var = h * h / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)))
z = (abs(u - h * h / 2.0) - 0.5) / math.sqrt(var) if var > 0 else 0.0
p = math.erfc(z / math.sqrt(2.0)) if z > 0 else 1.0
right = p < 1e-3 and abs(shift) > 0.01 * abs(med)
print("steady run flagged: halves' medians %.3f us apart (%.2f%% of %.3f us), p = %.2g: %s" % (
      shift, 100.0 * shift / med, med, p, "the samples bear it out" if right else "WRONG"))
sys.exit(3 if right else 1)
PY
}
verdict=""
for try in 1 2 3; do
	steady
	verdict=$?
	[ $verdict = 3 ] || break
done
case $verdict in
0) pass "steady emu run: not flagged" ;;
3) pass "steady emu run: flagged three times, each time borne out by its samples (the host drifted)" ;;
*) fail "steady emu run flagged unstable against its own samples: $(cat "$T/err")" ;;
esac

refused() {
	if run 2 "$NGAUGE" -x tcp -p pingpong -s 1 -c 5 --percentiles "$1" && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		grep -qF -- "$2" "$T/err"; then
		pass "--percentiles '$1' refused: $(cat "$T/err")"
	else
		fail "--percentiles '$1': expected one line with '$2', got: $(cat "$T/err")"
	fi
}
refused 50,,90 "empty item"
refused 50, "empty item"
refused 0,50 "'0' is not a percentage above 0 and below 100"
refused 100 "'100' is not a percentage"
refused 1e1 "'1e1' is not a percentage"
refused 90,50 "'50' does not follow 90"
refused 1,2,3,4,5,6,7,8,9,10,11,12,13 "more than 12 percentiles"

finish
