#!/bin/bash
# The rdma module (two-sided channel over the RDMA layer) on every backend that opens here:
# --verify over the patterns that run on it, 2 and 4 ranks, bad input, a killed peer.
. "$(dirname "$0")/lib.sh"

backends=$("$NGAUGE" --list 2>/dev/null | grep -q '^ *rdma' && echo shm)
[ -n "$backends" ] || { echo "SKIP: module rdma not built"; exit 77; }
if [ -n "${NGAUGE_RDMA_BACKENDS:-}" ]; then
	# The caller names the backends (the Soft-RoCE guest: verbs).
	backends=$NGAUGE_RDMA_BACKENDS
else
	# libfabric's shm and tcp;ofi_rxm providers where they open (the tcp provider
	# binds 127.0.0.1 for local runs: nothing leaves loopback).
	for prov in shm 'tcp;ofi_rxm'; do
		if "$NGAUGE" -x rdma --rdma-backend ofi --ofi-provider "$prov" -p pingpong -s 8 -c 5 -w 1 >/dev/null 2>&1; then
			backends="$backends ofi:$prov"
		fi
	done
fi

# Repetitions: NGAUGE_RDMA_COUNT for the two-rank ping-pong (default 100), the others in proportion
# (an emulated device takes a lower count); NGAUGE_RDMA_KILL_COUNT for the run whose peer is killed (long
# enough to be killed before it ends); NGAUGE_RDMA_OPTS are added to every run's options.
C=${NGAUGE_RDMA_COUNT:-100}
cnt() {
	local v=$((C * $1 / 100))
	echo $((v > 2 ? v : 2))
}

for spec in $backends; do
	be=${spec%%:*}
	prov=${spec#*:}
	# shellcheck disable=SC2086
	set -- --rdma-backend "$be" ${NGAUGE_RDMA_OPTS:-}
	if [ "$prov" != "$spec" ]; then set -- "$@" --ofi-provider "$prov"; else prov=""; fi
	# Odd sizes across the eager size (8K) and the ring's wrap (32 slots), every byte checked.
	if run 0 "$NGAUGE" -x rdma "$@" -p pingpong -s 0,1,7,4093,8191,8192,8193,65537,1000003 -c "$C" -w 5 --verify -o "$T/pp.json"; then
		pycheck "$T/pp.json" "$spec: pingpong --verify, 9 odd sizes" '
assert r["complete"] and r["module"] == "rdma"
assert [row["size"] for row in r["results"]] == [0, 1, 7, 4093, 8191, 8192, 8193, 65537, 1000003]
for row in r["results"]:
    assert row["count"] == '"$C"' and stats_ok(row["latency_us"])
assert "'$be'" in r["env"]["device"] and "'$prov'" in r["env"]["device"]
'
	fi
	# Four ranks in pairs, and 1:n / n:1 with three (yielding: more ranks than cores).
	run 0 "$NGAUGE" -x rdma "$@" --rdma-poll yield -p pingpong --np 4 -s 3,17K -c "$(cnt 50)" --verify -o "$T/pp4.json" &&
		pycheck "$T/pp4.json" "$spec: pingpong with 4 ranks --verify" 'assert r["complete"] and len(r["results"]) == 2'
	for p in n1 1n; do
		run 0 "$NGAUGE" -x rdma "$@" --rdma-poll yield -p $p --np 3 -s 1,9K,100K -c "$(cnt 20)" --verify -o "$T/$p.json" &&
			pycheck "$T/$p.json" "$spec: $p with 3 ranks --verify" 'assert r["complete"] and [x["size"] for x in r["results"]] == [1, 9216, 102400]'
	done
	# A small ring: credits must come back while messages queue (loggp trains of 16).
	run 0 "$NGAUGE" -x rdma "$@" --rdma-ring 4 --rdma-eager 64 -p loggp -s 1,64,65,4K -c "$(cnt 20)" -w 2 --verify -o "$T/lg.json" &&
		pycheck "$T/lg.json" "$spec: loggp with a 4-slot ring --verify" 'assert r["complete"] and "loggp" in r'
	run 0 "$NGAUGE" -x rdma "$@" -p plogp -s 1,4K,64K -c "$(cnt 20)" -w 2 --verify -o "$T/pl.json" &&
		pycheck "$T/pl.json" "$spec: plogp --verify" 'assert r["complete"] and "plogp" in r'
	run 0 "$NGAUGE" -x rdma "$@" -p mpbibw -s 1K,1M -c "$(cnt 10)" -w "$(cnt 10)" --verify && pass "$spec: mpbibw --verify"
	# Four ranks on one emulated device are slow: NGAUGE_RDMA_A2A=0 leaves alltoall out.
	[ "${NGAUGE_RDMA_A2A:-1}" = 1 ] || continue
	run 0 "$NGAUGE" -x rdma "$@" --rdma-poll yield -p alltoall --np 4 -s 1,3K,17K -c "$(cnt 5)" -w "$(cnt 5)" --verify -o "$T/a2a.json" &&
		pycheck "$T/a2a.json" "$spec: alltoall with 4 ranks, every algorithm --verify" 'assert r["complete"] and len(r["results"]) >= 3'
done

# Bad input: one line naming the choices, exit 2.
run 2 "$NGAUGE" -x rdma --rdma-backend nosuch -p pingpong && grep -q "verbs|shm|ofi" "$T/err" &&
	[ "$(wc -l <"$T/err")" -eq 1 ] && pass "unknown backend: one line naming the choices" || fail "unknown backend: $(cat "$T/err")"
run 2 "$NGAUGE" -x rdma --rdma-ring 2 -p pingpong && grep -q "rdma-ring" "$T/err" && pass "--rdma-ring 2 refused"
run 2 "$NGAUGE" -x rdma --rdma-eager 2M -p pingpong && grep -q "rdma-eager" "$T/err" && pass "--rdma-eager 2M refused"
if "$NGAUGE" --list 2>/dev/null | grep -q "ofi"; then
	run 2 "$NGAUGE" -x rdma --rdma-backend ofi --ofi-provider nosuch -p pingpong -s 8 -c 5 &&
		grep -q "nosuch" "$T/err" && pass "unknown provider: exit 2, named" || fail "unknown provider: $(cat "$T/err")"
fi

# A peer killed mid-run: the survivor names it within --timeout and keeps what was measured.
kb=${backends%% *}
# shellcheck disable=SC2086
setsid "$NGAUGE" -x rdma --rdma-backend "${kb%%:*}" ${NGAUGE_RDMA_OPTS:-} -p pingpong -s 1-4M -c "${NGAUGE_RDMA_KILL_COUNT:-20000}" -w 10 --timeout 3 -o "$T/k.json" >"$T/out" 2>"$T/err" &
pid=$!
if wait_rows "$T/k.json"; then
	ranks=($(pgrep -P $pid))
	start=$EPOCHREALTIME
	kill -9 "${ranks[1]}"
	wait $pid; rc=$?
	took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
	[ "$rc" -ne 0 ] && pass "killed rank: exit $rc" || fail "killed rank: exit 0"
	python3 -c "import sys; sys.exit(0 if $took < 10 else 1)" && pass "survivor ended in ${took%.*}s" || fail "took $took s"
	grep -q "rank 1" "$T/err" && pass "the lost rank is named" || fail "lost rank not named: $(cat "$T/err")"
	pycheck "$T/k.json" "partial results kept with complete: false" '
assert r["complete"] is False and len(r["results"]) >= 1
'
else
	fail "no row was measured"; kill -9 -$pid 2>/dev/null
fi
finish
