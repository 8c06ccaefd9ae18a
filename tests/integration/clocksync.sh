#!/bin/bash
# The global clock (doc/clock.md): a known skew injected into rank 1 on one host is recovered by --sync
# force (offset within its bound and 1 us; drift within the fit's bound and, from both phases, within 2 ppm,
# over a ~30 s run); 8 ranks over tcp are synchronised in bounded time (under 1 s is the benchmark clock-fit);
# auto on one host needs no model; --sync off writes no "clock" block.
. "$(dirname "$0")/lib.sh"

# ~30 s of ping-pong (1 byte, tcp asleep in the kernel) between the fit and the check.
if NGAUGE_TEST_CLOCK_SKEW=1:1000:50 run 0 "$NGAUGE" -x tcp -p pingpong -s 1 -c 1200000 -w 10 --timer clock \
	--sync force --sync-check -o "$T/skew.json"; then
	pycheck "$T/skew.json" "injected 1000 us / 50 ppm recovered: offset within its bound and 1 us, drift within its bound and 2 ppm over both phases" '
c = r["clock"]
assert c["sync"] == "force" and c["model"] == "fitted", c
r0, r1 = c["ranks"]
assert r0["rank"] == 0 and r0["offset_us"] == 0 and r0["drift_ppm"] == 0 and "injected" not in r0, r0
inj, ck = r1["injected"], r1["check"]
assert inj["drift_ppm"] == 50 and abs(inj["offset_us"] - 1000) < 50, inj
err = r1["offset_us"] - inj["offset_us"]
print("rank 1: offset %.4f us (injected %.4f, error %+.4f, bound %.3f), drift %.3f ppm (injected 50, bound %.3f), "
      "min rtt %.2f us, residual %.3f us, fit %.3f s" % (r1["offset_us"], inj["offset_us"], err,
      r1["bound_us"], r1["drift_ppm"], r1["drift_bound_ppm"], r1["min_rtt_us"], r1["residual_us"], c["sync_s"]))
print("check after %.1f s: error %+.4f us (bound %.3f), drift from both phases %.4f ppm, injected offset "
      "then %.3f us" % (ck["at_s"], ck["error_us"], ck["bound_us"], ck["drift_ppm"], ck["injected_offset_us"]))
assert abs(err) <= r1["bound_us"] and abs(err) <= 1.0, err
# the first fit: its drift (0.3 s of exchanges) within its own bound, and that bound tells a drift of 50 ppm from
# none (at load 7 its residual grew to 2.9 us and its bound to 21 ppm: drift 47.86); over both phases, 2 ppm
assert abs(r1["drift_ppm"] - 50) <= r1["drift_bound_ppm"] + 0.2 and r1["drift_bound_ppm"] < 25, r1
assert 0 < r1["bound_us"] < 100 and r1["min_rtt_us"] > 0, r1
assert ck["at_s"] >= 10, ck
assert abs(ck["drift_ppm"] - 50) <= 2.0, ck
# the model predicts the offset at the end within the bounds of the fit (grown by the drift bound) and of the check
assert abs(ck["error_us"]) <= r1["bound_us"] + r1["drift_bound_ppm"] * ck["at_s"] + ck["bound_us"], ck
# and the offset measured at the end is the injected one then
pred = r1["offset_us"] + r1["drift_ppm"] * 1e-6 * ck["at_s"] * 1e6 + ck["error_us"]
assert abs(pred - ck["injected_offset_us"]) <= 1.0 + ck["bound_us"], (pred, ck)
'
	grep -q "^# clock: model of 2 ranks fitted" "$T/out" && pass "the table head says the model was fitted" ||
		fail "no '# clock:' line for the fitted model"
fi

# 8 ranks over tcp (asleep in the kernel, not spinning), fitted along a binomial tree: in bounded time (the
# target, under 1 s, is the benchmark clock-fit's: 8 ranks on a loaded 2-core host may take longer here).  Timer clock: the ranks
# read one CLOCK_MONOTONIC_RAW, so every true offset is 0 (with the TSC, each rank's calibration differs by
# parts per million, an offset of many microseconds after days of uptime, which the model rightly shows).
if run 0 "$NGAUGE" -x tcp -p n1 --np 8 -s 1 -c 20 --timer clock --sync force -o "$T/eight.json"; then
	pycheck "$T/eight.json" "8 ranks synchronised within 10 s, each within its bound of the shared clock" '
c = r["clock"]
assert c["model"] == "fitted" and len(c["ranks"]) == 8, c
print("8 ranks: fit %.3f s, largest bound %.2f us, offsets %s us" % (c["sync_s"], c["bound_us"],
      ", ".join("%.2f" % e["offset_us"] for e in c["ranks"])))
assert c["sync_s"] < 10.0, c["sync_s"]
for e in c["ranks"]:
    assert abs(e["offset_us"]) <= e["bound_us"] and abs(e["drift_ppm"]) <= max(2.0, e["drift_bound_ppm"]), e
    assert "injected" not in e, e
# the binomial tree: each rank fitted against its rank with the highest bit cleared, its bound at least its
# parent bound (the bounds add along the path)
for e in c["ranks"][1:]:
    i = e["rank"]
    assert e["parent"] == i - (1 << (i.bit_length() - 1)) and e["depth"] == bin(i).count("1"), e
    assert e["bound_us"] >= c["ranks"][e["parent"]]["bound_us"], e
'
fi

# auto on one host: the clock is shared, no model; off: no block at all, as before the option.
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1 -c 20 -o "$T/auto.json"; then
	pycheck "$T/auto.json" "auto on one host: shared clock, no model" '
c = r["clock"]
assert c["sync"] == "auto" and c["model"] == "shared" and "one host" in c["reason"] and "ranks" not in c, c
assert r["parameters"]["sync"] == "auto" and r["parameters"]["sync-check"] is False
'
	grep -q "^# clock: no model (one host" "$T/out" && pass "the table head says the clock is shared" ||
		fail "no '# clock: no model' line"
fi
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1 -c 20 --sync off --sync-check -o "$T/off.json"; then
	pycheck "$T/off.json" "--sync off: no clock block" '
assert "clock" not in r and r["parameters"]["sync"] == "off"
'
	grep -q "^# clock" "$T/out" && fail "--sync off printed a clock line" || pass "--sync off prints no clock line"
fi
NGAUGE_TEST_CLOCK_SKEW=junk run 2 "$NGAUGE" -x tcp -p pingpong -s 1 -c 20 -o "$T/bad.json" &&
	grep -q "NGAUGE_TEST_CLOCK_SKEW" "$T/err" && pass "a malformed skew is refused" || true

schema_check "$T"/*.json
[ "$FAILS" = 0 ]
