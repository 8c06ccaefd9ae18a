#!/bin/sh
# The folders are the architecture: a pattern sees only core/ (and timers/, analysis/), never a module's
# header nor a network library's (MPI, verbs, libfabric); a module never includes a pattern's header.
set -u
: "${NGAUGE_SRC:?NGAUGE_SRC must point to the source tree}"
cd "$NGAUGE_SRC" || exit 1
bad=0
for f in patterns/*.[ch]; do
	if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]((mpi|mpio)\.h|infiniband/|rdma/|rdma_|fabric|ofi|(\.\./)?modules/)' "$f"; then
		echo "FAIL: $f includes a module's or a network library's header"
		bad=$((bad + 1))
	fi
done
for f in $(find modules -name '*.[ch]'); do
	if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(\.\./)*patterns/' "$f"; then
		echo "FAIL: $f includes a pattern's header"
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ] || exit 1
echo "ok: patterns include no module or network library header, modules no pattern header"
