#!/bin/bash
# The rdma module (two-sided channel over the RDMA layer) over the layer's ucx backend (doc/rdma.md), with
# UCX_TLS=sm,self and tcp,self (loopback only: UCX_NET_DEVICES=lo), two local ranks: pingpong over odd sizes
# across the eager size and the ring's wrap, bw and loggp, every byte checked (--verify); the result's rdma block
# names UCX_TLS and the transports to rank 1, and ngauge compare of a sm and a tcp result flags UCX_TLS.
# Skipped (77) in a build without UCX.
. "$(dirname "$0")/lib.sh"

"$NGAUGE" --list 2>/dev/null | grep -q '^ *rdma' || { echo "SKIP: module rdma not built"; exit 77; }
"$NGAUGE" --list 2>/dev/null | grep -q '^  ucx .*UCP' || { echo "SKIP: built without UCX (no ucx module)"; exit 77; }

export UCX_NET_DEVICES=lo
# UCX warns on stderr about what it cannot open here (no InfiniBand): not the test's business.
export UCX_LOG_LEVEL=error

for tls in sm,self tcp,self; do
	export UCX_TLS=$tls
	name=${tls%%,*}
	if run 0 "$NGAUGE" -x rdma --rdma-backend ucx -p pingpong -s 0,1,7,4093,8191,8192,8193,65537,1000003 -c 20 \
		-w 2 --verify -o "$T/pp_$name.json"; then
		pycheck "$T/pp_$name.json" "$tls: pingpong --verify, 9 odd sizes" '
assert r["complete"] and r["module"] == "rdma" and r["parameters"]["rdma-backend"] == "ucx"
assert [x["size"] for x in r["results"]] == [0, 1, 7, 4093, 8191, 8192, 8193, 65537, 1000003], r["results"]
for x in r["results"]:
    assert x["count"] == 20 and stats_ok(x["latency_us"]), x
assert r["env"]["device"].startswith("ucx UCP "), r["env"]["device"]
'
		pycheck "$T/pp_$name.json" "$tls: the rdma block names UCX_TLS=$tls and the transports to rank 1" '
u = r["rdma"]["setup"]
assert u["env"]["UCX_TLS"] == "'"$tls"'", u["env"]
assert u["ucx_version"].count(".") >= 2, u
tls = u["transports"]["1"].split()
want = ("posix/", "sysv/", "cma/", "xpmem/", "knem/") if "'"$tls"'".startswith("sm") else ("tcp/lo",)
assert tls and all(t.startswith(want) for t in tls), tls
assert " ".join(tls) in r["env"]["device"], r["env"]["device"]
'
	fi
	run 0 "$NGAUGE" -x rdma --rdma-backend ucx -p bw -s 1,8193,1M -c 5 -w 1 --verify -o "$T/bw_$name.json" &&
		pycheck "$T/bw_$name.json" "$tls: bw --verify" '
assert r["complete"] and [x["size"] for x in r["results"]] == [1, 8193, 1048576], r["results"]
assert all(x["count"] == 5 and stats_ok(x["bandwidth_MBps"]) for x in r["results"])
'
	run 0 "$NGAUGE" -x rdma --rdma-backend ucx -p loggp -s 1,4K,64K -c 10 -w 2 --verify -o "$T/lg_$name.json" &&
		pycheck "$T/lg_$name.json" "$tls: loggp --verify" '
assert r["complete"] and "loggp" in r and [x["size"] for x in r["results"]][:3] == [1, 4096, 65536], r["results"]
'
done
unset UCX_TLS

# compare flags the transports: UCX_TLS and the transports of rank 1 differ between the two pingpongs.
if [ -s "$T/pp_sm.json" ] && [ -s "$T/pp_tcp.json" ]; then
	"$NGAUGE" compare --single-run "$T/pp_sm.json" "$T/pp_tcp.json" >"$T/cmp.out" 2>"$T/cmp.err"
	grep -q "differs: rdma.setup.env.UCX_TLS: sm,self vs tcp,self" "$T/cmp.out" &&
		grep -q "differs: rdma.setup.transports.1" "$T/cmp.out" &&
		pass "compare flags UCX_TLS and the transports" ||
		fail "compare does not flag UCX_TLS: $(grep differs "$T/cmp.out" | head -5)"
	"$NGAUGE" compare --single-run "$T/pp_sm.json" "$T/pp_sm.json" >"$T/cmp.out" 2>"$T/cmp.err"
	grep -q "differs: rdma" "$T/cmp.out" && fail "compare of a file with itself flags rdma: $(grep differs "$T/cmp.out")" ||
		pass "compare of a file with itself flags nothing of rdma"
fi
finish
