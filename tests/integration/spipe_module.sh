#!/bin/bash
# The spipe module (messages from ordinary memory over the RDMA layer) on every backend that opens here
# (shm, and libfabric's shm and tcp;ofi_rxm providers; the tcp provider binds 127.0.0.1 for local runs):
# every mode with --verify over odd sizes from 1 B to 16 MiB across the eager size, the chunk boundaries
# and the folding of chunks onto the buffers; what the result file says (model, predictions, fresh or
# reused memory, registration cache counters); bad input; a peer killed in the middle of a pipeline.
. "$(dirname "$0")/lib.sh"

"$NGAUGE" --list 2>/dev/null | grep -q '^ *spipe' || { echo "SKIP: module spipe not built"; exit 77; }
backends=shm
for prov in shm 'tcp;ofi_rxm'; do
	if "$NGAUGE" -x spipe --rdma-backend ofi --ofi-provider "$prov" -p pingpong -s 8 -c 2 -w 0 >/dev/null 2>&1; then
		backends="$backends ofi:$prov"
	fi
done

# Default settings (eager 8K, 3 x 1 MiB buffers, 4 KiB sub-blocks): odd sizes 1 B .. 16 MiB - 1 and the
# eager threshold; few repetitions (16 MiB messages).
SIZES=1,7,8191,8192,8193,65537,1000003,16777215
# Small sub-blocks and buffers with a fixed schedule: --rdma-eager 256, blocks of 1 KiB (1016 B of
# payload), C0 2032 and q 2 in buffers of 8 KiB (at most 8128 B a chunk): chunks 2032, 4064, 8128, 8128,
# ... end at 2032, 6096, 14224, 22352; every message above 14224 B wraps the 3 buffers.
SMALL="--rdma-eager 256 --spipe-block 1K --spipe-bufsize 8K"
# The first chunk and the growth factor are the superpipeline's only (pipeline's chunks are fixed).
SUPER_SCHEDULE="--spipe-c0 2032 --spipe-q 2"
EDGES=255,256,257,1015,1016,1017,2031,2032,2033,6095,6096,6097,14223,14224,14225,22353,100003,1000003

