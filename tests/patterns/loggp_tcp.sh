#!/bin/bash
# loggp and plogp over tcp (and over mpi when this build and host have it):
# the parameter table on stdout, the "loggp"/"plogp" blocks with per-segment
# values and 95% CIs, per-size rows, and never a negative or NaN parameter.
. "$NGAUGE_SRC/tests/integration/lib.sh"

check_loggp() { # FILE WHAT
	pycheck "$1" "$2" '
import math
b = r["loggp"]
assert r["pattern"] == "loggp" and r["complete"] is True
sizes = [row["size"] for row in r["results"]]
assert sizes == [e["size"] for e in b["sizes"]] and sizes == sorted(sizes), sizes
for row in r["results"]:
    for k in ("prtt1_us", "prttn_us", "prttnd_us"): assert stats_ok(row[k]), (k, row)
assert b["n"] == 16 and len(b["segments"]) >= 1
assert b["segments"][0]["from"] == sizes[0] and b["segments"][-1]["to"] == sizes[-1]
assert b["breakpoints"] == [s["from"] for s in b["segments"][1:]]
def P(p):
    if p["value"] is None:
        assert isinstance(p["flag"], str) and p["flag"], p
        return
    v, (lo, hi) = p["value"], p["ci95"]
    assert math.isfinite(v) and v >= 0 and lo >= 0 and lo <= v and (hi is None or v <= hi), p
    if "note" in p: assert "clamped to 0" in p["note"] and v == 0 and lo == 0, p
for s in b["segments"]:
    for k in ("L_us", "o_s_us", "o_r_us", "g_us", "G_us_per_byte"): P(s[k])
# (A parameter may be 0 clamped or flagged: on a busy host a small g or L,
# fitted across regimes from few sizes, can come out below 0.  The ground-truth
# tests check values; this one checks the contract.)
assert b["loggopsim"].startswith("-L ") and " -S " in b["loggopsim"], b["loggopsim"]
# systematic bounds: every time STATS and every parameter carries them, and ci95_total contains ci95
t = r["timer"]
for row in r["results"]:
    for k in ("prtt1_us", "prttn_us", "prttnd_us", "o_r_us"):
        s, u = row[k], row[k]["uncertainty"]
        assert abs(u["timer_resolution"] - t["resolution_ns"] * 1e-3) < 1e-9, (k, u)
        assert abs(u["timer_overhead"] - t["overhead_ns"] * 1e-3) < 1e-9, (k, u)
        lo, hi = s["ci95_total"]
        tol = 1e-8 * max(abs(lo), abs(hi)) + 1e-9  # the file keeps 10 significant digits
        assert abs((s["ci95"][0] - lo) - sum(u.values())) < tol and abs((hi - s["ci95"][1]) - sum(u.values())) < tol, (k, s)
for seg in b["segments"]:
    for k in ("L_us", "o_s_us", "o_r_us", "g_us"):
        p = seg[k]
        if p["value"] is None: continue
        (lo, hi), (tlo, thi) = p["ci95"], p["ci95_total"]
        assert "timer_overhead" in p["uncertainty"], (k, p)
        assert tlo <= lo and (hi is None or (thi is not None and thi >= hi)) and tlo >= 0, (k, p)
'
}

if run 0 "$NGAUGE" -x tcp -p loggp -s 1-64K:x4 -c 10 -o "$T/l.json"; then
	check_loggp "$T/l.json" "loggp over tcp: block, segments, CIs, uncertainty and ci95_total, no negative parameter"
	grep -q "^# LogGP parameters.*(ci95_total)" "$T/out" && grep -q "G \[GB/s\]" "$T/out" && grep -q "^# LogGOPSim: -L" "$T/out" &&
		pass "loggp parameter table on stdout" || fail "no loggp parameter table on stdout"
	grep -Eq "(^| )-[0-9]|nan" <(sed -n '/^# sizes  /,/^# breakpoints/p' "$T/out") &&
		fail "negative or NaN value in the parameter table" || pass "no negative or NaN value in the table"
fi

if run 0 "$NGAUGE" -x tcp -p plogp -s 1-64K:x4 -c 10 -o "$T/p.json"; then
	pycheck "$T/p.json" "plogp over tcp: L and per-size g, o_s, o_r with CIs" '
import math
b = r["plogp"]
assert [e["size"] for e in b["sizes"]] == [4 ** i for i in range(9)]
def P(p):
    if p["value"] is None:
        assert p["flag"]; return
    assert math.isfinite(p["value"]) and p["value"] >= 0 and p["ci95"][0] <= p["value"], p
P(b["L_us"])
assert b["sizes"][0]["L_us"] == b["L_us"], (b["sizes"][0]["L_us"], b["L_us"])  # L is L(m0)
for e in b["sizes"]:
    for k in ("g_us", "o_s_us", "o_r_us", "L_us"): P(e[k])
    assert e["o_s_us"]["value"] is not None and e["o_s_us"]["value"] > 0, e
for row in r["results"]:
    for k in ("rtt_us", "o_s_us", "o_r_us"): assert stats_ok(row[k]), (k, row)
'
	grep -q "^# pLogP parameters" "$T/out" && pass "plogp table on stdout" || fail "no plogp table on stdout"
fi

# Adaptive sampling within a budget: no -c, a 2 s budget for 9 sizes.
if run 0 "$NGAUGE" -x tcp -p loggp -s 1-64K:x4 --loggp-budget 2 -o "$T/a.json"; then
	pycheck "$T/a.json" "loggp adaptive: at least 8 rounds per size, at most 1000" '
for row in r["results"]: assert 8 <= row["count"] <= 1000, row["count"]
'
fi

if [ -n "$(command -v mpiexec)" ] && "$NGAUGE" --list | grep -q "^  mpi "; then
	if run 0 timeout -k 5 100 mpiexec -n 2 "$NGAUGE" -x mpi -p loggp -s 1-1M:x16 -c 8 -o "$T/m.json"; then
		check_loggp "$T/m.json" "loggp over mpi"
	fi
else
	echo "skip: no MPI here (loggp over mpi not checked)"
fi
finish
