#!/bin/bash
# ngauge on an eight-node Slurm cluster on this machine (scripts/slurm-cluster.sh with NGAUGE_SLURM_NODES=8:
# slurmctld in the root network namespace behind the bridge ngsbr8 at 198.18.8.1, slurmd n1 ... n8 at
# 198.18.8.11 ... 198.18.8.18, each in a network and UTS namespace of its own, joined by veth to the bridge;
# names, addresses and ports apart from the two-node cluster of slurm.sh, so both may run at once):
# - the cluster comes up with its eight nodes idle;
# - `srun -N 8 -n 64 --overcommit` places eight tasks on each node (tasks 8k ... 8k+7 on node k+1: Slurm's block
#   distribution; every node declares this machine's CPUs, hence --overcommit);
# - `srun -N 8 -n 64 --mpi=pmi2 ngauge -x tcp --verify` of pingpong, ebb and alltoall, bootstrapped through
#   Slurm's PMI-2: each result has 64 ranks, the launch "pmi2", eight hosts n1 ... n8 in its manifest and every
#   rank's host as Slurm placed it, the tcp module on n1's address, every payload verified and its rows
#   (pingpong: 32 pairs; ebb: every pair of each bisection; alltoall: every algorithm at both sizes, eight
#   nodes of eight ranks), and the ebb's traffic over every node's veth both ways;
# - stop leaves no daemon, namespace, veth or bridge.
# Sizes and counts are small (64 ranks share this machine's cores; tcp waits asleep, its default): the test
# takes well under a minute on an idle 2-core machine.  Skipped (77) where the machine forbids network
# namespaces or veths, the Slurm or munge packages are missing (scripts/setup.sh), or this is not root.  A build
# without PMI-2 fails.  The cluster is stopped at the end, also when a check fails or the test is killed.
. "$NGAUGE_SRC/tests/integration/lib.sh"
HELPER=$NGAUGE_SRC/scripts/slurm-cluster.sh
export NGAUGE_SLURM_NODES=8
NODES=8
TASKS=64

skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, daemons)"
for c in slurmctld slurmd munged srun sinfo scontrol ip unshare nsenter; do
	command -v "$c" >/dev/null || skip "$c not found: install slurm-wlm and munge (scripts/setup.sh)"
done
unshare --net --uts --mount sh -c 'ip link add ngs-probe0 type veth peer name ngs-probe1 && hostname probe &&
	mount -t sysfs sysfs /sys' 2>/dev/null ||
	skip "this machine forbids network, UTS or mount namespaces, veth pairs or a sysfs mount in a namespace"
have() { grep -q "^#define $1 1" "$NGAUGE_BUILD/config.h"; }

