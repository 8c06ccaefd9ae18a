#!/bin/bash
# The offered load (--rate, --load; patterns/engine/offered.h) over tcp, of pingpong (doc/pingpong.md, "Offered
# load": half round trips) and of bw (doc/bandwidth.md, "Offered load": one way on the shared clock):
#   - a rate far below what loopback serves (2,000 messages/s): sustained (in one of up to three attempts), the
#     answers (pingpong) or messages (bw) came back at the offered rate (within 5%), latencies of a few to
#     hundreds of us, not the queue's milliseconds; bw: a sample per message (-c windows x --bw-window), the
#     totals counting the closed warm-up windows too;
#   - --load 4, four times the measured peak (pingpong: a burst of pings; bw: one closed window): not
#     sustained, one warning per size, the peak recorded and the offer four times it;
#   - the bad combinations are usage errors, one line each (bw also under --sync off, without a common clock
#     to time a message from its scheduled departure, and bibw, which does not take --rate).
. "$NGAUGE_SRC/tests/integration/lib.sh"

# sustained NAME CHECK ARGS...: ngauge ARGS -o low.json up to three times, until the python CHECK (the file and
# the attempt as its arguments) exits 0. A loaded host can hold a rank off its CPU for longer than the period
# (seen: a median of 800 us at a load average of 6 on 2 cores), which no open loop sustains: each attempt's
# figures are printed, and the check fails when none sustains the offer. A broken schedule fails every attempt.
sustained() {
	local name=$1 check=$2 attempt ok=0
	shift 2
	for attempt in 1 2 3; do
		run 0 "$NGAUGE" "$@" -o "$T/low.json" || break
		schema_check "$T/low.json"
		if python3 - "$T/low.json" "$attempt" <<<"$check"; then
			ok=1
			break
		fi
	done
	[ $ok = 1 ] && pass "$name (attempt $attempt)" || fail "$name (in none of $attempt attempts)"
}

# the check of a sustained run of either pattern at 2,000 messages/s (-c 1000 pings; bw: -c 10 windows of 64, -w 2)
LOW='
import json, sys
r = json.load(open(sys.argv[1]))
bw = r["pattern"] == "bw"
assert r["parameters"]["rate"] == 2000 and r["parameters"]["load"] == 0, r["parameters"]
ok = True
for x in r["results"]:
    assert x["offered_rate_per_s"] == 2000 and "peak_rate_per_s" not in x, x
    lat = x["latency_us"]
    assert lat["n"] == (640 if bw else 1000) and 0 < lat["min"] <= lat["median"] <= lat["max"], lat
    if bw:  # a sample per message; the receiver counted the 2 closed warm-up windows too
        assert "bandwidth_MBps" not in x and "time_us" not in x and x["count"] == 640, x
        assert x["messages"] == 12 * 64 and x["bytes"] == 12 * 64 * x["size"] and x["warmup"] == 2, x
        assert abs(x["achieved_MBps"] / (x["achieved_rate_per_s"] * x["size"] * 1e-6) - 1) < 1e-6, x  # 10 digits
    print("attempt %s, %s %d B: achieved %.1f/s, growth %.1f us, median %.1f us, sustained %s"
          % (sys.argv[2], r["pattern"], x["size"], x["achieved_rate_per_s"], x["latency_growth_us"], lat["median"],
             x["sustained"]))
    # a queue of q messages adds q periods (500 us) to a message (pingpong: half of it to a half round trip)
    ok = ok and (abs(x["achieved_rate_per_s"] / 2000 - 1) <= 0.05 and x["sustained"] is True
                 and x["latency_growth_us"] * (1 if bw else 2) * 2000e-6 <= 2 and lat["median"] < 1000)
sys.exit(0 if ok else 1)
'
sustained "pingpong --rate 2000: sustained, the offered rate came back" "$LOW" \
	--np 2 -x tcp -p pingpong -s 8,4K -c 1000 -w 20 --rate 2000
sustained "bw --rate 2000: sustained, the offered rate arrived, a sample per message" "$LOW" \
	--np 2 -x tcp -p bw -s 8,4K -c 10 -w 2 --bw-window 64 --rate 2000

# high PATTERN ARGS...: --load 4 is not sustained, with one warning per size
high() {
	local pattern=$1
	shift
	run 0 "$NGAUGE" --np 2 -x tcp -p "$pattern" -s 8,4K --load 4 "$@" -o "$T/high.json" || return
	pycheck "$T/high.json" "$pattern --load 4: not sustained, the offer four times the measured peak" '
per = 2 if r["pattern"] == "pingpong" else 1  # periods of the schedule a queued message adds to a sample
for x in r["results"]:
    assert x["sustained"] is False, x
    assert abs(x["offered_rate_per_s"] / x["peak_rate_per_s"] - 4) < 1e-6, x
    assert (x["achieved_rate_per_s"] < 0.95 * x["offered_rate_per_s"]
            or x["latency_growth_us"] * per * x["offered_rate_per_s"] * 1e-6 > 2), x
    if r["pattern"] == "bw":  # the warm-up windows and the peak window count in the totals
        assert x["messages"] == 23 * 64, x
'
	[ "$(grep -c "the offered load was not sustained" "$T/err")" = 2 ] &&
		pass "$pattern --load 4: one warning per size on stderr" ||
		fail "$pattern --load 4: warnings: $(cat "$T/err")"
}
high pingpong -c 2000 -w 20
high bw -c 20 -w 2

bad() { # WHY ARGS...
	local why=$1
	shift
	run 2 "$NGAUGE" --np 2 -x tcp -s 8 -c 10 "$@" -o "$T/bad.json" &&
		[ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$why" "$T/err" &&
		pass "$*: exit 2, one line" || fail "$*: $(cat "$T/err")"
}
bad "two ways to say one thing" -p pingpong --rate 100 --load 0.5
bad "not with --verify" -p pingpong --rate 100 --verify
bad "--rate must be" -p pingpong --rate -5
bad "two ways to say one thing" -p bw --rate 100 --load 0.5
bad "not with --verify" -p bw --rate 100 --verify
bad "no common clock" -p bw --rate 100 --sync off
bad "not of tcp or bibw" -p bibw --rate 100
finish
