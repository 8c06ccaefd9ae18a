#!/bin/bash
# ofi-suite.sh — the RDMA layer's ofi backend over libfabric's verbs provider (verbs;ofi_rxm) on Soft-RoCE,
# and the eager and length limits of the verbs backend, inside the guest: `tests/rxe/vm-run.sh ofi-suite.sh`
# (meson test --suite rxe rxe-ofi does that). Exits 0 when every check passed, 1 otherwise, 77 outside the VM.
#
# 1. The layer's conformance test over ofi verbs;ofi_rxm (3 ranks), and over verbs with writes and reads
#    split at 64 KiB (MAX_WRITE: every longer one in several, the same content checked).
# 2. The rma module's correctness test and the rma pattern's suite (--verify) over ofi verbs;ofi_rxm.
# 3. The rdma module's suite (tests/integration/rdma_module.sh, --verify) over ofi verbs;ofi_rxm.
# 4. spipe over ofi verbs;ofi_rxm: test_spipe_local for every mode.
# 5. pingpong --verify around every ring limit: verbs with --rdma-eager 16K, ofi verbs;ofi_rxm with 64K.
# The guest is emulated: counts are small, the figures mean nothing.
set -u

B=${NGAUGE_BUILD:-}
N=${NGAUGE:-${B:+$B/ngauge}}
[ -n "$N" ] && [ -n "$B" ] || {
    echo "ofi-suite.sh: set NGAUGE_BUILD (the build directory)" >&2
    exit 1
}
src=${NGAUGE_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
dev=${NGAUGE_RXE_DEVICE:-rxe0}
if [ ! -e "/sys/class/infiniband/$dev" ]; then
    echo "ofi-suite.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi
"$N" --list 2>/dev/null | grep -q 'ofi' || { echo "ofi-suite.sh: SKIP: no ofi backend" >&2; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-ofi.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fails=0
T0=$EPOCHREALTIME
P='verbs;ofi_rxm'

. "$src/tests/hang_report.sh"

# step NAME CMD...: runs CMD (600 s at most: then what it was doing, tests/hang_report.sh); its output,
# stdout then stderr, is shown when it fails.
step() {
    local name=$1 rc start=$EPOCHREALTIME us
    shift
    run_limited 600 "$name" "$W/$name.out" "$W/$name.err" "$@"
    rc=$?
    cat "$W/$name.err" >>"$W/$name.out"
    us=$((${EPOCHREALTIME/./} - ${start/./}))
    if [ "$rc" = 0 ]; then
        printf 'ok   %-36s %5d.%d s\n' "$name" $((us / 1000000)) $((us % 1000000 / 100000))
        grep -E '^(ok: |backend:|rma |ofi: )' "$W/$name.out" | sed 's/^/     /'
    else
        echo "FAIL: $name: exit $rc: $*"
        grep -v 'out of bounds$' "$W/$name.out" | tail -n 25 | sed 's/^/  | /'
        fails=$((fails + 1))
    fi
}

# The provider must open here, over rxe0 (else nothing below means anything).
step ofi-opens "$N" -x rdma --rdma-backend ofi --ofi-provider "$P" --rdma-poll yield -p pingpong -s 8 -c 3 -w 1 --verify
grep -q 'verbs;ofi_rxm' "$W/ofi-opens.out" || { echo "FAIL: ofi-opens: the device line does not name verbs;ofi_rxm"; fails=$((fails + 1)); }
# verbs;ofi_rxm in the emulated guest: milliseconds per operation (delivery completion, rxm's progress thread).
export NGAUGE_RMA_TEST_TIMEOUT=60
step layer-ofi "$B/tests/test_rdma_layer" ofi 3 "$P"
step layer-verbs-split "$B/tests/test_rdma_layer" verbs 2 "" 65536
step rma-ofi "$B/tests/test_rma_conform" rma direct none ofi "$P"
step rma-pattern-ofi env NGAUGE="$N" NGAUGE_SRC="$src" bash "$src/tests/patterns/rma_suite.sh" local -x rma \
    --rdma-backend ofi --ofi-provider "$P" --rdma-poll yield
step rdma-module-ofi env NGAUGE="$N" NGAUGE_RDMA_BACKENDS="ofi:$P" NGAUGE_RDMA_COUNT=10 NGAUGE_RDMA_KILL_COUNT=2000 \
    NGAUGE_RDMA_A2A=0 NGAUGE_RDMA_OPTS="--rdma-poll yield" bash "$src/tests/integration/rdma_module.sh"
for m in reg rcache copy pipeline super; do
    step "spipe-$m-ofi" "$B/tests/test_spipe_local" "$m" ofi "$P"
done
# Ring limits: the eager size, its header and trailer (24 B and padding), the old 16 KiB staging.
step eager-verbs-16K "$N" -x rdma --rdma-backend verbs --rdma-eager 16K --rdma-poll yield -p pingpong \
    -s 0,1,7,8,9,16335,16336,16337,16359,16360,16361,16383,16384,16385,32768 -c 5 -w 1 --verify
step eager-ofi-64K "$N" -x rdma --rdma-backend ofi --ofi-provider "$P" --rdma-eager 64K --rdma-poll yield -p pingpong \
    -s 0,1,8,16360,16361,16384,16385,65511,65512,65513,65535,65536,65537 -c 5 -w 1 --verify

us=$((${EPOCHREALTIME/./} - ${T0/./}))
echo "ofi-suite.sh: $fails failure(s), $((us / 1000000)) s"
[ "$fails" = 0 ]
