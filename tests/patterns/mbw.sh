#!/bin/bash
# mbw (multi-pair message rate, one way, as osu_mbw_mr): 1..K pairs between two nodes, each pair's window of
# sends acknowledged by its receiver, every message checked by the receiver.
#   tcp:  8 local ranks, halves: pairs 1, 2, 3, 4; --mbw-pairs 2 stops at 2; --ranks-per-node 3 on 6 ranks: nodes
#         of 3, 3 pairs; a bad window is a usage error.
#   mpi:  (argument "mpi") the same over the mpi module under mpiexec -n 4 and -n 8.
# Content: the pair counts and sizes of the rows, the receiver's checked iterations, the aggregate message rate
# and bandwidth from the same windows (bandwidth / rate = the size), one per-pair entry per active pair, each
# naming a sender on node 0 and its receiver on node 1, the block's nodes.
. "$NGAUGE_SRC/tests/integration/lib.sh"

CHECK='
rows = r["results"]
b = r["mbw"]
assert r["complete"] and r["pattern"] == "mbw", r.keys()
assert b["ack_bytes"] == 1 and b["window"] == W and b["max_pairs"] == K, b
assert [(x["pairs"], x["size"]) for x in rows] == [(k, s) for k in range(1, K + 1) for s in (8, 4096)], rows
for x in rows:
    assert stats_ok(x["time_us"]) and stats_ok(x["message_rate_per_s"]) and stats_ok(x["bandwidth_MBps"]), x
    # one sample set: bandwidth (MB/s) / rate (messages/s) is the size in MB
    ratio = x["bandwidth_MBps"]["median"] / x["message_rate_per_s"]["median"]
    assert abs(ratio - x["size"] * 1e-6) < 1e-9 * x["size"], (ratio, x["size"])
    # the rate is k x window over the slowest window: k x window x 1e6 / the median time (as the file rounds it)
    want = x["pairs"] * W * 1e6 / x["time_us"]["median"]
    assert abs(x["message_rate_per_s"]["median"] - want) <= 1e-3 * want, (x["message_rate_per_s"], want)  # rounding
    assert x["verified"] == VER, x
    pp = x["per_pair"]
    assert [p["pair"] for p in pp] == list(range(x["pairs"])), pp
    for p in pp:
        assert p["sender"] in b["nodes"][0] and p["receiver"] in b["nodes"][1], (p, b)
        assert b["nodes"][0].index(p["sender"]) == b["nodes"][1].index(p["receiver"]) == p["pair"], (p, b)
        # a pair is never faster than the run: its own median window is not above the slowest rank median
        assert p["message_rate_per_s"] >= x["message_rate_per_s"]["median"] / x["pairs"] * 0.999, (p, x)
'

mbw() { # NAME K W VER LAUNCH... -- ARGS...
	local name=$1 k=$2 w=$3 ver=$4
	shift 4
	# an odd count: the medians of time and rate are one window's
	run 0 "$@" -p mbw -s 8,4K -c 21 -w 2 --mbw-window "$w" -o "$T/$name.json" || return
	pycheck "$T/$name.json" "mbw $name: $k pairs, rows, rates and pairs" "K, W, VER = $k, $w, $ver
$CHECK"
}

if [ "${1:-}" = mpi ]; then
	command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
	"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }
	mbw mpi4 2 16 24 mpiexec -n 4 "$NGAUGE" -x mpi --verify
	mbw mpi8 4 8 24 mpiexec -n 8 "$NGAUGE" -x mpi --verify
	finish
fi

mbw tcp8 4 16 24 "$NGAUGE" --np 8 -x tcp --verify
grep -qE "^# mbw: median aggregate message rate" "$T/out" && grep -qE "^ +4K( +[0-9]+){4}$" "$T/out" &&
	pass "mbw tcp8: the summary of message rates by pairs" || fail "mbw tcp8: no summary table"
# without --verify only the first, untimed iteration is checked
mbw tcp4 2 64 1 "$NGAUGE" --np 4 -x tcp
mbw pairs2 2 4 1 "$NGAUGE" --np 8 -x tcp --mbw-pairs 2
if run 0 "$NGAUGE" --np 6 -x tcp -p mbw --ranks-per-node 3 -s 64 -c 5 -w 1 --verify -o "$T/rpn.json"; then
	pycheck "$T/rpn.json" "mbw --ranks-per-node 3 on 6 ranks: nodes [0,1,2] and [3,4,5], 3 pairs" '
b = r["mbw"]
assert b["nodes"] == [[0, 1, 2], [3, 4, 5]] and b["membership"] == "virtual" and b["max_pairs"] == 3, b
assert [x["pairs"] for x in r["results"]] == [1, 2, 3], r["results"]
'
fi
run 2 "$NGAUGE" --np 2 -x tcp -p mbw --mbw-window 0 &&
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "mbw-window must be" "$T/err" &&
	pass "mbw --mbw-window 0: exit 2, one line" || fail "mbw --mbw-window 0: $(cat "$T/err")"
finish
