#!/bin/bash
# coll under mpiexec over the mpi module: every operation with every algorithm, the native one (MPI_Allreduce,
# MPI_Bcast, MPI_Reduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Barrier, MPI_Gather, MPI_Scatter)
# included, leaves the right values in every rank's buffer for 4 and 5 ranks (int32, double; the other types
# are the tcp test's: MPI's ranks poll, and more runs on a small host take minutes).
. "$NGAUGE_SRC/tests/integration/lib.sh"
command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }

PAIRS='[("allreduce", "ring"), ("allreduce", "rd"), ("allreduce", "binomial"), ("allreduce", "rabenseifner"),
        ("allreduce", "native"),
        ("bcast", "binomial"), ("bcast", "scatter_allgather"), ("bcast", "linear"), ("bcast", "native"),
        ("reduce", "binomial"), ("reduce", "linear"), ("reduce", "native"),
        ("allgather", "ring"), ("allgather", "rd"), ("allgather", "native"),
        ("reduce_scatter", "ring"), ("reduce_scatter", "rd"), ("reduce_scatter", "native"),
        ("barrier", "dissemination"), ("barrier", "native"),
        ("gather", "binomial"), ("gather", "linear"), ("gather", "native"),
        ("scatter", "binomial"), ("scatter", "linear"), ("scatter", "native")]'

coll() {
	local np=$1 type=$2 sizes=$3 out="$T/coll-mpi-$1-$2.json"
	run 0 mpiexec -n "$np" "$NGAUGE" -x mpi -p coll --coll-op all --coll-algo all --coll-type "$type" --verify \
		-s "$sizes" -c 2 -w 1 -o "$out" || return
	pycheck "$out" "mpiexec -n $np mpi coll, $type: every algorithm and the native line verified at $sizes" "
np, pairs = $np, $PAIRS
sizes = [int(x) for x in '$sizes'.split(',')]
assert r['complete'] and r['launch'] == 'mpi' and r['module'] == 'mpi' and r['ranks'] == np
b = r['coll']
assert [(v['op'], v['algorithm']) for v in b['variants']] == pairs, b['variants']
assert b['skipped'] == {}, b['skipped']
rows = r['results']
want = [(o, a, 0 if o == 'barrier' else s) for o, a in pairs for s in (sizes[:1] if o == 'barrier' else sizes)]
assert [(x['op'], x['algorithm'], x['size']) for x in rows] == want
for x in rows:
    assert x['verified'] == 4 and stats_ok(x['time_us']), x
"
	[ "$np$type" = 4int32 ] || return
	grep -qE "^#  *size  *ring  *rd  *binomial  *rabenseifner  *native$" "$T/out" &&
		pass "mpiexec -n 4: the native line beside ngauge's algorithms" || fail "summary under mpiexec"
}

coll 4 int32 4,12,1000,4100
coll 5 double 8,24,1000

# Naming native over a module without it is an error; over mpi it is the only line.
if run 0 mpiexec -n 3 "$NGAUGE" -x mpi -p coll --coll-op allreduce,barrier --coll-algo native --coll-timing barrier \
	--verify -s 64 -c 3 -w 1 -o "$T/native.json"; then
	pycheck "$T/native.json" "mpiexec -n 3: --coll-algo native alone, barrier timing" "
assert [(x['op'], x['algorithm'], x['timing']) for x in r['results']] == [('allreduce', 'native', 'barrier'), ('barrier', 'native', 'barrier')]
"
fi
finish
