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

# Stationarity: an emu run whose o_s grows with every send (--emu-os-drift, 10 ns a send: +10 us over the
# size, the halves' medians +5 us apart) is flagged "unstable", with one note on stderr; a steady one is not.
# The steady run's o_s is 50 us so that the 1% a shift must exceed (500 ns) lies above the wobble of the few
# tens of ns a shared host adds to every sample (seen: +95 ns between the halves of a 5 us run, p = 6e-44, a
# real drift of the host's, rightly flagged). A loaded host can make a steady run drift for real, and a burst
# of load in the first half of the planted run can cancel its drift (seen once: a sample of 17.7 ms): each is
# tried up to three times, the numbers of every try printed.
planted() {
	run 0 "$NGAUGE" -x emu --emu-os 5 --emu-os-drift 0.01 -p pingpong -s 1 -c 1000 -w 20 -o "$T/drift.json" &&
		python3 -c '
import json, sys
x = json.load(open(sys.argv[1]))["results"][0]
s, b = x["latency_us"], x["bandwidth_MBps"]
print("planted drift: median %.3f us, max %.1f us, unstable %s/%s" % (s["median"], s["max"], s.get("unstable"), b.get("unstable")))
sys.exit(0 if s.get("unstable") is True and b.get("unstable") is True else 1)' "$T/drift.json" &&
		[ "$(grep -c 'differs from the first' "$T/err")" = 1 ]
}
if planted || planted || planted; then
	pass "planted drift: flagged unstable, with one note"
else
	fail "planted drift: not flagged with one note in three tries: $(cat "$T/err")"
fi
steady() {
	run 0 "$NGAUGE" -x emu --emu-os 50 -p pingpong -s 1 -c 1000 -w 20 -o "$T/steady.json" &&
		python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["results"][0]["latency_us"]; sys.exit("unstable" in s)' "$T/steady.json"
}
if steady || steady || steady; then
	pass "steady emu run: not flagged"
else
	fail "steady emu run flagged unstable three times: $(cat "$T/err")"
fi

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
