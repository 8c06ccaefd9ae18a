#!/bin/bash
# The ucx module (doc/ucx.md) over UCX_TLS=sm,self and tcp,self (loopback only: UCX_NET_DEVICES=lo) with two
# local ranks: pingpong over odd sizes across the eager and rendezvous thresholds, bw, loggp and alltoall, every
# byte checked (--verify), each API (tag, am, stream) and --ucx-poll wait; the result names the transports UCX
# picked for rank 1 (sm: posix, sysv or cma; tcp: tcp/lo) and the UCX_TLS in force, and ngauge compare of a
# sm and a tcp result flags UCX_TLS.  Under this build's mpiexec (MPI bootstrap) too, where there is one.
# Skipped (77) in a build without UCX.
. "$(dirname "$0")/lib.sh"

"$NGAUGE" --list 2>/dev/null | grep -q '^  ucx .*UCP' || { echo "SKIP: module ucx not built"; exit 77; }

export UCX_NET_DEVICES=lo
# UCX warns on stderr about what it cannot open here (no InfiniBand): not the test's business.
export UCX_LOG_LEVEL=error

# tls_ok FILE TLS: the ucx block and the device string of result FILE name TLS and its transports.
tls_ok() {
	local file=$1 tls=$2
	pycheck "$file" "$tls: the result names UCX_TLS=$tls and the transports to rank 1" '
u = r["ucx"]["setup"]
assert u["env"]["UCX_TLS"] == "'"$tls"'", u["env"]
assert u["api"] in ("tag", "am", "stream") and u["version"].count(".") >= 2, u
tls = u["peers"]["1"]["transports"]
want = ("posix/", "sysv/", "cma/", "xpmem/", "knem/") if "'"$tls"'".startswith("sm") else ("tcp/lo",)
assert tls and all(t.startswith(want) for t in tls), tls
assert r["ucx"]["endpoints"] >= 1 and r["ucx"]["sent"] > 0 and r["ucx"]["received"] > 0, r["ucx"]
dev = r["env"]["device"]
assert "UCX_TLS='"$tls"'" in dev and ("to rank 1: " + " ".join(tls)) in dev, dev
assert any(k.startswith("tag_send") for k in u["peers"]["1"]["protocols"]) or u["api"] != "tag", u["peers"]
'
}

for tls in sm,self tcp,self; do
	export UCX_TLS=$tls
	name=${tls%%,*}
	# Odd sizes across sm's eager limits (93 B short, 8 KiB rendezvous) and tcp's (8 KiB), up to 1 MB.
	if run 0 "$NGAUGE" --np 2 -x ucx -p pingpong -s 0,1,7,93,94,4093,8193,65537,1000003 -c 20 -w 2 --verify \
		-o "$T/pp_$name.json"; then
		pycheck "$T/pp_$name.json" "$tls: pingpong --verify, 9 odd sizes" '
assert r["complete"] and r["module"] == "ucx" and r["parameters"]["ucx-api"] == "tag"
assert [x["size"] for x in r["results"]] == [0, 1, 7, 93, 94, 4093, 8193, 65537, 1000003], r["results"]
for x in r["results"]:
    assert x["count"] == 20 and stats_ok(x["latency_us"]), x
# rank 0 sends and receives one message per round: 9 sizes of 2 + 20 rounds
assert r["ucx"]["sent"] == r["ucx"]["received"] == 9 * 22, r["ucx"]
'
		tls_ok "$T/pp_$name.json" "$tls"
	fi
	run 0 "$NGAUGE" --np 2 -x ucx -p bw -s 1,8193,1M -c 5 -w 1 --verify -o "$T/bw_$name.json" &&
		pycheck "$T/bw_$name.json" "$tls: bw --verify" '
assert r["complete"] and [x["size"] for x in r["results"]] == [1, 8193, 1048576], r["results"]
assert all(x["count"] == 5 and stats_ok(x["bandwidth_MBps"]) for x in r["results"])
'
	run 0 "$NGAUGE" --np 2 -x ucx -p loggp -s 1,4K,64K -c 10 -w 2 --verify -o "$T/lg_$name.json" &&
		pycheck "$T/lg_$name.json" "$tls: loggp --verify" 'assert r["complete"] and "loggp" in r and len(r["results"]) >= 3'
	# Three ranks asleep when idle (more ranks than the two cores here).
	run 0 "$NGAUGE" --np 3 -x ucx --ucx-poll wait -p alltoall -s 1,1K,33K -c 5 -w 1 --verify -o "$T/a2a_$name.json" &&
		pycheck "$T/a2a_$name.json" "$tls: alltoall with 3 ranks, --ucx-poll wait, --verify" '
