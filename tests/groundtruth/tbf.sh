#!/bin/bash
# Ground truth over a real link of known bandwidth: two network namespaces
# joined by a veth pair, the client's side shaped by a token-bucket filter
# (tc tbf, 200 Mbit/s).  ngauge --server --once runs in one namespace, --client in
# the other; the loggp pattern over tcp must find G within 5% of the TCP
# goodput of the shaped rate.
#
# Expected goodput: tbf counts whole frames (Ethernet header included) and
# every full TCP segment of MSS payload bytes travels in one frame of
# MTU + 14 bytes, MSS = MTU - 20 (IP) - 20 (TCP) - 12 (timestamps, when
# net.ipv4.tcp_timestamps is on).  So G = (MTU + 14) / (MSS * rate).
#
# Needs root and network namespaces; exits 77 (skipped) only when the
# namespaces cannot be created.  The namespaces (names carry the PID) are
# always deleted at the end.
set -u
: "${NGAUGE:?NGAUGE must point to the ngauge binary}"

RATE_MBIT=200
id=$$
nsA=ngtbfA$id nsB=ngtbfB$id
vA=ngtA$id vB=ngtB$id
# Addresses of the benchmarking range 198.18.0.0/15 (RFC 2544), never a private range.
ipA=198.19.$((id % 200)).1 ipB=198.19.$((id % 200)).2
port=$((20000 + id % 20000))
T=$(mktemp -d /tmp/ngauge-tbf.XXXXXX)
spid=

cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	ip netns del "$nsA" 2>/dev/null
	ip netns del "$nsB" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap "exit 1" INT TERM HUP

if ! ip netns add "$nsA" 2>/dev/null || ! ip netns add "$nsB" 2>/dev/null; then
	echo "SKIP: cannot create network namespaces (needs root and netns support)"
	exit 77
fi

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

ip link add "$vA" type veth peer name "$vB" || fail "cannot create a veth pair"
ip link set "$vA" netns "$nsA" && ip link set "$vB" netns "$nsB" || fail "cannot move the veth ends"
ip -n "$nsA" addr add "$ipA/30" dev "$vA" && ip -n "$nsB" addr add "$ipB/30" dev "$vB" || fail "addresses"
for ns in "$nsA" "$nsB"; do ip -n "$ns" link set lo up; done
ip -n "$nsA" link set "$vA" up && ip -n "$nsB" link set "$vB" up || fail "links up"
# The client (rank 0, the sender of the trains) lives in A: shape A's egress.
tc -n "$nsA" qdisc add dev "$vA" root tbf rate ${RATE_MBIT}mbit burst 64kb latency 100ms ||
	fail "tc tbf not available"

mtu=$(ip netns exec "$nsA" cat /sys/class/net/"$vA"/mtu)
ts=$(ip netns exec "$nsA" cat /proc/sys/net/ipv4/tcp_timestamps 2>/dev/null || echo 1)
[ "$ts" = 0 ] && tsopt=0 || tsopt=12

ip netns exec "$nsB" timeout -k 5 120 "$NGAUGE" --server --once --bind "$ipB" --port "$port" -x tcp --tcp-bind "$ipB" \
	-p loggp --loggp-n 8 -s 128K-512K:+128K -c 3 -w 1 >"$T/server.out" 2>&1 &
spid=$!
ip netns exec "$nsA" timeout -k 5 120 "$NGAUGE" --client "$ipB" --port "$port" -x tcp --tcp-bind "$ipA" \
	-p loggp --loggp-n 8 -s 128K-512K:+128K -c 3 -w 1 -o "$T/tbf.json" >"$T/client.out" 2>&1
rc=$?
wait "$spid"
src=$?
spid=
cat "$T/client.out"
if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
	sed 's/^/server: /' "$T/server.out" >&2
	fail "client exited $rc, server $src"
fi

python3 "$(dirname "$0")/../schema/validate.py" "$T/tbf.json" >&2 || [ $? = 77 ] ||
	fail "the result does not match doc/schema/ngauge-result-1.schema.json"
python3 - "$T/tbf.json" "$RATE_MBIT" "$mtu" "$tsopt" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
rate, mtu, ts = float(sys.argv[2]) * 1e6 / 8, int(sys.argv[3]), int(sys.argv[4])
mss = mtu - 40 - ts
goodput = rate * mss / (mtu + 14)            # bytes per second
G_expect = 1e6 / goodput                     # microseconds per byte
seg = r["loggp"]["segments"][-1]
G = seg["G_us_per_byte"]
print(f"shaped {sys.argv[2]} Mbit/s, MTU {mtu}, MSS {mss}: expected G {G_expect:.6f} us/B "
      f"({goodput / 1e6:.3f} MB/s goodput); measured G {G['value']} us/B, CI {G.get('ci95')}")
assert G["value"] is not None, G
err = abs(G["value"] - G_expect) / G_expect
print(f"relative error {100 * err:.2f}%")
assert err <= 0.05, f"G off by {100 * err:.1f}% (limit 5%)"
print("ok: G over tcp matches the tbf rate")
PY
