#!/bin/bash
# alltoall and mpbibw under mpiexec: every algorithm, MPI_Alltoall included,
# delivers every block to its place for 2, 3, 4, 5 and 8 ranks over the mpi
# module, with host nodes and --ranks-per-node 2; tcp with the MPI launch.
. "$NGAUGE_SRC/tests/integration/lib.sh"
command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }

# a2a MODULE NP K ALGOS
a2a() {
	local mod=$1 np=$2 k=$3 algos=$4 out="$T/a2a-$1-$2-$3.json"
	run 0 mpiexec -n "$np" "$NGAUGE" -x "$mod" -p alltoall --a2a-algo all --ranks-per-node "$k" --verify \
		-s 7,33000 -c 2 -w 0 -o "$out" || return
	pycheck "$out" "mpiexec -n $np $mod alltoall, --ranks-per-node $k: every algorithm verified" "
np, k, algos, mod = $np, $k, $algos, '$mod'
assert r['complete'] and r['launch'] == 'mpi' and r['module'] == mod and r['ranks'] == np
b = r['alltoall']
assert b['algorithms'] == algos, b
assert b['nodes'] == ((np + k - 1) // k if k else 1), b
rows = r['results']
assert [(x['algorithm'], x['size']) for x in rows] == [(a, s) for a in algos for s in (7, 33000)], rows
for x in rows:
    assert x['verified'] == 3 and stats_ok(x['time_us']) and x['algbw_MBps']['median'] > 0, x
"
	# The side-by-side summary follows the rows on stdout.
	[ "$mod$np$k" = mpi40 ] || return
	grep -qE "^#  *size  *bruck  *isend  *pairwise  *leader  *sa  *rd  *mpi  *best$" "$T/out" &&
		grep -qE "^ +33000( +[0-9.]+){7} +[a-z]+$" "$T/out" &&
		pass "mpiexec -n 4 mpi alltoall all: side-by-side summary" || fail "summary table under mpiexec"
}

ALL='["bruck", "isend", "pairwise", "leader", "sa", "rd", "mpi"]'
for np in 2 3 4 5 8; do
	a2a mpi "$np" 0 "$ALL"
	a2a mpi "$np" 2 "$ALL"
done
a2a tcp 4 2 '["bruck", "isend", "pairwise", "leader", "sa", "rd"]'

# Blocking steps with synchronous sends (a send returns only once the peer
# receives): the send/receive order of bruck and pairwise must not deadlock.
for np in 3 5 6; do
	if run 0 mpiexec -n "$np" "$NGAUGE" -x mpi --mpi-ssend -p alltoall --a2a-algo bruck,pairwise --a2a-blocking \
		--verify -s 1,4096 -c 2 -w 0 -o "$T/ssend$np.json"; then
		pycheck "$T/ssend$np.json" "mpiexec -n $np, MPI_Ssend: blocking bruck and pairwise complete" "
assert r['alltoall']['blocking_steps'] is True and len(r['results']) == 4
assert all(x['verified'] == 3 for x in r['results'])
"
	fi
done

if run 0 mpiexec -n 4 "$NGAUGE" -x mpi -p mpbibw --ranks-per-node 2 -s 1K,64K -c 3 --mpbibw-window 8 --verify \
	-o "$T/bibw.json"; then
	pycheck "$T/bibw.json" "mpiexec -n 4 mpi mpbibw, 2 virtual nodes" "
b = r['mpbibw']
assert b['nodes'] == [[0, 1], [2, 3]] and b['membership'] == 'virtual'
assert [(x['pairs'], x['size']) for x in r['results']] == [(1, 1024), (1, 65536), (2, 1024), (2, 65536)]
assert all(x['bandwidth_MBps']['median'] > 0 for x in r['results'])
"
fi
finish
