#!/bin/bash
# congestion (GPCNeT's congestion impact factor): victims alone and beside congestors, over tcp with 8 local ranks.
#   --verify: every victim and congestor payload checked, incast and alltoall congestors at once (2 victims);
#   congestors only (--cong-victims 0); a bad victim count, an unsupported congestor and -s are one-line usage errors.
#   mpi:  (argument "mpi") the --verify run over the mpi module under mpiexec -n 8.
# Content: phases alternate isolated / congested for every round and victim kind; the isolated phases carry no
# congestor message and the congested ones some, with each group's rate > 0; the block's impact factors of the
# median and p99 are congested / isolated of its distributions, each with a 95% interval around it; the
# congestor-only run reports a rate for each phase and no impact.
. "$NGAUGE_SRC/tests/integration/lib.sh"

CHECK='
rows, b = r["results"], r["congestion"]
assert r["complete"] and r["pattern"] == "congestion", r.keys()
kinds = ["lat", "bw"]
want = [(k, p, rd) for rd in range(R) for k in kinds for p in ("isolated", "congested")]
assert [(x["victim"], x["phase"], x["round"]) for x in rows] == want, [(x["victim"], x["phase"], x["round"]) for x in rows]
assert len(b["victims"]) == 2 and sorted(g["type"] for g in b["groups"]) == sorted(GROUPS), b
assert sorted(b["victims"] + sum((g["ranks"] for g in b["groups"]), [])) == list(range(8)), b
for x in rows:
    assert x["count"] == C and x["pairs"] == 1, x
    assert x["verified"] > 0, x
    key = "latency_us" if x["victim"] == "lat" else "time_us"
    assert stats_ok(x[key]), x
    assert len(x["congestors"]) == len(GROUPS), x
    if x["phase"] == "isolated":
        # congestors sat the phase out: no congestor message at all
        assert x["congestor_messages"] == 0 and all(g["messages"] == 0 for g in x["congestors"]), x
    else:
        assert x["congestor_messages"] > 0, x
        for g in x["congestors"]:
            assert g["messages"] > 0 and g["rate_MBps"] > 0 and g["seconds"] > 0, g
assert [i["victim"] for i in b["impact"]] == kinds, b["impact"]
for i in b["impact"]:
    iso, con = i["isolated"], i["congested"]
    assert iso["count"] == con["count"] == R * C, i
    for q, m in (("p50", "median"), ("p99", "p99")):
        f, (lo, hi) = i[m]["factor"], i[m]["ci95"]
        assert abs(f - con[q] / iso[q]) <= 1e-3 * f, (m, i)
        assert 0 < lo <= hi and lo <= f * 1.0001 and f <= hi * 1.0001, (m, i)
for g in b["congestor_rates"]:
    assert g["phases"] == R * len(kinds) and g["median_MBps"] > 0 and g["min_MBps"] > 0, g
'

R=3
C=50
if [ "${1:-}" = mpi ]; then
	command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
	"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }
	run 0 mpiexec -n 8 "$NGAUGE" -x mpi -p congestion --verify -c $C -w 2 --cong-rounds $R --cong-victims 2 \
		--cong-congestors incast,alltoall --cong-size 8K --cong-bw-size 16K -o "$T/mpi8.json" &&
		pycheck "$T/mpi8.json" "congestion mpi8 --verify: phases, isolation, rates, impact intervals" "R, C, GROUPS = $R, $C, ['incast', 'alltoall']
$CHECK"
	run 2 "$NGAUGE" --np 8 -x tcp -p congestion -s 1K &&
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "\-s does not apply" "$T/err" &&
	pass "congestion -s 1K: exit 2, one line" || fail "congestion -s 1K: $(cat "$T/err")"
finish
fi
if run 0 "$NGAUGE" --np 8 -x tcp -p congestion --verify -c $C -w 2 --cong-rounds $R \
	--cong-victims 2 --cong-congestors incast,alltoall --cong-size 8K --cong-bw-size 16K -o "$T/c8.json"; then
	pycheck "$T/c8.json" "congestion tcp8 --verify: phases, isolation, rates, impact intervals" "R, C, GROUPS = $R, $C, ['incast', 'alltoall']
$CHECK"
	grep -qE "^  lat +[0-9.]+ +[0-9.]+ +[0-9.]+ \[ *[0-9.]+, *[0-9.]+\]" "$T/out" &&
		grep -qE "^  incast +[0-9]+ +[0-9.]+$" "$T/out" &&
		pass "congestion tcp8: the impact table on stdout" || fail "congestion tcp8: no impact table: $(cat "$T/out")"
fi
# the default victims (20% of 8 = 2), bcast congestors
if run 0 "$NGAUGE" --np 8 -x tcp -p congestion -c $C -w 2 --cong-rounds $R --cong-congestors bcast \
	--cong-size 4K --cong-bw-size 4K -o "$T/bc.json"; then
	pycheck "$T/bc.json" "congestion tcp8 bcast, 20% victims" "R, C, GROUPS = $R, $C, ['bcast']
$CHECK"
fi
# congestors only
if run 0 "$NGAUGE" --np 6 -x tcp -p congestion --verify -c 20 --cong-rounds 2 --cong-victims 0 \
	--cong-congestors incast,alltoall --cong-size 4K -o "$T/co.json"; then
	pycheck "$T/co.json" "congestion --cong-victims 0: congestors only, their rates" '
rows, b = r["results"], r["congestion"]
assert [(x["victim"], x["phase"]) for x in rows] == [("none", "congestors")] * 2, rows
assert b["victims"] == [] and b["impact"] == [], b
for x in rows:
    assert x["verified"] > 0 and x["congestor_messages"] > 0, x
    for g in x["congestors"]:
        assert g["rate_MBps"] > 0 and g["messages"] > 0, g
# incast: 20 iterations of window x (members - 1) messages
inc = [g for g in rows[0]["congestors"] if g["type"] == "incast"][0]
assert inc["messages"] == 20 * 8 * (inc["ranks"] - 1), inc
assert all(g["phases"] == 2 and g["median_MBps"] > 0 for g in b["congestor_rates"]), b
'
fi
run 2 "$NGAUGE" --np 8 -x tcp -p congestion --cong-victims 3 &&
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "an even count" "$T/err" &&
	pass "congestion --cong-victims 3: exit 2, one line" || fail "congestion --cong-victims 3: $(cat "$T/err")"
run 2 "$NGAUGE" --np 8 -x tcp -p congestion --cong-congestors rma-incast &&
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "rma-incast is not supported" "$T/err" &&
	pass "congestion rma-incast: exit 2, one line" || fail "congestion rma-incast: $(cat "$T/err")"
run 2 "$NGAUGE" --np 8 -x tcp -p congestion -s 1K &&
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "\-s does not apply" "$T/err" &&
	pass "congestion -s 1K: exit 2, one line" || fail "congestion -s 1K: $(cat "$T/err")"
finish
