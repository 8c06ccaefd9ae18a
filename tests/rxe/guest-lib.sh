# Sourced by the scripts that run inside the Soft-RoCE guest (selftest.sh, verbs-suite.sh, spipe-suite.sh,
# matrix-suite.sh, oneway-suite.sh).

# wait_listen PORT PID: until something listens on TCP PORT, or PID exits, or 30 s pass.
wait_listen() {
    local hex i f sl local_addr rem st rest
    hex=$(printf '%04X' "$1")
    for ((i = 0; i < 300; i++)); do
        kill -0 "$2" 2>/dev/null || return 1
        for f in /proc/net/tcp /proc/net/tcp6; do
            while read -r sl local_addr rem st rest; do
                [ "$st" = 0A ] && [ "${local_addr##*:}" = "$hex" ] && return 0
            done <"$f"
        done
        sleep 0.1
    done
    return 1
}

# The check helpers of verbs-suite.sh and spipe-suite.sh; they use $W (a work directory) and count
# failures in $fails.
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# usecs since START (an $EPOCHREALTIME), without forking
usecs() { echo $((${EPOCHREALTIME/./} - ${1/./})); }

. "$(dirname "${BASH_SOURCE[0]}")/../hang_report.sh"

# run NAME WANT CMD...: runs CMD with stdout/stderr in $W/NAME.out/.err, RUN_LIMIT seconds at most (default
# 115; then what it was doing, tests/hang_report.sh, and SIGTERM); checks the exit status is WANT ("nz": any
# non-zero).
run() {
    local name=$1 want=$2 rc start=$EPOCHREALTIME us
    shift 2
    NG_HANG_RESULT=$W/$name.json run_limited "${RUN_LIMIT:-115}" "$name" "$W/$name.out" "$W/$name.err" "$@"
    rc=$?
    us=$(usecs "$start")
    if [ "$want" = nz ] && [ "$rc" != 0 ] || [ "$rc" = "$want" ]; then
        printf 'ok   %-34s exit %-3s %5d.%d s\n' "$name" "$rc" $((us / 1000000)) $((us % 1000000 / 100000))
        return 0
    fi
    fail "$name: exit $rc, expected $want: $*"
    sed 's/^/  stderr| /' "$W/$name.err" | tail -n 15
    return 1
}

# The two network namespaces of the netem ground truths (matrix-suite.sh, oneway-suite.sh): A (198.18.77.1 on
# va) and B (198.18.77.2 on vb) joined by a veth, loopback up in each. netns_pair sets them up (non-zero on
# failure), netns_pair_del removes them.
netns_pair() {
    ip netns add A && ip netns add B &&
        ip link add va netns A type veth peer name vb netns B &&
        ip -n A addr add 198.18.77.1/24 dev va && ip -n B addr add 198.18.77.2/24 dev vb &&
        ip -n A link set lo up && ip -n B link set lo up &&
        ip -n A link set va up && ip -n B link set vb up
}
netns_pair_del() {
    ip netns del A 2>/dev/null
    ip netns del B 2>/dev/null
}

# ab_run NAME NA NB ARGS...: ngauge ($N) over tcp with NA ranks in A and NB in B under mpiexec (the MPI
# bootstrap only: MPICH's UCX would reach the other namespace's ranks over rxe0 and time out, so shared
# memory only, the ranks share one host), output into $W/NAME.out and $W/NAME.err; prints the table, or the
# exit status and stderr. Guest time runs ahead of the host's while the guest waits for the host (9p) on the
# instruction-counted clock, hence the long timeout (vm-run.sh's own is on the host's clock).
ab_run() {
    local name=$1 na=$2 nb=$3 rc
    shift 3
    timeout -k 5 1800 mpiexec -genv UCX_TLS self,sm -n "$na" ip netns exec A "$N" -x tcp --tcp-bind 198.18.77.1 \
        "$@" : -n "$nb" ip netns exec B "$N" -x tcp --tcp-bind 198.18.77.2 "$@" >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    if [ $rc != 0 ]; then
        echo "$name: exit $rc"
        sed "s/^/  stderr| /" "$W/$name.err" | head -n 30
        return 1
    fi
    sed 's/^/  | /' "$W/$name.out"
}
