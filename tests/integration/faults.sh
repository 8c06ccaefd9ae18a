#!/bin/bash
# Faults: a rank killed mid-run, SIGINT to the process group (tcp sleeping and spinning), SIGINT, SIGTERM and
# SIGHUP to the launcher's pid alone (as schedulers, timeout and scripts send them), garbage on the TCP
# listening port.
. "$(dirname "$0")/lib.sh"


# 1-2 with both ways of waiting in the tcp module.
# Many short sizes (as in 3): the first row comes soon even when spinning ranks share loaded cores, and the run
# lasts long enough to be stopped in its middle.
for mode in sleep spin; do
	rm -f "$T/k.json" "$T/i.json"
	# 1. Kill rank 1 (the echoing side) with SIGKILL in the middle of a long run.
	setsid "$NGAUGE" -x tcp --tcp-poll $mode -p pingpong -s 1-4K:+1 -c 500 -w 10 -o "$T/k.json" >"$T/out" 2>"$T/err" &
	pid=$!
	if wait_rows "$T/k.json"; then
		ranks=($(pgrep -P $pid))
		start=$(date +%s.%N)
		kill -9 "${ranks[1]}"
		wait $pid; rc=$?
		took=$(python3 -c "import time; print(time.time() - $start)")
		[ "$rc" -ne 0 ] && pass "$mode: killed rank: exit $rc" || fail "$mode: killed rank: exit 0"
		python3 -c "import sys; sys.exit(0 if $took < 10 else 1)" && pass "$mode: survivors ended in ${took%.*}s" || fail "$mode: took $took s"
		grep -q "rank 1" "$T/err" && pass "$mode: the lost rank is named" || fail "$mode: lost rank not named: $(cat "$T/err")"
		pycheck "$T/k.json" "$mode: partial results kept with complete: false" '
assert r["complete"] is False and len(r["results"]) >= 1
for row in r["results"]: assert stats_ok(row["latency_us"])
'
	else
		fail "no row was measured"; kill -9 -$pid 2>/dev/null
	fi

	# 2. SIGINT to the whole process group (as a terminal's Ctrl-C): exit 130.
	setsid "$NGAUGE" -x tcp --tcp-poll $mode -p pingpong -s 1-4K:+1 -c 500 -w 10 -o "$T/i.json" >"$T/out" 2>"$T/err" &
	pid=$!
	if wait_rows "$T/i.json"; then
		kill -INT -- -$pid
		wait $pid; rc=$?
		[ "$rc" -eq 130 ] && pass "$mode: SIGINT: exit 130" || fail "$mode: SIGINT: exit $rc"
		pycheck "$T/i.json" "$mode: SIGINT: partial results with complete: false" '
assert r["complete"] is False and len(r["results"]) >= 1
'
	else
		fail "no row was measured"; kill -9 -$pid 2>/dev/null
	fi
done

# 3. A signal to the launcher's pid only: it passes it on to the ranks, which stop and keep what they
# measured; exit 128 + the signal within 5 s. Both ways of waiting of tcp, and the signals a scheduler sends.
for case in "INT sleep 130" "TERM spin 143" "HUP sleep 129"; do
	set -- $case
	rm -f "$T/s.json"
	# Many short sizes: the first row comes soon even when spinning ranks share their cores.
	"$NGAUGE" -x tcp --tcp-poll $2 -p pingpong -s 1-4K:+1 -c 500 -w 10 -o "$T/s.json" >"$T/out" 2>"$T/err" &
	pid=$!
	if wait_rows "$T/s.json"; then
		start=$EPOCHREALTIME
		kill -$1 $pid
		for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
		took=$(python3 -c "print(round($EPOCHREALTIME - $start, 2))")
		if kill -0 $pid 2>/dev/null; then
			fail "SIG$1 to the launcher: still running after 5 s"; pkill -9 -P $pid; kill -9 $pid
		fi
		wait $pid; rc=$?
		[ "$rc" -eq "$3" ] && pass "SIG$1 to the launcher ($2): exit $rc in $took s" ||
			fail "SIG$1 to the launcher ($2): exit $rc, expected $3"
		pycheck "$T/s.json" "SIG$1 to the launcher: partial results with complete: false" '
assert r["complete"] is False and len(r["results"]) >= 1
for row in r["results"]: assert stats_ok(row["latency_us"])
'
		grep -q "interrupted (SIG$1)" "$T/err" && pass "SIG$1: the ranks say why they stopped" ||
			fail "SIG$1: $(cat "$T/err")"
	else
		fail "no row was measured"; pkill -9 -P $pid; kill -9 $pid 2>/dev/null
	fi
done

# 4. Random bytes to the TCP listening ports while ranks connect.
port=$((20000 + RANDOM % 20000))
( end=$((SECONDS + 6)); while [ $SECONDS -lt $end ]; do
	for p in $port $((port + 1)); do (head -c 64 /dev/urandom >/dev/tcp/127.0.0.1/$p) 2>/dev/null; done
done ) &
noise=$!
ok=1
for i in 1 2 3 4 5; do
	if ! run 0 "$NGAUGE" -x tcp -p pingpong --tcp-port $port -s 1,1K -c 50 -o "$T/n$i.json"; then ok=0; fi
done
kill $noise 2>/dev/null; wait $noise 2>/dev/null
[ $ok = 1 ] && pass "runs complete with garbage sent to the listening ports" || fail "garbage disturbed a run"
finish
