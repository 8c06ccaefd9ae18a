#!/bin/bash
# pingpong's offered load (--rate, --load; doc/pingpong.md, "Offered load") over tcp:
#   - a rate far below what loopback serves (2,000 pings/s): sustained (in one of up to three attempts), the pongs came back at the offered rate
#     (within 5%), latencies of a few to tens of us, not the queue's milliseconds;
#   - --load 4, four times the measured burst peak: not sustained, one warning per size, the peak recorded and
#     the offer four times it;
#   - the bad combinations are usage errors, one line each.
. "$NGAUGE_SRC/tests/integration/lib.sh"

# A loaded host can hold a rank off its CPU for longer than the period (seen: a median of 800 us at a load
# average of 6 on 2 cores), which no open loop sustains: the run is made up to three times, each attempt's
# figures printed, and fails when none sustains the offer. A broken schedule fails every attempt.
low_ok=0
for attempt in 1 2 3; do
	run 0 "$NGAUGE" --np 2 -x tcp -p pingpong -s 8,4K -c 1000 -w 20 --rate 2000 -o "$T/low.json" || break
	schema_check "$T/low.json"
	if python3 - "$T/low.json" "$attempt" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
assert r["parameters"]["rate"] == 2000 and r["parameters"]["load"] == 0, r["parameters"]
ok = True
for x in r["results"]:
    assert x["offered_rate_per_s"] == 2000 and "peak_rate_per_s" not in x, x
    lat = x["latency_us"]
    assert lat["n"] == 1000 and 0 < lat["min"] <= lat["median"] <= lat["max"], lat
    print(f"attempt {sys.argv[2]}, {x['size']} B: achieved {x['achieved_rate_per_s']:.1f}/s, growth "
          f"{x['latency_growth_us']:.1f} us, median {lat['median']:.1f} us, sustained {x['sustained']}")
    # a queue of q messages adds q periods (500 us) to a round trip: none here
    ok = ok and (abs(x["achieved_rate_per_s"] / 2000 - 1) <= 0.05 and x["sustained"] is True
                 and x["latency_growth_us"] * 2 * 2000e-6 <= 2 and lat["median"] < 1000)
sys.exit(0 if ok else 1)
PY
		low_ok=1
		break
	fi
done
[ $low_ok = 1 ] && pass "--rate 2000: sustained, the offered rate came back (attempt $attempt)" ||
	fail "--rate 2000: sustained, the offered rate came back (in none of $attempt attempts)"
if run 0 "$NGAUGE" --np 2 -x tcp -p pingpong -s 8,4K -c 2000 -w 20 --load 4 -o "$T/high.json"; then
	pycheck "$T/high.json" "--load 4: not sustained, the offer four times the measured peak" '
for x in r["results"]:
    assert x["sustained"] is False, x
    assert abs(x["offered_rate_per_s"] / x["peak_rate_per_s"] - 4) < 1e-6, x
    assert (x["achieved_rate_per_s"] < 0.95 * x["offered_rate_per_s"]
            or x["latency_growth_us"] * 2 * x["offered_rate_per_s"] * 1e-6 > 2), x
'
	[ "$(grep -c "the offered load was not sustained" "$T/err")" = 2 ] &&
		pass "--load 4: one warning per size on stderr" || fail "--load 4: warnings: $(cat "$T/err")"
fi
bad() { # WHY ARGS...
	local why=$1
	shift
	run 2 "$NGAUGE" --np 2 -x tcp -p pingpong -s 8 -c 10 "$@" -o "$T/bad.json" &&
		[ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$why" "$T/err" &&
		pass "pingpong $*: exit 2, one line" || fail "pingpong $*: $(cat "$T/err")"
}
bad "two ways to say one thing" --rate 100 --load 0.5
bad "not with --verify" --rate 100 --verify
bad "--rate must be" --rate -5
finish
