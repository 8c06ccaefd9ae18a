#!/bin/bash
# oneway-suite.sh — pingpong --one-way against a known truth inside the Soft-RoCE guest (which has veth and
# sch_netem): `tests/rxe/vm-run.sh oneway-suite.sh` (meson test --suite rxe does that, with
# -Drxe_netem_tests=enabled). Exits 0 when every check passed, 1 otherwise, 77 outside the VM or without
# mpiexec, ip, tc or python3.
#
# Two network namespaces A (10.77.0.1, rank 0: the client) and B (10.77.0.2, rank 1: the server) joined by a
# veth; netem on A's end delays A -> B (client to server), on B's end B -> A. Two ranks over the tcp module,
# launched by mpiexec (the MPI bootstrap only), 1-byte messages. One boot:
#   1. no qdisc: the base one-way times of both directions (--one-way on the shared clock: one kernel);
#   2. netem on one direction only (200 us A -> B, 50 us B -> A, then 100 us each): the truth is netem's real
#      added delay, the rise of the round trip (timed on the client's clock alone), because in the emulated
#      guest netem delivers 80-180 us late, varying from run to run (busybox ping, printed for reference, saw
#      200-250 us late: its timing is not tcp's); the delayed direction must rise by it (+-10%), the other not;
#   3. 200 us A -> B and 50 us B -> A at once, shared clock: each direction within 10% of its base plus netem's
#      real added delay of step 2 (the nominal delay is printed beside);
#   4. the same asymmetric delays, --sync force: the model takes half the asymmetry for an offset, so both
#      directions come out near their mean; the row must say "symmetry_assumed", and the truth lie within the
#      reported bound (which covers half the asymmetry: half the fit's largest round trip);
#   5. 100 us both ways, --sync force: each direction within the reported bound of the truth.
# Up to three attempts (a loaded host disturbs the emulated guest's timing); each attempt's numbers are
# printed. Run with one vCPU (NGAUGE_RXE_SMP=1, as meson does; the tcp module's ranks block, not spin).
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment.
set -u

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "oneway-suite.sh: set NGAUGE (the binary) or NGAUGE_BUILD (the build directory)" >&2; exit 1; }
if [ "${NGAUGE_RXE:-0}" != 1 ]; then
    echo "oneway-suite.sh: SKIP: not in the test guest (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi
