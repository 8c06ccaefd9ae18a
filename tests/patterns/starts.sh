#!/bin/bash
# Synchronised starts (doc/clock.md): n1 over tcp on one host starts every size at a time agreed on the global
# clock, and every row says how far apart the ranks actually started (start_spread_us), whether a rank came
# after the start time (start_late) and how far the clock can be off (start_bound_us).
#
#   - the shared clock, 3 clients (--np 4): every row has the three keys, the bound is the timer's
#     resolution; the spread below 5 us (issue 25's Must-hold) is judged where the host has a core for every
#     spinning rank (cores left idle by the rest of the host, measured before the runs), best of three runs;
#     on fewer the values are printed, not judged (a rank without a core at the start time starts when one
#     frees: tens of us on 2 cores).
#   - the same mechanism with one client (--np 2): below 5 us in one of up to five runs during which the rest
#     of the host left both cores free (its CPU time measured around each run; other runs printed, not judged).
#   Judged runs pin each rank to a CPU of its own (--pin, as the run's not-pinned warning asks): unpinned, the
#   scheduler can wake two ranks onto one core while the other idles, and one starts late (start_late says so).
#   Even pinned, this host's virtual CPUs lose tens of us to other work a few hundred times a second, and one
#   such gap across a start of three makes a run's spread: about one pinned run in six here, hence best of
#   five.
#   - a skew of 1,000 us and 50 ppm injected into rank 1 with --sync force --timer clock: a fitted model, the
#     rows still carry the spread, the bound is the two largest offset bounds of the model grown to the start
#     (at least the largest rank's bound); the spread within the bound where the cores suffice.
#   - --sync off: no clock block, none of the three keys, the rows' keys as they were before starts existed.
. "$NGAUGE_SRC/tests/integration/lib.sh"

SIZES=1,1K,64K

# idle: the cores left idle by everything else on the host (over one second, from /proc/stat), rounded down;
# a spread is judged only where every spinning rank can have a core of its own at the start time
idle() {
	python3 -c '
import time
def snap():
    f = open("/proc/stat").readline().split()[1:]
    v = [int(x) for x in f]
    return sum(v), v[3] + v[4]
import os
t0, i0 = snap(); time.sleep(1); t1, i1 = snap()
print(int((i1 - i0) / (t1 - t0) * os.cpu_count() + 0.2))'
}
CORES=$(idle)
echo "cores idle before the runs: $CORES of $(nproc)"

# The host is shared (meson runs another test beside this one): a run is judged only if the rest of the host
# took less than 0.2 of a core while it ran: the host's busy time (/proc/stat) less this shell's children's
# CPU time, over the run's wall time.  snap sets SNAP to "busy_s wall_s children_s"; bash's times must run in
# this shell (in a subshell it counts the subshell's own children), so its output goes through a file.
snap() {
	times >"$T/times"
	SNAP="$(python3 -c '
import os, re, sys, time
f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
m = [float(a or 0) * 60 + float(b) for a, b in re.findall(r"(?:(\d+)m)?([\d.]+)s", open(sys.argv[1]).read().splitlines()[1])]
print("%.3f %.6f %.3f" % ((sum(f) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK"), time.monotonic(), sum(m)))' "$T/times")"
}
others_begin() { snap; OTHERS0=$SNAP; }
# others_end: BUSY_OTHERS, the cores the rest of the host took since others_begin
others_end() {
	snap
	BUSY_OTHERS=$(python3 -c '
import sys
b0, t0, c0, b1, t1, c1 = map(float, sys.argv[1:])
print("%.2f" % max(0.0, ((b1 - b0) - (c1 - c0)) / max(t1 - t0, 1e-3)))' $OTHERS0 $SNAP)
}
# quiet X: exit 0 when X (cores the others took) is below 0.2
quiet() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 0.2 else 1)' "$1"; }

# spreads FILE: the rows' start spreads, one line
spreads() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join("%s:%.2f%s" % (x["size"], x["start_spread_us"], "(late)" if x["start_late"] else "")
               for x in r["results"]), "bound %.3g us" % max(x["start_bound_us"] for x in r["results"]))' "$1"
}

# below FILE LIMIT: exit 0 when every row's spread is below LIMIT us
below() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if all(x["start_spread_us"] < float(sys.argv[2]) for x in r["results"]) else 1)' "$1" "$2"
}

KEYS='
rows = r["results"]
assert r["complete"] and rows and [x["size"] for x in rows] == [1, 1024, 65536], rows
for x in rows:
    assert x["clients"] == r["ranks"] - 1, x
    assert isinstance(x["start_late"], bool), x
    assert math.isfinite(x["start_spread_us"]) and x["start_spread_us"] >= 0, x
    assert math.isfinite(x["start_bound_us"]) and x["start_bound_us"] > 0, x
    assert stats_ok(x["time_us"]), x
'

# pin NP: --pin with a CPU for each of NP ranks where the machine has that many CPUs
pin() { [ "$(nproc)" -ge "$1" ] && echo "--pin $(seq -s, 0 $(($1 - 1)))"; }

# 1. the shared clock, 3 clients
for try in 1 2 3; do
	run 0 "$NGAUGE" --np 4 $(pin 4) -x tcp -p n1 -s $SIZES -c 300 -w 20 -o "$T/shared$try.json" || break
	echo "n1 --np 4, shared clock, run $try: spreads (us) $(spreads "$T/shared$try.json")"
	below "$T/shared$try.json" 5 && break
