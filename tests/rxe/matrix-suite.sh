#!/bin/bash
# matrix-suite.sh — the matrix pattern's ground truth inside the Soft-RoCE guest (which has veth and
# sch_netem): `NGAUGE_RXE_SMP=1 NGAUGE_RXE_ICOUNT=shift=2,sleep=off tests/rxe/vm-run.sh matrix-suite.sh`
# (meson test --suite rxe does that). Exits 0 when every check passed, 1 otherwise, 77 outside the VM, off
# the instruction-counted clock, or without mpiexec, ip, tc or python3.
#
# Two network namespaces A and B joined by a veth, each end delayed by netem on its egress: first by 0 us,
# then by 500 us, so that a message from A to B, or from B to A, takes 500 us more. The matrix's latency is
# half a ping-pong's round trip (the one-way latency), so at size 1 (the latency heatmap's size; 4K runs too,
# for the bandwidth) the cells between the namespaces must lie 500 us (+-10%) above the cells inside one, and
# the table must name exactly them.
#
# The guest runs on QEMU's instruction-counted clock (NGAUGE_RXE_ICOUNT, which meson sets: the clock jumps to
# the next timer's deadline whenever the guest idles), so netem's timer fires at its deadline on the guest's
# clock, whatever the host's load; on the ordinary emulated clock netem delivered 85-160 us late per passage,
# varying with the host's load (doc/matrix.md), and the suite skips without it. A UDP ping-pong between the
# namespaces beside each matrix run (python, no ngauge) is an independent measure of what the link adds; it
# must itself lie within 10% of the nominal 500 us. Guest time runs ahead of the host's while the guest
# waits for the host (9p), so the timeouts inside are long; vm-run.sh's own is on the host's clock.
# Four ranks over the tcp module, launched by mpiexec (the MPI bootstrap only): ranks 0-2 in A (198.18.77.1),
# rank 3 in B (198.18.77.2). So half of the 12 ordered pairs cross, the median over the pairs lies between
# the two levels, and the 6 crossing pairs (and only they) are above 1.5x it. One pair at a time (the default
# order). One vCPU (NGAUGE_RXE_SMP=1, as meson runs it).
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment.
set -u

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "matrix-suite.sh: set NGAUGE (the binary) or NGAUGE_BUILD (the build directory)" >&2; exit 1; }
if [ "${NGAUGE_RXE:-0}" != 1 ]; then
    echo "matrix-suite.sh: SKIP: not in the test guest (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi
if [ -z "${NGAUGE_RXE_ICOUNT:-}" ]; then
    echo "matrix-suite.sh: SKIP: needs the guest's instruction-counted clock (NGAUGE_RXE_ICOUNT, e.g. shift=2,sleep=off), on which netem's delays are exact" >&2
    exit 77
fi
for t in mpiexec ip tc python3; do
    command -v $t >/dev/null || { echo "matrix-suite.sh: SKIP: no $t in the guest" >&2; exit 77; }
