#!/bin/bash
# Two "hosts" without MPI: --server and --client over loopback. A --once server serves one client; a stray
# connection to the bootstrap port is turned away without disturbing the run. A persistent server serves
# clients one after another, tells a client arriving during another's run that it is busy, and passes a
# signal on to the run it serves; a signal (INT, TERM) to a client stops its run with the partial results
# kept; an idle server ends on INT and TERM.
. "$(dirname "$0")/lib.sh"

# 'auth': the same with a shared key on both sides (--auth, doc/security.md).
AUTH=()
if [ "${1:-}" = auth ]; then
	head -c 32 /dev/urandom >"$T/key" && chmod 600 "$T/key"
	AUTH=(--auth "$T/key")
fi

# ends_within PID SECONDS: waits for PID (a child of this shell); fails the check when it takes longer.
# Sets rc to its exit status.
ends_within() {
	local pid=$1 limit=$2 start=$EPOCHREALTIME
	for _ in $(seq $((limit * 20))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$pid" 2>/dev/null; then
		fail "pid $pid still running ${limit} s after the signal"; kill -9 "$pid" 2>/dev/null
	fi
	wait "$pid"; rc=$?
	took=$(python3 -c "print(round($EPOCHREALTIME - $start, 2))")
}
partial() { # FILE WHAT: a partial result file that parses and holds at least one measured size
	pycheck "$1" "$2: partial results (complete: false, measured sizes kept)" '
assert r["complete"] is False and len(r["results"]) >= 1
for row in r["results"]: assert stats_ok(row["latency_us"])
'
}

port=$((20000 + RANDOM % 20000))
timeout 60 "$NGAUGE" --server "${AUTH[@]}" --once --port $port -x tcp -p pingpong >"$T/sout" 2>"$T/serr" &
srv=$!
# The client retries until the server listens; a stray connection first.
(head -c 100 /dev/urandom >/dev/tcp/127.0.0.1/$port) 2>/dev/null
if run 0 "$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port $port -x tcp -p pingpong -s 1,4K,1M -c 200 --verify -o "$T/sc.json"; then
	pycheck "$T/sc.json" "client reports: tcp bootstrap, 3 rows, verified" '
assert r["complete"] and r["launch"] == "tcp" and r["ranks"] == 2
assert [row["size"] for row in r["results"]] == [1, 4096, 1048576]
for row in r["results"]: assert stats_ok(row["latency_us"])
'
fi
wait $srv && pass "--once server exits 0 after its client" || fail "server exit status $?: $(cat "$T/serr")"

# A client with nobody listening gives up with a clear message.
run 1 "$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port 1 --timeout 1 -x tcp -p pingpong -s 1 &&
	grep -q "cannot connect to 127.0.0.1:1" "$T/err" && pass "no server: clear error" || fail "no server: $(cat "$T/err")"

# A persistent server: two clients in turn, then a third while a long run of the second kind goes on.
port=$((port + 1))
timeout 120 "$NGAUGE" --server "${AUTH[@]}" --port $port >"$T/pout" 2>"$T/perr" &
srv=$!
for c in 1 2; do
	run 0 "$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port $port -x tcp -p pingpong -s 1,64K -c 100 --verify -o "$T/p$c.json" &&
		pycheck "$T/p$c.json" "persistent server: client $c served" '
assert r["complete"] and r["launch"] == "tcp" and [x["size"] for x in r["results"]] == [1, 65536]
'
done
long=(-x tcp -p pingpong -s 1-4M -c 20000 -w 10)
# A long client stopped by SIG (INT or TERM), which must exit with CODE; its run stops, what it measured is
# kept, the server serves on. The first one also meets a client arriving during its run, told it is busy.
for stop in INT:130 TERM:143; do
	sig=${stop%:*} code=${stop#*:}
	"$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port $port "${long[@]}" -o "$T/long-$sig.json" >/dev/null 2>"$T/long.err" &
	cl=$!
	if ! wait_rows "$T/long-$sig.json"; then
		fail "the long client measured nothing: $(cat "$T/long.err")"; kill -9 $cl 2>/dev/null
		continue
	fi
	if [ "$sig" = INT ]; then
		start=$EPOCHREALTIME
		run 1 "$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port $port -x tcp -p pingpong -s 1 -c 10 &&
			[ "$(grep -c . "$T/err")" = 1 ] && grep -q "is busy with another client" "$T/err" &&
			python3 -c "import sys; sys.exit(0 if $EPOCHREALTIME - $start < 5 else 1)" &&
			pass "a client arriving during a run is told 'busy' (one line, exit 1, within 5 s)" ||
			fail "busy client: $(cat "$T/err")"
	fi
	kill -"$sig" $cl
	ends_within $cl 5
	[ "$rc" = "$code" ] && pass "SIG$sig to the client: exit $code in $took s" || fail "SIG$sig to the client: exit $rc"
	partial "$T/long-$sig.json" "SIG$sig to the client"
done
# SIGTERM to the server while it serves: it passes it on and exits 143; the client keeps its sizes.
run 0 "$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port $port -x tcp -p pingpong -s 1 -c 10 &&
	pass "the server serves on after an interrupted client" || fail "served after an interrupted client"
"$NGAUGE" --client 127.0.0.1 "${AUTH[@]}" --port $port "${long[@]}" -o "$T/long2.json" >/dev/null 2>"$T/long2.err" &
cl=$!
if wait_rows "$T/long2.json"; then
	kill -TERM $srv
	ends_within $srv 5
	[ "$rc" = 143 ] && pass "SIGTERM to a serving server: exit 143 in $took s" ||
		fail "SIGTERM to the server: exit $rc: $(tail -3 "$T/perr")"
	ends_within $cl 5
	[ "$rc" = 1 ] && pass "its client ends (exit 1, the server rank lost) in $took s" || fail "client of a stopped server: exit $rc"
	partial "$T/long2.json" "client of a stopped server"
	grep -q "server stopped by SIGTERM after 6 clients" "$T/perr" && pass "the server says it stopped" ||
		fail "server log: $(cat "$T/perr")"
else
	fail "the second long client measured nothing"; kill -9 $cl $srv 2>/dev/null
fi

# An idle server ends cleanly on SIGTERM and on SIGINT.
for sig in TERM:143 INT:130; do
	port=$((port + 1))
	"$NGAUGE" --server "${AUTH[@]}" --port $port >/dev/null 2>"$T/ierr" &
	srv=$!
	for _ in $(seq 100); do grep -q "listening" "$T/ierr" && break; sleep 0.05; done
	kill -"${sig%:*}" $srv
	ends_within $srv 5
	[ "$rc" = "${sig#*:}" ] && grep -q "stopped by SIG${sig%:*} after 0 clients" "$T/ierr" &&
		pass "SIG${sig%:*} to an idle server: exit $rc in $took s" || fail "idle server, SIG${sig%:*}: exit $rc: $(cat "$T/ierr")"
done
finish
