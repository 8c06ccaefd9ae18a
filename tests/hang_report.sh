# Sourced by tests/integration/lib.sh and tests/rxe/guest-lib.sh: what a command that outlived its time was
# doing, printed on stdout before it is stopped.
#
# hang_report NAME PID [RESULT]: the stacks of PID and of every process below it (gdb, where installed: an
# mpiexec's ranks are its grandchildren), the verbs devices' queue pairs (rdma res, where there is a device:
# states and sequence numbers tell a stalled transport from a protocol waiting for a message nobody sends),
# and whether the result file RESULT is complete and how many rows it holds.

ng_descendants() {
    local p
    for p in $(pgrep -P "$1"); do
        echo "$p"
        ng_descendants "$p"
    done
}

hang_report() {
    local name=$1 pid=$2 res=${3:-} c
    echo "HANG: $name: still running after ${RUN_LIMIT:-115} s; what it was doing:"
    for c in "$pid" $(ng_descendants "$pid"); do
        echo "  -- process $c: $(tr '\0' ' ' </proc/"$c"/cmdline 2>/dev/null | cut -c1-100)"
        command -v gdb >/dev/null &&
            timeout 60 gdb -q -batch -p "$c" -ex 'thread apply all bt 12' 2>&1 | grep '^#' | sed 's/^/     /'
    done
    if command -v rdma >/dev/null && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
        timeout 10 rdma -d res show qp 2>&1 | sed 's/^/  qp| /' | head -n 20
    fi
    if [ -n "$res" ] && [ -s "$res" ]; then
        echo "  result $res: $(grep -o '"complete": [a-z]*' "$res"), $(grep -c '"count":' "$res") row(s)"
    fi
}

# run_limited LIMIT NAME OUT ERR CMD...: runs CMD with stdout into the file OUT and stderr into ERR, for at
# most LIMIT seconds; past that, hang_report on stdout (NG_HANG_RESULT names a result file to look into),
# SIGTERM, and SIGKILL to it and everything below it 5 s later. Returns CMD's status, 124 when it was stopped.
# The watchdog waits in bash's own `read -t` on a FIFO that the end of CMD writes to: no process is started
# and nothing wakes up while CMD runs (timing tests run under it).
run_limited() {
    local limit=$1 name=$2 out=$3 err=$4 pid wd rc fifo wfd
    shift 4
    fifo=$(mktemp -u "${TMPDIR:-/tmp}/ngauge-wd.XXXXXX") && mkfifo "$fifo" || return 1
    exec {wfd}<>"$fifo"
    "$@" >"$out" 2>"$err" &
    pid=$!
    (
        read -r -t "$limit" _ <&"$wfd" && exit 0
        kill -0 "$pid" 2>/dev/null || exit 0
        : >"$fifo.hang"
        RUN_LIMIT=$limit hang_report "$name" "$pid" "${NG_HANG_RESULT:-}"
        kill -TERM "$pid" 2>/dev/null
        read -r -t 5 _ <&"$wfd" && exit 0
        kill -KILL "$pid" $(ng_descendants "$pid") 2>/dev/null
    ) &
    wd=$!
    wait "$pid"
    rc=$?
    echo end >&"$wfd"
    wait "$wd"
    exec {wfd}>&-
    [ -e "$fifo.hang" ] && rc=124
    rm -f "$fifo" "$fifo.hang"
    return "$rc"
}
