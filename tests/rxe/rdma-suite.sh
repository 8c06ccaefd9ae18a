#!/bin/bash
# rdma-suite.sh — the RDMA layer's verbs backend and the modules on it, inside the Soft-RoCE guest:
# `tests/rxe/vm-run.sh rdma-suite.sh` (meson test --suite rxe does that). Exits 0 when every check passed,
# 1 otherwise, 77 outside the VM.
#
# 1. The layer's conformance test (tests/modules/test_rdma_layer.c) over verbs with 3 ranks: writes and
#    reads of 1 B .. 4 MiB at odd offsets, notified writes, 30,000 fetch-adds and 3,000 compare-and-swap
#    increments of one word to the exact count, out-of-bounds accesses refused, heap memory registered.
# 2. The rma module's correctness test (tests/modules/test_rma_conform.c) over verbs for every design and
#    scheduling: PSCW, fence, accumulate totals, exclusive and shared locks, bad calls.
# 3. The rma pattern (tests/patterns/rma_suite.sh) over the rma module's direct design on verbs: every test
#    with every synchronisation mode, odd sizes, 2 and 3 ranks, every epoch's content verified.
# 4. The rdma module over verbs (tests/integration/rdma_module.sh): --verify over pingpong (2 and 4 ranks),
#    1n, n1, loggp with a 4-slot ring, plogp and mpbibw (alltoall is left to the host: four ranks on one
#    emulated device take minutes); bad input; a killed peer. Low counts and
#    --rdma-poll yield: Soft-RoCE does its work in kernel threads that spinning ranks would starve.
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment, NGAUGE_SRC is the source tree.
set -u

B=${NGAUGE_BUILD:-}
N=${NGAUGE:-${B:+$B/ngauge}}
[ -n "$N" ] && [ -n "$B" ] || {
    echo "rdma-suite.sh: set NGAUGE_BUILD (the build directory)" >&2
    exit 1
}
src=${NGAUGE_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
dev=${NGAUGE_RXE_DEVICE:-rxe0}
if [ ! -e "/sys/class/infiniband/$dev" ]; then
    echo "rdma-suite.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-rdma.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fails=0
T0=$EPOCHREALTIME

# step NAME CMD...: runs CMD (600 s at most); its output is shown when it fails.
step() {
    local name=$1 rc start=$EPOCHREALTIME us
    shift
    timeout -k 5 600 "$@" >"$W/$name.out" 2>&1
    rc=$?
    us=$((${EPOCHREALTIME/./} - ${start/./}))
    if [ "$rc" = 0 ]; then
        printf 'ok   %-36s %5d.%d s\n' "$name" $((us / 1000000)) $((us % 1000000 / 100000))
        grep -E '^(ok: |backend:|rma )' "$W/$name.out" | sed 's/^/     /'
    else
        echo "FAIL: $name: exit $rc: $*"
        grep -v 'out of bounds$' "$W/$name.out" | tail -n 25 | sed 's/^/  | /'
        fails=$((fails + 1))
    fi
}

step layer-verbs "$B/tests/test_rdma_layer" verbs 3
# Emulated verbs on a busy host can starve a rank for seconds: the rma test's silence limit is raised.
export NGAUGE_RMA_TEST_TIMEOUT=15
for d in "direct none" "direct reorder" "direct aggregate" "sendrecv none"; do
    # shellcheck disable=SC2086
    step "rma-${d// /-}" "$B/tests/test_rma_conform" rma $d verbs
done
# The rma pattern over the direct design on verbs: every test and mode, 2 and 3 ranks, --verify.
step rma-pattern env NGAUGE="$N" NGAUGE_SRC="$src" bash "$src/tests/patterns/rma_suite.sh" local -x rma \
    --rdma-backend verbs --rdma-poll yield
step rdma-module env NGAUGE="$N" NGAUGE_RDMA_BACKENDS=verbs NGAUGE_RDMA_COUNT=10 NGAUGE_RDMA_KILL_COUNT=2000 NGAUGE_RDMA_A2A=0 \
    NGAUGE_RDMA_OPTS="--rdma-poll yield" bash "$src/tests/integration/rdma_module.sh"

us=$((${EPOCHREALTIME/./} - ${T0/./}))
echo "rdma-suite.sh: $fails failure(s), $((us / 1000000)) s"
[ "$fails" = 0 ]