chmod 755 "$T"
C=$T/slurm
export SLURM_CONF=$C/slurm.conf
cleanup() {
	"$HELPER" stop "$C" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$T" || exit 1
t0=$EPOCHREALTIME
section() { echo "== $* (at $(python3 -c "print(round($EPOCHREALTIME - $t0, 1))") s)"; }

section "the cluster: eight nodes"
start=$EPOCHREALTIME
if ! run 0 "$HELPER" start "$C"; then
	for f in "$C"/ctld/slurmctld.log "$C"/n?/slurmd.log "$C"/munge/munged.log; do
		[ -f "$f" ] && tail -5 "$f" | sed "s|^|  $f: |" >&2
	done
	finish
fi
pass "cluster up in $(python3 -c "print(round($EPOCHREALTIME - $start, 1))") s"
want=$(for i in $(seq $NODES); do printf 'n%d idle 198.18.8.%d\n' "$i" $((10 + i)); done)
sinfo -h -N -o "%N %t %o" | sort -V >"$T/out"
[ "$(cat "$T/out")" = "$want" ] && pass "sinfo: n1 ... n8 idle at 198.18.8.11 ... 198.18.8.18" ||
	fail "sinfo: $(cat "$T/out")"

# veth NODE rx|tx: the byte counter of NODE's veth on the bridge (rx: sent by the node).
veth() { cat "/sys/class/net/ngs8-$1/statistics/$2_bytes"; }
counters() { for i in $(seq $NODES); do echo "$(veth "n$i" rx) $(veth "n$i" tx)"; done; }

section "srun -N 8 -n 64 --overcommit: the placement"
place=$(for i in $(seq 0 $((TASKS - 1))); do echo "$i n$((i / (TASKS / NODES) + 1))"; done)
if run 0 srun -N $NODES -n $TASKS --overcommit sh -c 'echo "$SLURM_PROCID $(hostname) $("$1" --version)"' sh \
	"$NGAUGE"; then
	version=$("$NGAUGE" --version)
	[ "$(sort -n "$T/out")" = "$(sed "s/\$/ $version/" <<<"$place")" ] &&
		pass "64 tasks, eight on each node (tasks 8k ... 8k+7 on n(k+1)), ngauge runs on every one" ||
		fail "placement: $(sort -n "$T/out" | tr '\n' ';')"
fi

have NG_HAVE_PMI2 || fail "built without PMI-2 (libpmi2-0-dev, scripts/setup.sh): no bootstrap under srun without MPI"
# The checks every result of the 64 ranks passes: its manifest names the eight nodes, in order, and puts
# every rank where Slurm placed it.
common="
assert r['complete'] is True and r['module'] == 'tcp' and r['ranks'] == $TASKS, (r['complete'], r['ranks'])
assert r['launch'] == 'pmi2' and r['env']['mpi'] is None and r['env']['host'] == 'n1', (r['launch'], r['env']['host'])
assert r['env']['device'] == 'tcp 198.18.8.11', r['env']['device']
assert r['parameters']['verify'] is True
hosts = [h['host'] for h in r['env']['hosts']]
assert hosts == ['n%d' % i for i in range(1, $NODES + 1)], hosts
where = {}
for p in r['env']['placement']:
    for k in p.get('ranks', [p.get('rank')]): where[k] = p['host']
assert where == {k: 'n%d' % (k // $((TASKS / NODES)) + 1) for k in range($TASKS)}, where
"
# srun64 NAME ARGS...: the 64 ranks of ngauge -x tcp --verify ARGS under srun --mpi=pmi2, the result in NAME.json.
srun64() {
	local name=$1
	shift
	run 0 srun -N $NODES -n $TASKS --overcommit --mpi=pmi2 "$NGAUGE" -x tcp --verify -o "$T/$name.json" "$@"
}

section "srun -N 8 -n 64 --mpi=pmi2 ngauge -x tcp -p pingpong --verify"
srun64 pingpong -p pingpong -s 8,1K -c 10 &&
	pycheck "$T/pingpong.json" "pingpong over 8 nodes, 64 ranks: 32 pairs, every rank once, 2 sizes verified" "
$common
assert r['pattern'] == 'pingpong'
assert [row['size'] for row in r['results']] == [8, 1024], [row['size'] for row in r['results']]
for row in r['results']:
    assert row['count'] == 10 and stats_ok(row['latency_us']), row
    pairs = [(p['client'], p['server']) for p in row['pairs']]
    assert len(pairs) == $TASKS // 2 and sorted(sum(map(list, pairs), [])) == list(range($TASKS)), pairs
    for p in row['pairs']: assert stats_ok(p['latency_us']) and p['latency_us']['n'] == 10, p
"

section "srun -N 8 -n 64 --mpi=pmi2 ngauge -x tcp -p ebb --verify"
before=$(counters)
if srun64 ebb -p ebb --ebb-rounds 2 --ebb-size 4K --ebb-time 0.05; then
	after=$(counters)
	pycheck "$T/ebb.json" "ebb over 8 nodes, 64 ranks: 2 bisections of 32 pairs, every message verified" "
$common
assert r['pattern'] == 'ebb' and len(r['results']) == 1, r['results']
row = r['results'][0]
assert row['size'] == 4096 and row['rounds'] == 2 and row['pairs'] == $TASKS // 2, row
assert row['messages'] > 0 and row['verified'] == row['messages'] and row['bytes'] == row['messages'] * 4096, row
assert row['count'] == 2 * ($TASKS // 2) and stats_ok(row['bandwidth_MBps']), row
assert row['effective_bisection_MBps']['value'] > 0, row['effective_bisection_MBps']
b = r['ebb']
assert b['rounds'] == 2 and b['pairs'] == $TASKS // 2 and len(b['bisections']) == 2, b['bisections']
"
	# Every node streamed to and from the others over its veth (a pair within a node does not cross it).
	low=$(paste <(echo "$before") <(echo "$after") |
		awk '{ if ($3 - $1 < 100000 || $4 - $2 < 100000) printf " n%d (%d B out, %d B in)", NR, $3 - $1, $4 - $2 }')
	[ -z "$low" ] && pass "ebb: every node sent and received at least 100 kB over its veth" ||
		fail "ebb: too little over the veths of$low"
fi

section "srun -N 8 -n 64 --mpi=pmi2 ngauge -x tcp -p alltoall --verify"
srun64 alltoall -p alltoall -s 8,256 -c 3 -w 1 &&
	pycheck "$T/alltoall.json" "alltoall over 8 nodes, 64 ranks: every algorithm at 8 and 256 B verified, 8 nodes of 8" "
$common
assert r['pattern'] == 'alltoall'
a = r['alltoall']
assert a['nodes'] == $NODES and a['ranks_per_node'] == $((TASKS / NODES)) and a['membership'] == 'host', a
algos = [x['name'] if isinstance(x, dict) else x for x in a['algorithms']]
assert {'bruck', 'isend', 'pairwise', 'leader', 'sa', 'rd'} <= set(algos), algos
rows = {(row['algorithm'], row['size']) for row in r['results']}
assert rows == {(x, s) for x in algos for s in (8, 256)}, rows
for row in r['results']:
    assert row['count'] == 3 and row['verified'] >= row['count'] and stats_ok(row['time_us']), row
"

section "stop"
if run 0 "$HELPER" stop "$C"; then
	left=""
	for i in $(seq $NODES); do
		[ -e "/run/netns/ngs8-n$i" ] && left="$left netns ngs8-n$i"
		ip link show "ngs8-n$i" >/dev/null 2>&1 && left="$left veth ngs8-n$i"
	done
	ip link show ngsbr8 >/dev/null 2>&1 && left="$left bridge ngsbr8"
	for p in "$C"/munge/munged.pid "$C"/ctld/slurmctld.pid "$C"/n?/slurmd.pid; do
		pid=$(cat "$p" 2>/dev/null) && [ -n "$pid" ] && [ -d "/proc/$pid" ] && left="$left pid $pid ($p)"
	done
	[ -z "$left" ] && pass "stop: no daemon, namespace, veth or bridge left" || fail "stop left:$left"
fi
section "done"
finish
