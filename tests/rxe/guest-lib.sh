# Sourced by the scripts that run inside the Soft-RoCE guest (selftest.sh, verbs-suite.sh, spipe-suite.sh).

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

# run NAME WANT CMD...: runs CMD (2 minutes at most) with stdout/stderr in $W/NAME.out/.err; checks the
# exit status is WANT ("nz": any non-zero).
run() {
    local name=$1 want=$2 rc start=$EPOCHREALTIME us
    shift 2
    timeout -k 5 120 "$@" >"$W/$name.out" 2>"$W/$name.err"
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
