# Sourced by the benchmarks against ucx_perftest (ucx_bench.sh, ucx_rma_bench.sh), after lib.sh: perftest, one
# ucx_perftest run of a server and a client on this host, and the server stopped at exit.
# ucx_perftest's own bootstrap port: one per run of this script.
PORT=$((20000 + $$ % 20000))
SERVER_PID=

stop_server() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
}
trap 'stop_server; rm -rf "$T"' EXIT

# perftest TEST SIZE ITERS [EXTRA...]: one ucx_perftest run (its server on CPU 1, started first and awaited
# until it listens, the client on CPU 0); prints the client's final line's numbers: iterations, latency
# percentile, average, overall (us), bandwidth average, overall (MB/s of 2^20 bytes), message rates.
perftest() {
	local test=$1 size=$2 n=$3 i
	shift 3
	PORT=$((PORT + 1))
	ucx_perftest -t "$test" -s "$size" -n "$n" -w $((n / 10)) -p "$PORT" -c 1 -f "$@" >"$T/srv" 2>&1 &
	SERVER_PID=$!
	# ready: its listening socket is open (ss), never a fixed sleep
	for i in $(seq 200); do
		ss -ltnH "sport = :$PORT" 2>/dev/null | grep -q . && break
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	timeout -k 5 300 ucx_perftest 127.0.0.1 -t "$test" -s "$size" -n "$n" -w $((n / 10)) -p "$PORT" -c 0 -f "$@" \
		>"$T/cli" 2>&1
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
	awk 'NF >= 8 && $1 ~ /^[0-9]+$/ {line = $0} END {print line}' "$T/cli"
}