for t in mpiexec ip tc python3 busybox; do
    command -v $t >/dev/null || { echo "oneway-suite.sh: SKIP: no $t in the guest" >&2; exit 77; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-oneway.XXXXXX") || exit 1
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

ip netns add A && ip netns add B &&
    ip link add va netns A type veth peer name vb netns B &&
    ip -n A addr add 10.77.0.1/24 dev va && ip -n B addr add 10.77.0.2/24 dev vb &&
    ip -n A link set lo up && ip -n B link set lo up &&
    ip -n A link set va up && ip -n B link set vb up ||
    { echo "oneway-suite.sh: could not set up the namespaces" >&2; exit 1; }

# delay AB BA: netem on A's egress (A -> B) and B's (B -> A), in us; "-" removes the qdisc.
delay() {
    ip netns exec A tc qdisc del dev va root 2>/dev/null
    ip netns exec B tc qdisc del dev vb root 2>/dev/null
    { [ "$1" = - ] || ip netns exec A tc qdisc add dev va root netem delay "$1"us; } &&
        { [ "$2" = - ] || ip netns exec B tc qdisc add dev vb root netem delay "$2"us; }
}

# ping NAME: 300 echo requests from A to B, one as soon as the last is answered; the times into $W/NAME.ping.
pings() {
    ip netns exec A busybox ping -A -c 300 -q 10.77.0.2 >/dev/null 2>&1 # warm the path (ARP, caches)
    ip netns exec A busybox ping -A -c 300 10.77.0.2 2>&1 | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' >"$W/$1.ping"
    [ -s "$W/$1.ping" ] || { echo "ping $1: no replies"; return 1; }
}

# pp NAME ARGS...: pingpong --one-way between A (rank 0) and B into $W/NAME.json.
pp() {
    local name=$1 rc
    shift
    local args=(-p pingpong --one-way -s 1 -c 2000 -w 50 --timeout 60 "$@" -o "$W/$name.json")
    timeout -k 5 240 mpiexec -genv UCX_TLS self,sm -n 1 ip netns exec A "$N" -x tcp --tcp-bind 10.77.0.1 \
        "${args[@]}" : -n 1 ip netns exec B "$N" -x tcp --tcp-bind 10.77.0.2 "${args[@]}" \
        >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    if [ $rc != 0 ]; then
        echo "pingpong $name: exit $rc"
        sed "s/^/  stderr| /" "$W/$name.err" | head -n 30
        return 1
    fi
    sed 's/^/  | /' "$W/$name.out"
    grep -i "symmetr" "$W/$name.err" | sed 's/^/  stderr| /'
}

attempt() {
    delay - - && pings base && pp base || return 1
    delay 200 - && pings ab && pp ab || return 1
    delay - 50 && pings ba && pp ba || return 1
    delay 200 50 && pp asym && pp asymforce --sync force || return 1
    delay 100 - && pp ab100 || return 1
    delay - 100 && pp ba100 || return 1
    delay 100 100 && pp symforce --sync force || return 1
    python3 - "$W" <<'PY'
import json, statistics, sys
W = sys.argv[1]
ok = True
def check(cond, what):
    global ok
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    ok = ok and cond
def ping(name):
    return statistics.median(float(x) * 1e3 for x in open("%s/%s.ping" % (W, name)))
def row(name):
    d = json.load(open("%s/%s.json" % (W, name)))
    return d, d["results"][0]
def med(r, key):
    return r[key]["median"]
def rtt(r):
    return 2 * med(r, "latency_us")
base_d, base = row("base")
check(base_d["clock"]["model"] == "shared", "base: the shared clock (%s)" % base_d["clock"].get("reason"))
c0, s0 = med(base, "client_to_server_us"), med(base, "server_to_client_us")
print("     base: client->server %.1f us, server->client %.1f us, round trip %.1f us, bound %.3f us"
      % (c0, s0, rtt(base), base["one_way_bound_us"]))
check(abs(c0 + s0 - rtt(base)) <= 0.15 * rtt(base), "base: the directions add up to the round trip (+-15%)")
# netem's real added delay of each direction: the rise of the round trip with netem on that direction only
# (the round trip is timed on the client's clock alone: no one-way machinery in it)
rise = {}
for name, nominal, delayed in (("ab", 200, "client_to_server_us"), ("ba", 50, "server_to_client_us"),
                               ("ab100", 100, "client_to_server_us"), ("ba100", 100, "server_to_client_us")):
    d, r = row(name)
    rise[name] = rtt(r) - rtt(base)
    other = "server_to_client_us" if delayed == "client_to_server_us" else "client_to_server_us"
    b_del, b_oth = (c0, s0) if delayed == "client_to_server_us" else (s0, c0)
    print("     netem %d us on %s only: round trip +%.1f us (netem's real added delay)%s; %s %.1f us, %s %.1f us"
          % (nominal, delayed, rise[name], ", ping +%.1f us" % (ping(name) - ping("base")) if name in ("ab", "ba") else "",
             delayed, med(r, delayed), other, med(r, other)))
    check(abs(med(r, delayed) - b_del - rise[name]) <= 0.1 * (b_del + rise[name]),
          "%s: the delayed direction %.1f us within 10%% of its base plus netem's added delay, %.1f us"
          % (name, med(r, delayed), b_del + rise[name]))
    check(abs(med(r, other) - b_oth) <= 0.1 * b_oth + 5,
          "%s: the other direction %.1f us within 10%% (+5 us) of its base, %.1f us" % (name, med(r, other), b_oth))
d, r = row("asym")
check(d["clock"]["model"] == "shared" and "symmetry_assumed" not in r, "200/50 us: the shared clock, no symmetry assumed")
tc, ts = c0 + rise["ab"], s0 + rise["ba"]
c, s = med(r, "client_to_server_us"), med(r, "server_to_client_us")
print("     200/50 us, shared clock: client->server %.1f us (truth %.1f, nominal %.1f), server->client %.1f us "
      "(truth %.1f, nominal %.1f)" % (c, tc, c0 + 200, s, ts, s0 + 50))
check(abs(c - tc) <= 0.1 * tc, "200/50 us: client->server within 10%% of %.1f us" % tc)
check(abs(s - ts) <= 0.1 * ts, "200/50 us: server->client within 10%% of %.1f us" % ts)
for name, tc, ts, asymmetric in (("asymforce", c0 + rise["ab"], s0 + rise["ba"], True),
                                 ("symforce", c0 + rise["ab100"], s0 + rise["ba100"], False)):
    d, r = row(name)
    check(d["clock"]["model"] == "fitted", "%s: a fitted model (bound %.1f us)" % (name, d["clock"]["bound_us"]))
    c, s, bound = med(r, "client_to_server_us"), med(r, "server_to_client_us"), r["one_way_bound_us"]
    print("     %s: client->server %.1f us (truth %.1f, off %+.1f), server->client %.1f us (truth %.1f, off %+.1f), "
          "bound %.1f us, symmetry_assumed %s" % (name, c, tc, c - tc, s, ts, s - ts, bound, r.get("symmetry_assumed")))
    check(abs(c - tc) <= bound and abs(s - ts) <= bound, "%s: both directions within the bound of the truth" % name)
    if asymmetric:
        check(r.get("symmetry_assumed") is True, "%s: the row says the symmetry is assumed" % name)
sys.exit(0 if ok else 1)
PY
}
for try in 1 2 3; do
    echo "attempt $try"
    attempt && break
    [ $try = 3 ] && fail "one-way: ground truth (3 attempts)"
done

[ $fails = 0 ] && echo "oneway-suite.sh: all passed" || echo "oneway-suite.sh: $fails failed"
[ $fails = 0 ]
