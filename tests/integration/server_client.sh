#!/bin/bash
# Two "hosts" without MPI: --server and --client over loopback; a stray
# connection to the bootstrap port is turned away without disturbing the run.
. "$(dirname "$0")/lib.sh"

port=$((20000 + RANDOM % 20000))
timeout 60 "$NGAUGE" --server --port $port -x tcp -p pingpong >"$T/sout" 2>"$T/serr" &
srv=$!
# The client retries until the server listens; a stray connection first.
(head -c 100 /dev/urandom >/dev/tcp/127.0.0.1/$port) 2>/dev/null
if run 0 "$NGAUGE" --client 127.0.0.1 --port $port -x tcp -p pingpong -s 1,4K,1M -c 200 --verify -o "$T/sc.json"; then
	pycheck "$T/sc.json" "client reports: tcp bootstrap, 3 rows, verified" '
assert r["complete"] and r["launch"] == "tcp" and r["ranks"] == 2
assert [row["size"] for row in r["results"]] == [1, 4096, 1048576]
for row in r["results"]: assert stats_ok(row["latency_us"])
'
fi
wait $srv && pass "server exits 0" || fail "server exit status $?: $(cat "$T/serr")"

# A client with nobody listening gives up with a clear message.
run 1 "$NGAUGE" --client 127.0.0.1 --port 1 --timeout 1 -x tcp -p pingpong -s 1 &&
	grep -q "cannot connect to 127.0.0.1:1" "$T/err" && pass "no server: clear error" || fail "no server: $(cat "$T/err")"
finish