for spec in $backends; do
	be=${spec%%:*}
	prov=${spec#*:}
	set -- --rdma-backend "$be"
	if [ "$prov" != "$spec" ]; then set -- "$@" --ofi-provider "$prov"; else prov=""; fi
	for mode in reg rcache copy pipeline super; do
		run 0 "$NGAUGE" -x spipe "$@" --spipe-mode $mode -p pingpong -s $SIZES -c 3 -w 1 --verify \
			-o "$T/pp.json" &&
			pycheck "$T/pp.json" "$spec $mode: pingpong --verify, 1 B .. 16 MiB" '
assert r["complete"] and r["module"] == "spipe"
assert [row["size"] for row in r["results"]] == ['$SIZES']
b = r["spipe"]
assert b["mode"] == "'$mode'" and b["memory"] == "reused" and b["eager_bytes"] == 8192
m = b["model"]
for k in ("lambda_reg_us", "lambda_dereg_us", "lambda_net_us", "B_net_MBps", "g_us"):
    assert m[k] is not None and m[k] >= 0, k
assert len(m["B_copy_MBps"]) == 7 and all(x["MBps"] > 0 for x in m["B_copy_MBps"])
for row in r["results"]:
    assert row["count"] == 3 and stats_ok(row["latency_us"])
    assert row["predicted_us"] > 0
    by = row["predicted_us_by_mode"]
    if row["size"] > 8192:
        assert abs(by["'$mode'"] - row["predicted_us"]) < 1e-9 * row["predicted_us"]
        assert set(by) >= {"reg", "rcache", "copy", "pipeline", "super", "super_eq8", "super_eq9"}
    else:
        assert set(by) == {"eager"}
assert "spipe '$mode'" in r["env"]["device"] and "'$be'" in r["env"]["device"]
'
	done
	for mode in pipeline super; do
		sched=""
		[ $mode = super ] && sched=$SUPER_SCHEDULE
		run 0 "$NGAUGE" -x spipe "$@" --spipe-mode $mode $SMALL $sched -p pingpong -s $EDGES -c 3 -w 1 --verify \
			-o "$T/edges.json" &&
			pycheck "$T/edges.json" "$spec $mode: --verify across the eager size and the chunk edges" '
assert r["complete"] and len(r["results"]) == '$(echo $EDGES | tr , '\n' | wc -l)'
if "'$mode'" == "super":
    by = {row["size"]: row["predicted_us_by_mode"] for row in r["results"]}
    assert by[2032]["chunks"] == 1 and by[2033]["chunks"] == 2 and by[6096]["chunks"] == 2
    assert by[6097]["chunks"] == 3 and by[14225]["chunks"] == 4 and by[22353]["chunks"] == 5
    assert by[1000003]["largest_chunk_bytes"] == 8128
'
	done
done

# Three ranks, n:1 and 1:n (messages from several peers at once, their buffers apart).
run 0 "$NGAUGE" -x spipe --rdma-backend shm --rdma-poll yield -p n1 --np 3 -s 1,9K,300001 -c 10 --verify -o "$T/n1.json" &&
	pycheck "$T/n1.json" "shm super: n1 with 3 ranks --verify" 'assert r["complete"] and len(r["results"]) == 3'
run 0 "$NGAUGE" -x spipe --rdma-backend shm --rdma-poll yield --spipe-mode rcache -p 1n --np 3 -s 9K,300001 -c 10 --verify &&
	pass "shm rcache: 1n with 3 ranks --verify"

# The registration cache: steady state (hits) against --spipe-fresh (never a hit, and the result says so).
run 0 "$NGAUGE" -x spipe --rdma-backend shm --spipe-mode rcache -p pingpong -s 100000,1M -c 20 -w 2 -o "$T/rc.json" &&
	pycheck "$T/rc.json" "rcache: the second use of a buffer hits" '
c = r["spipe"]["rcache"]
# rank 0: its send and its receive buffer miss once per size (the 1 MiB message needs more pages
# than the first entry has), every other use hits
assert c["misses"] == 4 and c["hits"] == 2 * 2 * 22 - 4, c
'
run 0 "$NGAUGE" -x spipe --rdma-backend shm --spipe-mode rcache --spipe-fresh -p pingpong -s 100000,1M -c 20 -w 2 \
	--verify -o "$T/rcf.json" &&
	pycheck "$T/rcf.json" "rcache --spipe-fresh: misses every time, says fresh" '
b = r["spipe"]
assert b["memory"] == "fresh" and "never seen" in b["memory_note"]
assert b["rcache"]["hits"] == 0 and b["rcache"]["misses"] == 2 * 2 * 22, b["rcache"]
for row in r["results"]:
    by = row["predicted_us_by_mode"]
    assert abs(by["rcache"] - by["reg"]) < 1e-9 * by["reg"]
'

# Bad input: one line, exit 2.
run 2 "$NGAUGE" -x spipe --spipe-block 100 -p pingpong && grep -q "spipe-block" "$T/err" &&
	[ "$(wc -l <"$T/err")" -eq 1 ] && pass "--spipe-block 100 refused in one line" || fail "--spipe-block 100: $(cat "$T/err")"
run 2 "$NGAUGE" -x spipe --spipe-buffers 0 -p pingpong && grep -q "spipe-buffers" "$T/err" && pass "--spipe-buffers 0 refused"
run 2 "$NGAUGE" -x spipe --spipe-bufsize 6K -p pingpong && grep -q "multiple" "$T/err" && pass "--spipe-bufsize 6K refused"
run 2 "$NGAUGE" -x spipe --spipe-q 0.5 -p pingpong && grep -q "spipe-q" "$T/err" && pass "--spipe-q 0.5 refused"
run 2 "$NGAUGE" -x spipe --spipe-mode nosuch -p pingpong && grep -q "reg|rcache|copy|pipeline|super" "$T/err" &&
	pass "unknown mode: the choices named"
if [ "$backends" != shm ]; then
	# ofi stages every ring message whole (modules/rdmalayer/ofi_data.c), so a 64K eager size runs, checked byte by byte.
	run 0 "$NGAUGE" -x spipe --rdma-backend ofi --rdma-eager 64K -p pingpong -s 8,64K -c 20 -w 2 --verify &&
		pass "an eager size of 64K over ofi runs, verified" || fail "eager 64K over ofi: $(cat "$T/err")"
fi

# A peer killed in the middle of a pipeline: once the run has started (the result file holds the model),
# 16 MiB messages move all the time; the survivor names the lost rank within --timeout and exits 1.
wait_start() {
	for _ in $(seq 300); do
		[ -s "$1" ] && python3 -c 'import json,sys; sys.exit(0 if "spipe" in json.load(open(sys.argv[1])) else 1)' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
for mode in super copy; do
	rm -f "$T/k.json"
	setsid "$NGAUGE" -x spipe --rdma-backend shm --spipe-mode $mode -p pingpong -s 16M -c 100000 -w 1 --timeout 3 \
		-o "$T/k.json" >"$T/out" 2>"$T/err" &
	pid=$!
	if wait_start "$T/k.json"; then
		ranks=($(pgrep -P $pid))
		sleep 0.5
		start=$(date +%s.%N)
		kill -9 "${ranks[1]}"
		wait $pid
		rc=$?
		took=$(python3 -c "import time; print(time.time() - $start)")
		[ "$rc" -ne 0 ] && pass "$mode: killed rank, exit $rc" || fail "$mode: killed rank, exit 0"
		python3 -c "import sys; sys.exit(0 if $took < 3 + 3 else 1)" && pass "$mode: survivor ended in ${took%.*} s" ||
			fail "$mode: took $took s (--timeout 3)"
		grep -q "rank 1" "$T/err" && pass "$mode: the lost rank is named" || fail "$mode: lost rank not named: $(cat "$T/err")"
		pycheck "$T/k.json" "$mode: the result file is kept with complete: false" 'assert r["complete"] is False'
	else
		fail "$mode: the run did not start"
		kill -9 -$pid 2>/dev/null
	fi
done
finish