assert r["complete"] and r["ranks"] == 3 and r["parameters"]["ucx-poll"] == "wait"
assert sorted({x["size"] for x in r["results"]}) == [1, 1024, 33792], r["results"]
'
	for api in am stream; do
		if run 0 "$NGAUGE" --np 2 -x ucx --ucx-api $api -p pingpong -s 0,1,93,8193,65537,1000003 -c 10 -w 2 \
			--verify -o "$T/pp_${api}_$name.json"; then
			pycheck "$T/pp_${api}_$name.json" "$tls: --ucx-api $api pingpong --verify" '
assert r["complete"] and r["parameters"]["ucx-api"] == "'$api'" and len(r["results"]) == 6
assert r["ucx"]["setup"]["api"] == "'$api'"
'
			tls_ok "$T/pp_${api}_$name.json" "$tls"
		fi
		run 0 "$NGAUGE" --np 2 -x ucx --ucx-api $api -p bw -s 7,8193,1M -c 3 -w 1 --verify &&
			pass "$tls: --ucx-api $api bw --verify"
	done
done
unset UCX_TLS

# compare flags the transports: UCX_TLS and the transports of rank 1 differ between the two pingpongs.
if [ -s "$T/pp_sm.json" ] && [ -s "$T/pp_tcp.json" ]; then
	"$NGAUGE" compare --single-run "$T/pp_sm.json" "$T/pp_tcp.json" >"$T/cmp.out" 2>"$T/cmp.err"
	grep -q "differs: ucx.setup.env.UCX_TLS: sm,self vs tcp,self" "$T/cmp.out" &&
		grep -q "differs: ucx.setup.peers.1.transports" "$T/cmp.out" &&
		pass "compare flags UCX_TLS and the transports" ||
		fail "compare does not flag UCX_TLS: $(grep differs "$T/cmp.out" | head -5)"
	"$NGAUGE" compare --single-run "$T/pp_sm.json" "$T/pp_sm.json" >"$T/cmp.out" 2>"$T/cmp.err"
	grep -q "differs: ucx" "$T/cmp.out" && fail "compare of a file with itself flags ucx: $(grep differs "$T/cmp.out")" ||
		pass "compare of a file with itself flags nothing of ucx"
fi

# Refusals: an unknown API word, exit 2 before anything runs.
run 2 "$NGAUGE" --np 2 -x ucx --ucx-api rma -p pingpong -s 8 -c 5 && pass "--ucx-api rma refused (exit 2)"

# A --server refuses ucx (doc/security.md): the server's child and the client each say so in one line, exit 2.
port=$((30000 + $$ % 20000))
"$NGAUGE" --server --once --port "$port" >"$T/srv.out" 2>"$T/srv.err" &
srv=$!
for _ in $(seq 100); do ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && break; sleep 0.1; done
UCX_TLS=tcp,self run 2 "$NGAUGE" --client 127.0.0.1 --port "$port" -x ucx -p pingpong -s 8 -c 5 &&
	grep -q "ucx: rank 1 refuses the ucx module" "$T/err" && pass "--server refuses ucx, the client says so (exit 2)" ||
	fail "--client -x ucx: $(head -3 "$T/err")"
wait "$srv"
grep -q "ucx: not offered to --server clients" "$T/srv.err" && pass "the server's child names the refusal" ||
	fail "server: $(cat "$T/srv.err")"

# Under mpiexec: the MPI bootstrap exchanges the worker addresses; the data path is UCX's.
if command -v mpiexec >/dev/null && "$NGAUGE" --list 2>/dev/null | grep -q '^  mpi '; then
	UCX_TLS=sm,self run 0 mpiexec -n 2 "$NGAUGE" -x ucx -p pingpong -s 1,8193,65537 -c 20 -w 2 --verify \
		-o "$T/pp_mpi.json" &&
		pycheck "$T/pp_mpi.json" "mpiexec -n 2: ucx pingpong --verify over sm,self" '
assert r["complete"] and r["launch"] == "mpi" and len(r["results"]) == 3, (r["launch"], r["results"])
assert r["ucx"]["setup"]["env"]["UCX_TLS"] == "sm,self"
'
else
	echo "note: no mpiexec (or no mpi module): the MPI launch is not tested"
fi
finish
