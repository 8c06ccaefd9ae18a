#!/bin/bash
# alltoall and mpbibw over tcp with local ranks: every algorithm delivers
# every block to its place (checked by ngauge itself: --verify, and the
# always-checked first iteration), for 2, 3, 4, 5 and 8 ranks, with host
# nodes and with --ranks-per-node virtual nodes (even and uneven).
. "$NGAUGE_SRC/tests/integration/lib.sh"

ALGOS='["bruck", "isend", "pairwise", "leader", "sa", "rd"]'
shm_before=$(ls /dev/shm | grep -c '^ngauge-a2a-')

# a2a NP K SIZES: runs all algorithms with --verify and checks the JSON.
a2a() {
	local np=$1 k=$2 sizes=$3 out="$T/a2a-$1-$2.json"
	run 0 "$NGAUGE" --np "$np" -x tcp -p alltoall --a2a-algo all --ranks-per-node "$k" --verify \
		-s "$sizes" -c 3 -w 1 -o "$out" || return
	pycheck "$out" "alltoall tcp $np ranks, --ranks-per-node $k: $sizes verified" "
np, k, algos = $np, $k, $ALGOS
sizes = [int(x) for x in '$sizes'.split(',')]
assert r['complete'] and r['pattern'] == 'alltoall' and r['ranks'] == np
b = r['alltoall']
assert b['algorithms'] == algos, b
assert 'mpi' in b['skipped']
nodes = (np + k - 1) // k if k else 1
assert b['nodes'] == nodes and sum(b['node_sizes']) == np, b
assert b['membership'] == ('virtual' if k else 'host')
rows = r['results']
assert [(x['algorithm'], x['size']) for x in rows] == [(a, s) for a in algos for s in sizes], rows
for x in rows:
    assert x['count'] == 3 and x['verified'] == 5, x
    assert stats_ok(x['time_us']) and x['time_us']['n'] == 3, x
    assert x['algbw_MBps']['median'] > 0
"
}

for np in 2 3 4 5 8; do
	a2a "$np" 0 1,7,1000,33000
	a2a "$np" 2 1,7,1000,33000
done
a2a 5 3 1,4096      # nodes of 3 and 2 ranks
a2a 8 3 1,4096      # nodes of 3, 3 and 2 ranks
a2a 3 1 1,4096      # one rank per node

# The side-by-side summary on stdout.
if run 0 "$NGAUGE" --np 3 -x tcp -p alltoall --a2a-algo isend,bruck -s 8,64 -c 5; then
	grep -q "^#  *size  *isend  *bruck  *best" "$T/out" && grep -qE "^ +64( +[0-9.]+){2} +(isend|bruck)$" "$T/out" &&
		pass "summary table: algorithms side by side, in the order given" || fail "summary table"
fi

# Blocking send/recv (no isend) with messages far beyond the socket
# buffers: the parity order must not deadlock.
for np in 3 5; do
	if run 0 "$NGAUGE" --np "$np" -x tcp -p alltoall --a2a-algo bruck,pairwise --a2a-blocking -s 2M -c 1 -w 0 \
		--verify -o "$T/blk$np.json"; then
		pycheck "$T/blk$np.json" "blocking bruck and pairwise, $np ranks, 2 MiB blocks" "
assert r['alltoall']['blocking_steps'] is True
assert [x['algorithm'] for x in r['results']] == ['bruck', 'pairwise']
assert all(x['verified'] == 2 for x in r['results'])
"
	fi
done

# Bad selections are usage errors.
run 2 "$NGAUGE" --np 2 -x tcp -p alltoall --a2a-algo bruck,nosuch -s 8 -c 1 &&
	grep -q "unknown algorithm 'nosuch'" "$T/err" && pass "unknown algorithm refused" || fail "unknown algorithm"
# The module's own alltoall (--a2a-algo mpi) is a capability tcp lacks: refused, naming the modules that
# offer it (the registry's, so none in a build without MPI).
offering="no module of this build does"
"$NGAUGE" --list | grep -q "^  mpi " && offering="modules that do: mpi, mpirma"
run 2 "$NGAUGE" --np 2 -x tcp -p alltoall --a2a-algo mpi -s 8 -c 1 &&
	grep -q "alltoall collective, which module 'tcp' does not offer ($offering)" "$T/err" &&
	pass "mpi algorithm over tcp refused, naming the modules that offer it" || fail "mpi over tcp: $(cat "$T/err")"
run 2 "$NGAUGE" --np 4 -x tcp -p alltoall --ranks-per-node 9 -s 8 -c 1 &&
	grep -q "ranks-per-node" "$T/err" && pass "--ranks-per-node beyond the rank count refused" ||
	fail "--ranks-per-node 9"

# mpbibw: 1..K pairs between two virtual nodes.
if run 0 "$NGAUGE" --np 4 -x tcp -p mpbibw -s 1,64K -c 5 -w 1 --mpbibw-window 8 --verify -o "$T/bibw.json"; then
	pycheck "$T/bibw.json" "mpbibw tcp 4 ranks: halves, 1 and 2 pairs" "
b = r['mpbibw']
assert b['nodes'] == [[0, 1], [2, 3]] and b['membership'] == 'halves' and b['max_pairs'] == 2 and b['window'] == 8
assert [(x['pairs'], x['size']) for x in r['results']] == [(1, 1), (1, 65536), (2, 1), (2, 65536)]
for x in r['results']:
    assert stats_ok(x['time_us']) and x['bandwidth_MBps']['median'] > 0 and x['verified'] == 7
"
fi
if run 0 "$NGAUGE" --np 5 -x tcp -p mpbibw --ranks-per-node 3 -s 4K -c 3 -o "$T/bibw5.json"; then
	pycheck "$T/bibw5.json" "mpbibw tcp 5 ranks, --ranks-per-node 3: nodes of 3 and 2" "
b = r['mpbibw']
assert b['nodes'] == [[0, 1, 2], [3, 4]] and b['membership'] == 'virtual' and b['max_pairs'] == 2
assert [x['pairs'] for x in r['results']] == [1, 2]
"
fi

# Shared memory never outlives a run, even one that is interrupted (SIGTERM
# to the whole process group, as from a terminal) in the middle of a size.
setsid "$NGAUGE" --np 4 -x tcp -p alltoall --a2a-algo sa,rd,leader -s 8 -c 1000000 >/dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM -- "-$pid" 2>/dev/null
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
kill -KILL -- "-$pid" 2>/dev/null
wait "$pid" 2>/dev/null
shm_after=$(ls /dev/shm | grep -c '^ngauge-a2a-')
[ "$shm_after" -le "$shm_before" ] && pass "no /dev/shm segment left behind" ||
	fail "/dev/shm has $shm_after ngauge-a2a-* entries (had $shm_before)"
finish
