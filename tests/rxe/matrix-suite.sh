#!/bin/bash
# matrix-suite.sh — the matrix pattern's ground truth inside the Soft-RoCE guest (which has veth and
# sch_netem): `tests/rxe/vm-run.sh matrix-suite.sh` (meson test --suite rxe does that). Exits 0 when every
# check passed, 1 otherwise, 77 outside the VM or without mpiexec, ip or tc.
#
# Two network namespaces A and B joined by a veth, each end delayed by netem 500 us on its egress: a
# message from A to B, or from B to A, takes 500 us more than one inside a namespace, a round trip across
# 1000 us more. The matrix's latency is half a ping-pong's round trip (the one-way latency), so the cells
# between the namespaces must show 500 us (+-10%) above the cells inside one. Four ranks over the tcp
# module, launched by mpiexec (the MPI bootstrap only): ranks 0-2 in A (10.77.0.1), rank 3 in B
# (10.77.0.2). So half of the 12 ordered pairs cross, the median over the pairs lies between the two
# levels, and the 6 crossing pairs (and only they) are above 1.5x it: the table must name exactly them.
# Once in each order (shift: rounds of pairs at once; pair: one pair at a time).
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment.
set -u

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "matrix-suite.sh: set NGAUGE (the binary) or NGAUGE_BUILD (the build directory)" >&2; exit 1; }
if [ "${NGAUGE_RXE:-0}" != 1 ]; then
    echo "matrix-suite.sh: SKIP: not in the test guest (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi
for t in mpiexec ip tc python3; do
    command -v $t >/dev/null || { echo "matrix-suite.sh: SKIP: no $t in the guest" >&2; exit 77; }
done
"$N" --list | grep -q '^  matrix ' || { echo "matrix-suite.sh: no matrix pattern in $N" >&2; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-matrix.XXXXXX") || exit 1
cleanup() {
    ip netns del A 2>/dev/null
    ip netns del B 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

DELAY_US=500
ip netns add A && ip netns add B &&
    ip link add va netns A type veth peer name vb netns B &&
    ip -n A addr add 10.77.0.1/24 dev va && ip -n B addr add 10.77.0.2/24 dev vb &&
    ip -n A link set lo up && ip -n B link set lo up &&
    ip -n A link set va up && ip -n B link set vb up &&
    ip netns exec A tc qdisc add dev va root netem delay ${DELAY_US}us &&
    ip netns exec B tc qdisc add dev vb root netem delay ${DELAY_US}us ||
    { echo "matrix-suite.sh: could not set up the namespaces and netem" >&2; exit 1; }

# matrix ORDER: one run, then its checks.
matrix() {
    local order=$1 rc
    local out="$W/matrix-$order.json"
    local args=(-p matrix --matrix-order "$order" -s 1,4K -c 100 -w 10 --bw-window 8 --timeout 60 -o "$out")
    # MPICH's UCX would reach the other namespace's ranks over rxe0 (UD) and time out: shared memory only,
    # the ranks share one host (the MPI bootstrap only: the measurements go over the tcp module)
    timeout -k 5 240 mpiexec -genv UCX_TLS self,sm -n 3 ip netns exec A "$N" -x tcp --tcp-bind 10.77.0.1 "${args[@]}" : \
        -n 1 ip netns exec B "$N" -x tcp --tcp-bind 10.77.0.2 "${args[@]}" >"$W/$order.out" 2>"$W/$order.err"
    rc=$?
    if [ $rc != 0 ]; then
        fail "matrix --matrix-order $order: exit $rc"
        sed "s/^/  stderr| /" "$W/$order.err" | head -n 30
        return
    fi
    sed 's/^/  | /' "$W/$order.out"
    python3 - "$out" "$W/$order.out" "$DELAY_US" "$order" <<'EOF' || fail "matrix --matrix-order $order: ground truth"
import json, re, statistics, sys
r = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read()
delay, order = float(sys.argv[3]), sys.argv[4]
A, B = {0, 1, 2}, {3}
ok = True
def check(cond, what):
    global ok
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    ok = ok and cond
m = r["matrix"]
check(r["complete"] and r["ranks"] == 4 and m["order"] == order, "complete, 4 ranks, order %s" % order)
addrs = [x["addr"] for x in m["ranks"]]
devs = [x["device"] for x in m["ranks"]]
check([d.split()[1] for d in devs] == ["10.77.0.1"] * 3 + ["10.77.0.2"], "the ranks' devices: %s" % devs)
cross = [(i, j) for i in range(4) for j in range(4) if i != j and ((i in A) != (j in A))]
inside = [(i, j) for i in range(4) for j in range(4) if i != j and (i in A) == (j in A)]
for e in m["sizes"]:
    lat = e["latency_us"]
    check(all(lat[i][i] is None for i in range(4)), "size %d: an empty diagonal" % e["size"])
    lin = statistics.median(lat[i][j]["median"] for i, j in inside)
    diffs = {(i, j): lat[i][j]["median"] - lin for i, j in cross}
    print("     size %d: inside %.1f us; crossing minus inside: %s" % (
        e["size"], lin, ", ".join("%d->%d %.1f" % (i, j, d) for (i, j), d in sorted(diffs.items()))))
    lmin = statistics.median(lat[i][j]["min"] for i, j in inside)
    print("     size %d: minima: inside %.1f us; crossing minus inside: %s" % (e["size"], lmin, ", ".join(
        "%d->%d %.1f" % (i, j, lat[i][j]["min"] - lmin) for i, j in cross)))
    if e["size"] == 1:
        check(all(abs(d - delay) <= 0.1 * delay for d in diffs.values()),
              "size 1: every crossing pair %g us (+-10%%) above the pairs inside a namespace" % delay)
        named = sorted((o["from"], o["to"]) for o in e["outliers"] if o["metric"] == "latency_us")
        check(named == sorted(cross), "size 1: the latency outliers are the crossing pairs: %s" % named)
        for i, j in cross:
            check(re.search(r"^# matrix: rank %d -> rank %d: [0-9.]+x the median latency" % (i, j), table, re.M)
                  is not None, "size 1: the table names rank %d -> rank %d" % (i, j))
        check(not any(re.search(r"^# matrix: rank %d -> rank %d: [0-9.]+x the median latency" % (i, j), table,
                                re.M) for i, j in inside), "size 1: the table names no pair inside a namespace")
    bw = e["bandwidth_MBps"]
    slow = [(o["from"], o["to"]) for o in e["outliers"] if o["metric"] == "bandwidth_MBps"]
    check(set(slow) <= set(cross), "size %d: bandwidth outliers only among crossing pairs: %s" % (e["size"], slow))
    check(max(bw[i][j]["median"] for i, j in cross) < min(bw[i][j]["median"] for i, j in inside),
          "size %d: every crossing pair slower than every pair inside" % e["size"])
sys.exit(0 if ok else 1)
EOF
}

[ -n "${MX_ONLY:-}" ] || matrix shift
matrix pair

[ $fails = 0 ] && echo "matrix-suite.sh: all passed" || echo "matrix-suite.sh: $fails failed"
[ $fails = 0 ]
