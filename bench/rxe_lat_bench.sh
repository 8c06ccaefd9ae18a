#!/bin/bash
# 8-byte latency of the write channel (rdma over the verbs backend, ibrc --ib-mode write), of ibrc's
# send mode and of its read mode against perftest's ib_write_lat, ib_send_lat and ib_read_lat, in one Soft-RoCE guest (tests/rxe/vm-run.sh):
# see bench/rxe-lat-guest.sh. Skipped (77) without QEMU, a kernel with rdma_rxe, perftest or verbs.
#
#   bench/rxe_lat_bench.sh [ROUNDS [COUNT [NGAUGE OPTION...]]]
set -u
. "$(dirname "$0")/lib.sh" rxelat
here=$(cd "$(dirname "$0")" && pwd)
command -v ib_write_lat >/dev/null || { echo "perftest not installed: skipped"; exit 77; }
"$NGAUGE" --list | grep -q "^  ibrc " || { echo "built without verbs: skipped"; exit 77; }
rounds=${1:-6}
count=${2:-2000}
shift $(($# < 2 ? $# : 2))
# The guest kernel picks the emulated HPET as its clocksource, which makes every clock_gettime() a trap into
# the emulator (900 ns a read, measured with --timer-info) where perftest reads the TSC (a few ns). With
# clocksource=tsc the guest's clock_gettime() is the vDSO's TSC read (about 100 ns emulated), so both tools
# time with a clock of the same kind; NGAUGE_RXE_APPEND set by the caller wins.
# Pinned as perftest is run (client on CPU 0, server on CPU 1), each round printed with its ratios.
export NGAUGE_RXE_LAT_PIN=${NGAUGE_RXE_LAT_PIN-yes}
export NGAUGE_RXE_APPEND=${NGAUGE_RXE_APPEND-clocksource=tsc tsc=reliable}
exec "$here/../tests/rxe/vm-run.sh" --timeout 1500 "$here/rxe-lat-guest.sh" "$rounds" "$count" "$@"