done
pycheck "$T/shared$try.json" "n1 --np 4, shared clock: every row has start_spread_us, start_late, start_bound_us" "$KEYS"'
assert r["clock"]["model"] == "shared", r["clock"]
for x in rows:
    assert abs(x["start_bound_us"] - r["timer"]["resolution_ns"] * 1e-3) < 1e-9, x
'
if [ "$CORES" -ge 4 ]; then
	below "$T/shared$try.json" 5 && pass "n1 --np 4, shared clock: every row's spread below 5 us" ||
		fail "n1 --np 4, shared clock: a spread of 5 us or more in each of three runs"
else
	echo "note: n1 --np 4: the 5 us spread not judged: 4 spinning ranks, $CORES idle cores (values above)"
fi

# 2. the mechanism where every rank has a core: judged on the runs during which the rest of the host left both
# cores free (up to eight runs, five judged; a run beside another test's work is printed, not judged)
judged=0 good=0
for try in 1 2 3 4 5 6 7 8; do
	others_begin
	run 0 "$NGAUGE" --np 2 $(pin 2) -x tcp -p n1 -s $SIZES -c 300 -w 20 -o "$T/two$try.json" || break
	others_end; busy_others=$BUSY_OTHERS
	echo "n1 --np 2, shared clock, run $try: spreads (us) $(spreads "$T/two$try.json"), others took $busy_others cores"
	if [ "$CORES" -ge 2 ] && quiet "$busy_others"; then
		judged=$((judged + 1))
		below "$T/two$try.json" 5 && { good=1; break; }
		[ "$judged" -ge 5 ] && break
	fi
done
if [ "$good" = 1 ]; then
	pass "n1 --np 2, shared clock: every row's spread below 5 us (run $try)"
elif [ "$judged" -gt 0 ]; then
	fail "n1 --np 2, shared clock: a spread of 5 us or more in each of $judged run(s) with both cores free"
else
	echo "note: n1 --np 2: the 5 us spread not judged: no run had 2 cores free of other work (values above)"
fi

# 3. a known skew and a fitted model
SKEW='
c = r["clock"]
assert c["model"] == "fitted" and c["ranks"][1]["injected"]["drift_ppm"] == 50, c
b = sorted((x["bound_us"] for x in c["ranks"]), reverse=True)
d = sorted((x["drift_bound_ppm"] for x in c["ranks"]), reverse=True)
for x in rows:
    # the two largest offset bounds, grown by the drift bounds to the start (within a minute of the fit)
    assert b[0] + b[1] <= x["start_bound_us"] <= b[0] + b[1] + (d[0] + d[1]) * 60, (x["start_bound_us"], b, d)
'
within() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if all(x["start_spread_us"] <= x["start_bound_us"] for x in r["results"]) else 1)' "$1"
}
for np in 4 2; do
	judged=0 good=0
	for try in 1 2 3 4 5; do
		others_begin
		NGAUGE_TEST_CLOCK_SKEW=1:1000:50 run 0 "$NGAUGE" --np $np $(pin $np) -x tcp -p n1 -s $SIZES -c 300 -w 20 \
			--timer clock --sync force -o "$T/skew$np-$try.json" || break
		others_end; busy_others=$BUSY_OTHERS
		echo "n1 --np $np, skew 1000 us / 50 ppm, --sync force, run $try: spreads (us)" \
			"$(spreads "$T/skew$np-$try.json"), others took $busy_others cores"
		[ "$CORES" -ge "$np" ] && quiet "$busy_others" || { [ "$try" -ge 3 ] && break; continue; }
		judged=$((judged + 1))
		within "$T/skew$np-$try.json" && { good=1; break; }
		[ "$judged" -ge 3 ] && break
	done
	pycheck "$T/skew$np-$try.json" "n1 --np $np, skew, --sync force: the rows carry the spread and the model's bound" \
		"$KEYS$SKEW"
	if [ "$good" = 1 ]; then
		pass "n1 --np $np, skew, --sync force: every spread within the clock model's bound (run $try)"
	elif [ "$judged" -gt 0 ]; then
		fail "n1 --np $np, skew, --sync force: a spread beyond the model's bound in each of $judged run(s) with the cores free"
	else
		echo "note: n1 --np $np, skew: the spread against the bound not judged: $np spinning ranks, no run with" \
			"$np cores free of other work"
	fi
done

# 4. --sync off: a barrier, no new keys
if run 0 "$NGAUGE" --np 4 -x tcp -p n1 -s $SIZES -c 100 --sync off -o "$T/off.json"; then
	pycheck "$T/off.json" "n1 --np 4, --sync off: no clock block and the rows as before (no start keys)" '
assert "clock" not in r, r.keys()
for x in r["results"]:
    assert set(x) == {"size", "count", "time_us", "bandwidth_per_client_MBps", "aggregate_bandwidth_MBps",
                      "clients", "server", "per_client"}, sorted(x)
'
	if run 0 "$NGAUGE" --np 3 -x tcp -p 1n -s 1,1K -c 50 --sync off -o "$T/off1n.json"; then
		pycheck "$T/off1n.json" "1n --np 3, --sync off: no start keys" '
assert all("start_spread_us" not in x and "start_late" not in x for x in r["results"]), r["results"]
'
	fi
fi
if run 0 "$NGAUGE" --np 3 -x tcp -p 1n -s 1,1K -c 50 -o "$T/on1n.json"; then
	pycheck "$T/on1n.json" "1n --np 3, shared clock: every row has the start keys" '
assert all("start_spread_us" in x and "start_bound_us" in x for x in r["results"]), r["results"]
'
	echo "1n --np 3, shared clock: spreads (us) $(spreads "$T/on1n.json")"
fi

finish