done
"$N" --list | grep -q '^  matrix ' || { echo "matrix-suite.sh: no matrix pattern in $N" >&2; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-matrix.XXXXXX") || exit 1
. "$(dirname "$0")/guest-lib.sh"
cleanup() {
    netns_pair_del
    rm -rf "$W"
}
trap cleanup EXIT
fails=0

DELAY_US=500 BASE_US=0
netns_pair && ip netns exec A tc qdisc add dev va root netem delay 0us &&
    ip netns exec B tc qdisc add dev vb root netem delay 0us ||
    { echo "matrix-suite.sh: could not set up the namespaces and netem" >&2; exit 1; }

# matrix NAME ARGS...: one run of 4 ranks, 3 in A and 1 in B, into $W/NAME.json and $W/NAME.out.
matrix() {
    local name=$1
    shift
    ab_run "$name" 3 1 -p matrix "$@" -s 1,4K -c 100 -w 10 --bw-window 8 --timeout 600 -o "$W/$name.json"
}

# reference NAME: an independent measure of what the link adds, in this boot, before and after each
# matrix run: a UDP ping-pong (python, 1-byte datagrams, 300 round trips after 20 unmeasured) from A to B; its
# one-way times (half a round trip: min, p25, median, us) into $W/NAME.ref as JSON.
reference() {
    ip netns exec B python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("198.18.77.2", 5301))
while True:
    b, a = s.recvfrom(64); s.sendto(b, a)
    if b == b"q": break' & local srv=$!
    sleep 0.5
    ip netns exec A timeout 1200 python3 -c '
import json, socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
rt = []
for i in range(320):
    t0 = time.perf_counter_ns(); s.sendto(b"x", ("198.18.77.2", 5301))
    try: s.recvfrom(64)
    except socket.timeout: continue
    if i >= 20: rt.append((time.perf_counter_ns() - t0) / 2000)
for i in range(5): s.sendto(b"q", ("198.18.77.2", 5301))
rt.sort()
print(json.dumps({"n": len(rt), "min": rt[0], "p25": rt[len(rt) // 4], "median": rt[len(rt) // 2]}))' >"$W/$1.ref"
    local rc=$?
    kill $srv 2>/dev/null; wait $srv 2>/dev/null
    [ $rc = 0 ] && [ -s "$W/$1.ref" ]
}

# One attempt: the matrix at 0 us (what the veth itself adds across, printed) and at 500 us, each between two
# references. Up to three attempts, each with both runs, the references and every check; the numbers of every
# attempt are printed.
netem() {
    ip netns exec A tc qdisc change dev va root netem delay "$1"us &&
        ip netns exec B tc qdisc change dev vb root netem delay "$1"us
}
attempt() {
    netem $BASE_US && reference base0 && matrix base && reference base1 && netem $((BASE_US + DELAY_US)) &&
        reference delay0 && matrix delay --verify && reference delay1 || return 1
    python3 - "$W/base.json" "$W/delay.json" "$W/delay.out" "$DELAY_US" "$BASE_US" "$W"/{base0,base1,delay0,delay1}.ref <<'PY'
import json, re, statistics, sys
base, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
# the reference ran before and after each matrix run: of each pair, the one less disturbed by the host
# (the smaller minimum)
refs = [json.load(open(f)) for f in sys.argv[6:10]]
ref0, ref1 = min(refs[:2], key=lambda x: x["min"]), min(refs[2:], key=lambda x: x["min"])
print("     reference min/median: netem %s us %s; %s us more %s" % (sys.argv[5],
      ["%.1f/%.1f" % (x["min"], x["median"]) for x in refs[:2]], sys.argv[4],
      ["%.1f/%.1f" % (x["min"], x["median"]) for x in refs[2:]]))
table = open(sys.argv[3]).read()
delay = float(sys.argv[4])
A = {0, 1, 2}
ok = True
def check(cond, what):
    global ok
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    ok = ok and cond
m = r["matrix"]
check(r["complete"] and r["ranks"] == 4 and m["order"] == "pair" and r["parameters"]["verify"] is True,
      "complete, 4 ranks, pair order, --verify")
devs = [x["device"] for x in m["ranks"]]
check([d.split()[1] for d in devs] == ["198.18.77.1"] * 3 + ["198.18.77.2"], "the ranks' devices: %s" % devs)
check(all(x["verified"] > 0 for x in r["results"]), "messages verified")
cross = [(i, j) for i in range(4) for j in range(4) if i != j and ((i in A) != (j in A))]
inside = [(i, j) for i in range(4) for j in range(4) if i != j and (i in A) == (j in A)]
def gaps(e, key="median"):
    lat = e["latency_us"]
    lin = statistics.median(lat[i][j][key] for i, j in inside)
    return lin, {(i, j): lat[i][j][key] - lin for i, j in cross}
# what the link adds, by the reference: its one-way time at 500 us less that at 0 us, by the minima
added = {k: ref1[k] - ref0[k] for k in ("min", "median")}
ref_add = added["min"]
print("     reference (udp ping-pong A->B, one-way): netem %s us: min %.1f median %.1f us; %g us more: min %.1f "
      "median %.1f us; it adds %.1f us by the minima (%+.1f%% on the nominal %g us), %.1f us by the medians"
      % (sys.argv[5], ref0["min"], ref0["median"], delay, ref1["min"], ref1["median"], ref_add,
         100 * (ref_add - delay) / delay, delay, added["median"]))
for e0, e in zip(base["matrix"]["sizes"], m["sizes"]):
    size, lat, bw = e["size"], e["latency_us"], e["bandwidth_MBps"]
    check(all(lat[i][i] is None and bw[i][i] is None for i in range(4)), "size %d: an empty diagonal" % size)
    lin0, g0 = gaps(e0)
    path = statistics.median(g0.values())
    lin, g = gaps(e)
    rise = {k: d - path for k, d in g.items()}
    _, m0 = gaps(e0, "min")
    _, m1 = gaps(e, "min")
    print("     size %d: by the cells' minima the crossing pairs rose by %s us (printed only)" % (size,
          ", ".join("%.1f" % (m1[k] - statistics.median(m0.values())) for k in sorted(m1))))
    print("     size %d: netem %s us: inside %.1f us, across +%.1f us; %g us more: inside %.1f us, across: %s"
          % (size, sys.argv[5], lin0, path, delay, lin, ", ".join("%d->%d +%.1f" % (i, j, d) for (i, j), d in sorted(g.items()))))
    print("     size %d: the crossing pairs rose from 0 us by %s us (medians; %+.1f%% on the nominal %g us, %+.1f%% on the "
          "reference's %.1f us)" % (size, ", ".join("%.1f" % x for x in sorted(rise.values())),
          100 * (statistics.median(rise.values()) - delay) / delay, delay,
          100 * (statistics.median(rise.values()) - ref_add) / ref_add, ref_add))
    if size == 1:
        # the latency heatmap's size (the smallest); 4K is printed, its latency not asserted
        check(all(abs(d - delay) <= 0.1 * delay for d in g.values()),
              "size 1: every crossing pair lies %g us (+-10%%) above the pairs inside a namespace: %s"
              % (delay, ", ".join("%.1f" % d for d in sorted(g.values()))))
        check(abs(ref_add - delay) <= 0.1 * delay,
              "the reference measured the link to add %.1f us for %g us of netem (+-10%%: the guest's clock is exact)"
              % (ref_add, delay))
        named = sorted((o["from"], o["to"]) for o in e["outliers"] if o["metric"] == "latency_us")
        check(named == sorted(cross), "size 1: the latency outliers are the crossing pairs: %s" % named)
        for i, j in cross:
            check(re.search(r"^# matrix: rank %d -> rank %d: [0-9.]+x the median latency" % (i, j), table, re.M)
                  is not None, "size 1: the table names rank %d -> rank %d" % (i, j))
        check(not any(re.search(r"^# matrix: rank %d -> rank %d: [0-9.]+x the median latency" % (i, j), table,
                                re.M) for i, j in inside), "size 1: the table names no pair inside a namespace")
    slow = [(o["from"], o["to"]) for o in e["outliers"] if o["metric"] == "bandwidth_MBps"]
    check(set(slow) <= set(cross), "size %d: bandwidth outliers only among crossing pairs: %s" % (size, slow))
    check(statistics.median(bw[i][j]["median"] for i, j in cross) <
          statistics.median(bw[i][j]["median"] for i, j in inside), "size %d: the crossing pairs slower" % size)
sys.exit(0 if ok else 1)
PY
}
for try in 1 2 3; do
    echo "attempt $try"
    attempt && break
    [ $try = 3 ] && fail "matrix: ground truth (3 attempts)"
done

[ $fails = 0 ] && echo "matrix-suite.sh: all passed" || echo "matrix-suite.sh: $fails failed"
[ $fails = 0 ]
