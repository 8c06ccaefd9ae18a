#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's skew figure (doc/figures/skew-rma.png): the origin's time per
# one-sided epoch (16 puts of 64 KiB, PSCW) against the computation of the
# target between its post and its wait, over
#   rma --rma-design direct    (RDMA writes into the window: expected flat)
#   rma --rma-design sendrecv  (operations as messages the target applies)
#   mpirma                     (MPICH's own one-sided operations; only when
#                               this build has the module and mpiexec runs)
# on the shm backend of the RDMA layer, two ranks pinned to CPUs 0 and 1.
#
#   scripts/skew-figure.sh [BUILD_DIR [OUT.png]]    (defaults: build, doc/figures/skew-rma.png)
#
# The result files are kept beside the figure's script in a temporary
# directory whose name is printed; the figure is copied to OUT.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-doc/figures/skew-rma.png}
NG="$BUILD/ngauge"
[ -x "$NG" ] || { echo "$NG not found: build first (meson setup $BUILD && ninja -C $BUILD)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ngauge-skew-figure.XXXXXX)
echo "result files in $TMP"

# One skew range for all: 0 to 400 us in 9 steps; 200 timed epochs per step.
COMMON=(-p skew --skew-rma -s 64K --skew-compute 0-400/9 -c 200 -w 20 --pin 0,1)
FILES=()
LABELS=()
for design in direct sendrecv; do
	"$NG" -x rma --rdma-backend shm --rma-design "$design" "${COMMON[@]}" -o "$TMP/rma-$design.json" |
		grep '^# skew'
	FILES+=("$TMP/rma-$design.json")
	LABELS+=(--label "rma $design")
done
if "$NG" --list | grep -q '^  mpirma ' && command -v mpiexec >/dev/null; then
	mpiexec -n 2 "$NG" -x mpirma "${COMMON[@]}" -o "$TMP/mpirma.json" | grep '^# skew'
	FILES+=("$TMP/mpirma.json")
	LABELS+=(--label "mpirma")
else
	echo "no mpirma module in this build (or no mpiexec): the figure shows the rma designs only" >&2
fi
"$NG" plot "${FILES[@]}" "${LABELS[@]}" -o "$TMP/skew-rma.png" >/dev/null
mkdir -p "$(dirname "$OUT")"
cp "$TMP/skew-rma.png" "$OUT"
echo "$OUT"
