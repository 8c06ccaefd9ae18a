#!/bin/bash
# selftest.sh — check the Soft-RoCE guest itself: run it with `tests/rxe/vm-run.sh tests/rxe/selftest.sh`.
#
# Lists the verbs devices, then runs rdma-core's RC and UD ping-pong and perftest's send and RDMA-write
# latency tests, each as a server and a client on the one device rxe0 (GID index 1, the IPv4-mapped
# RoCE v2 GID), and prints the client's result lines. Exits 1 if any step fails; 77 outside the VM.
# Emulated latencies are tens of microseconds: they show the path works, not how fast anything is.
set -u
. "$(dirname "$0")/guest-lib.sh"

dev=${NGAUGE_RXE_DEVICE:-rxe0}
gid=${NGAUGE_RXE_GID_INDEX:-1}
iters=${NGAUGE_RXE_SELFTEST_ITERS:-200}
step_timeout=60

if [ ! -e "/sys/class/infiniband/$dev" ]; then
    echo "selftest.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rxe-selftest.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failed=0

fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
}


# pair NAME PORT CMD...: run CMD as server, wait for it to listen on PORT, run CMD 127.0.0.1 as client.
pair() {
    local name=$1 port=$2 spid src crc start=$EPOCHREALTIME
    shift 2
    echo "== $name: $* [127.0.0.1]"
    timeout "$step_timeout" "$@" -p "$port" >"$work/$name.server" 2>&1 &
    spid=$!
    if ! wait_listen "$port" "$spid"; then
        wait "$spid"
        fail "$name: the server never listened on port $port (exit $?)"
        sed 's/^/  server| /' "$work/$name.server"
        return
    fi
    timeout "$step_timeout" "$@" -p "$port" 127.0.0.1 >"$work/$name.client" 2>&1
    crc=$?
    wait "$spid"
    src=$?
    if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
        fail "$name: client exit $crc, server exit $src"
        sed 's/^/  server| /' "$work/$name.server"
        sed 's/^/  client| /' "$work/$name.client"
        return
    fi
    case $1 in
    ib_*) # perftest: the table header and its result row
        grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ +[0-9.]+' "$work/$name.client" ;;
    *) cat "$work/$name.client" ;;
    esac
    elapsed "$start"
}

# elapsed START: print the wall time since START (an $EPOCHREALTIME) without forking.
elapsed() {
    local us=$((${EPOCHREALTIME/./} - ${1/./}))
    printf '   (%d.%01d s)\n' $((us / 1000000)) $((us % 1000000 / 100000))
}

echo "== ibv_devices"
ibv_devices || fail "ibv_devices"
echo "== ibv_devinfo -d $dev"
ibv_devinfo -d "$dev" >"$work/devinfo" 2>&1 || fail "ibv_devinfo -d $dev"
cat "$work/devinfo"
grep -q 'state:.*PORT_ACTIVE' "$work/devinfo" || fail "$dev port 1 is not PORT_ACTIVE"

# rxe on a 1500-byte veth has an active MTU of 1024: UD messages must fit in it.
pair rc_pingpong 18515 ibv_rc_pingpong -d "$dev" -g "$gid" -n "$iters"
pair ud_pingpong 18516 ibv_ud_pingpong -d "$dev" -g "$gid" -n "$iters" -s 512
pair send_lat 18517 ib_send_lat -d "$dev" -x "$gid" -n "$iters" -F
pair write_lat 18518 ib_write_lat -d "$dev" -x "$gid" -n "$iters" -F

if [ "$failed" != 0 ]; then
    echo "selftest.sh: $failed step(s) failed"
    exit 1
fi
echo "selftest.sh: all steps passed"
