#!/bin/bash
# The rma module's scheduling over the verbs backend, in one Soft-RoCE guest (tests/rxe/vm-run.sh): see
# bench/rxe-rma-guest.sh. Skipped (77) without QEMU, a kernel with rdma_rxe, or verbs.
#
#   bench/rxe_rma_bench.sh [ROUNDS [COUNT [NGAUGE OPTION...]]]
set -u
. "$(dirname "$0")/lib.sh" rxerma
here=$(cd "$(dirname "$0")" && pwd)
"$NGAUGE" --list | grep -q "^  ibrc " || { echo "built without verbs: skipped"; exit 77; }
rounds=${1:-3}
count=${2:-500}
shift $(($# < 2 ? $# : 2))
# A round takes 4 to 5 minutes on a loaded 2-core host (sched-1 at 64 KiB is most of it): 420 s a round.
"$here/../tests/rxe/vm-run.sh" --timeout $((300 + 420 * rounds)) "$here/rxe-rma-guest.sh" "$rounds" "$count" "$@"
