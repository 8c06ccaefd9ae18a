#!/bin/bash
# A real Slurm cluster of two (or NGAUGE_SLURM_NODES) nodes on this one machine, to run ngauge under srun and
# sbatch.
#
#   scripts/slurm-cluster.sh start  [DIR]   start it (again: a no-op while it runs; a partial one is restarted)
#   scripts/slurm-cluster.sh status [DIR]   its daemons, its network, sinfo; exit 0 when all is up, 3 when not
#   scripts/slurm-cluster.sh stop   [DIR]   stop the daemons and remove the network (also after a partial start)
#
# NGAUGE_SLURM_NODES=N (1 to 64, default 2) gives a cluster of N nodes, n1 ... nN, with names, addresses and
# ports of its own, so that it and the two-node cluster can run at once (tests/cluster/slurm8.sh):
#
#   nodes  bridge     controller      node nI                       namespace   ports (slurmctld, slurmd)
#   2      ngsbr0     198.18.0.1/24   198.18.0.(10+I)               ngs-nI      6917, 6918
#   N      ngsbrN     198.18.N.1/24   198.18.N.(10+I)               ngsN-nI     7000+10N+7, 7000+10N+8
#
# The pointer to the running cluster's DIR (below) is /run/ngauge-slurm.dir for two nodes and
# /run/ngauge-slurmN.dir for N.  Every node declares the machine's CPUs (nproc): more tasks than that on a
# node need `srun --overcommit`.
#
# Then, in the same shell:  export SLURM_CONF=DIR/slurm.conf;  srun -N 2 -n 2 --mpi=pmi2 build/ngauge ...
# As root, on Debian 12 with slurm-wlm and munge installed (scripts/setup.sh installs them).  DIR defaults to
# /tmp/ngauge-slurm and holds everything: slurm.conf, munge's key and socket, the controller's state, the
# nodes' spool directories, every pid file and log.  stop leaves DIR in place, for its logs.
#
# The cluster:
#
#   root network namespace: controller "ctl"       node n1: network namespace ngs-n1, UTS hostname n1
#     munged, slurmctld, srun, sbatch, sinfo         eth0 198.18.0.11/24, slurmd -N n1 and its job steps
#     bridge ngsbr0 198.18.0.1/24                    node n2: network namespace ngs-n2, UTS hostname n2
#       port ngs-n1 <-- veth --> n1's eth0              eth0 198.18.0.12/24, slurmd -N n2 and its job steps
#       port ngs-n2 <-- veth --> n2's eth0
#
# Traffic between n1 and n2 crosses the two veths and the bridge, and nothing else: no loopback shortcut.
# The addresses are from the benchmarking range 198.18.0.0/15 (RFC 2544), never a private range, so they
# cannot collide with a site's own networks.  The namespaces share the file system: a build directory has the
# same path on every node.
#
# Decisions, for a test cluster:
# - A node's daemon runs in its network namespace (nsenter --net), its own UTS namespace (host name n1, n2) and
#   a private mount namespace, where /sys is mounted afresh (so /sys/class/net shows the node's own eth0 and lo,
#   as `ip netns exec` would) with the machine's /sys/fs/cgroup moved back into it: slurmd 22.05 initialises
#   its cgroup plugin even when no other plugin uses cgroups, and fails without it.
# - Job control without cgroups: ProctrackType=proctrack/linuxproc (a step's processes found through /proc),
#   TaskPlugin=task/none, JobAcctGatherType=jobacct_gather/none.  Both nodes see the one cgroup tree of this
#   machine: proctrack/cgroup would put the tasks of a job's step on n1 and on n2 in the same cgroup
#   (.../job_J/step_S), and each node's cleanup would signal the other's tasks.  A test needs neither limits nor
#   accounting.
# - No name service: slurm.conf gives each node's NodeAddr and NodeHostname and the controller's address
#   (SlurmctldHost=ctl(198.18.0.1)); /etc/hosts is not touched.
# - munged runs as root on a socket and key of its own (AuthInfo=socket=...): a system munge is left alone.
# - Ports 6917 (slurmctld) and 6918 (slurmd), not Slurm's 6817/6818, so a real Slurm here is not disturbed.
# - MpiDefault=none, as on many sites: MPI programs need `srun --mpi=pmi2`.
# - One such cluster per machine (the names and addresses are fixed): /run/ngauge-slurm.dir names the DIR of
#   the running one, and start with another DIR stops that one first.
# - Daemons are stopped by the pids they wrote, checked against their command names, and job steps by the
#   pids inside the two namespaces (`ip netns pids`): nothing else on the machine is signalled.
set -u

COUNT=${NGAUGE_SLURM_NODES:-2}
case $COUNT in
[1-9] | [1-5][0-9] | 6[0-4]) ;;
*) echo "slurm-cluster: NGAUGE_SLURM_NODES=$COUNT: 1 to 64 nodes" >&2; exit 2 ;;
esac
if [ "$COUNT" = 2 ]; then
	BRIDGE=ngsbr0 SUBNET=0 NS_PREFIX=ngs CTLD_PORT=6917 POINTER=/run/ngauge-slurm.dir
else
	BRIDGE=ngsbr$COUNT SUBNET=$COUNT NS_PREFIX=ngs$COUNT CTLD_PORT=$((7000 + 10 * COUNT + 7))
	POINTER=/run/ngauge-slurm$COUNT.dir
fi
SLURMD_PORT=$((CTLD_PORT + 1))
CTL_ADDR=198.18.$SUBNET.1
PREFIX=24
NODES=$(seq -f "n%g" -s " " "$COUNT")

node_addr() { echo "198.18.$SUBNET.$((10 + ${1#n}))"; }   # n1 -> 198.18.0.11 (two nodes)
node_ns() { echo "$NS_PREFIX-$1"; }                       # network namespace, and the veth's name on the bridge

say() { echo "slurm-cluster: $*"; }
die() { echo "slurm-cluster: $*" >&2; exit 1; }

# pid_of FILE NAME: the pid in FILE when that process runs and its command is NAME; empty otherwise.
pid_of() {
	local pid
	[ -s "$1" ] || return 0
	pid=$(tr -dc 0-9 <"$1")
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
	return 0
}

# stop_pids PID...: SIGTERM, up to 10 s to end, then SIGKILL.
stop_pids() {
	local pid left
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for _ in $(seq 100); do
		left=""
		for pid in "$@"; do kill -0 "$pid" 2>/dev/null && left="$left $pid"; done
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	say "still running after 10 s, killing:$left"
	# shellcheck disable=SC2086
	kill -KILL $left 2>/dev/null
	return 0
}

# The daemons' pids, one "name pid" per line, only those alive.
daemons() {
	local p n
	p=$(pid_of "$DIR/munge/munged.pid" munged); [ -n "$p" ] && echo "munged $p"
	p=$(pid_of "$DIR/ctld/slurmctld.pid" slurmctld); [ -n "$p" ] && echo "slurmctld $p"
	for n in $NODES; do
		p=$(pid_of "$DIR/$n/slurmd.pid" slurmd); [ -n "$p" ] && echo "slurmd-$n $p"
	done
	return 0
}

write_conf() {
	local n cpus
	cpus=$(nproc)
	cat >"$DIR/slurm.conf" <<EOF
# Written by scripts/slurm-cluster.sh: a test cluster of $COUNT nodes, everything under $DIR.
ClusterName=ngauge
SlurmctldHost=ctl($CTL_ADDR)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/ctld/state
SlurmctldPidFile=$DIR/ctld/slurmctld.pid
SlurmctldLogFile=$DIR/ctld/slurmctld.log
SlurmdSpoolDir=$DIR/%n/spool
SlurmdPidFile=$DIR/%n/slurmd.pid
SlurmdLogFile=$DIR/%n/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (see the script's header).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
# A node that registers is up; finished jobs stay visible to scontrol for 5 minutes.
ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
EOF
	# PMIx (srun --mpi=pmix): the plugin's per-step directories, under a base every node sees as its own
	# (node_start mounts the node's DIR/NODE/pmix there): on one file system, n1 and n2 would both create
	# the same spmix_appdir_UID_JOB.STEP and the second would fail.
	echo "PMIxCliTmpDirBase=$DIR/pmix" >"$DIR/mpi.conf"
	for n in $NODES; do
		echo "NodeName=$n NodeHostname=$n NodeAddr=$(node_addr "$n") CPUs=$cpus State=UNKNOWN" >>"$DIR/slurm.conf"
	done
	echo "PartitionName=test Nodes=$(echo "$NODES" | tr ' ' ,) Default=YES MaxTime=INFINITE State=UP" \
		>>"$DIR/slurm.conf"
}

net_up() {
	local n ns
	ip link add "$BRIDGE" type bridge || return 1
	ip addr add "$CTL_ADDR/$PREFIX" dev "$BRIDGE" || return 1
	ip link set "$BRIDGE" up || return 1
	for n in $NODES; do
		ns=$(node_ns "$n")
		ip netns add "$ns" || return 1
		ip link add "$ns" type veth peer name eth0 netns "$ns" || return 1
		ip link set "$ns" master "$BRIDGE" up || return 1
		ip -n "$ns" addr add "$(node_addr "$n")/$PREFIX" dev eth0 || return 1
		ip -n "$ns" link set lo up || return 1
		ip -n "$ns" link set eth0 up || return 1
	done
}

net_down() {
	local n ns
	for n in $NODES; do
		ns=$(node_ns "$n")
		# The veth pair first (at once; a namespace's end, which would take its eth0 along, comes later).
		ip link show "$ns" >/dev/null 2>&1 && ip link del "$ns"
		[ -e "/run/netns/$ns" ] && ip netns del "$ns"
	done
	ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
	return 0
}

# wait_for SECONDS WHAT CMD...: polls CMD every 0.2 s until it succeeds.
wait_for() {
	local limit=$1 what=$2
	shift 2
	for _ in $(seq $((limit * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	say "$what: not after $limit s"
	return 1
}

# node_start NODE: slurmd -N NODE in the node's namespaces (see the header).
node_start() {
	local n=$1
	mkdir -p "$DIR/$n/cgroup" "$DIR/$n/pmix" "$DIR/pmix"
	nsenter --net="/run/netns/$(node_ns "$n")" unshare --uts --mount --propagation private sh -c '
		hostname "$1" &&
		mount --rbind /sys/fs/cgroup "$3" &&  # the cgroup mounts, kept at hand
		mount -t sysfs sysfs /sys &&          # this network namespace'"'"'s view of the devices
		mount --move "$3" /sys/fs/cgroup &&   # the cgroup mounts back at their place
		mount --bind "$4" "$5" &&             # PMIx'"'"'s directories, the node'"'"'s own (write_conf)
		exec slurmd -f "$2" -N "$1"' sh "$n" "$DIR/slurm.conf" "$DIR/$n/cgroup" "$DIR/$n/pmix" "$DIR/pmix"
}

ctld_up() { scontrol ping | grep -q "is UP"; }
# nodes_in STATES: every node, and no other, is in one of STATES (sinfo -t).
nodes_in() { [ "$(sinfo -h -N -t "$1" -o %N | sort -u | tr '\n' ' ')" = "$NODES " ]; }
nodes_idle() { nodes_in idle; }
nodes_up() { nodes_in idle,mix,alloc,completing; }   # running jobs or not

start() {
	local n ns old
	[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, daemons)"
	for c in munged slurmctld slurmd scontrol sinfo ip unshare nsenter; do
		command -v "$c" >/dev/null || die "$c not found: install slurm-wlm and munge (scripts/setup.sh)"
	done
	if [ -s "$POINTER" ] && old=$(cat "$POINTER") && [ "$old" != "$DIR" ]; then
		say "a cluster of $old is running: stopping it first"
		(DIR=$old; stop)
	fi
	if [ "$(daemons | wc -l)" = $((COUNT + 2)) ] && nodes_up; then
		say "already running ($DIR)"
		return 0
	fi
	# A partial cluster (or what a crash left): start afresh.
	stop >/dev/null
	mkdir -p "$DIR/munge" "$DIR/ctld/state" || die "cannot create $DIR"
	chmod 755 "$DIR" "$DIR/munge"   # munged wants its socket's directory searchable by all
	for n in $NODES; do mkdir -p "$DIR/$n/spool"; done
	echo "$DIR" >"$POINTER"
	write_conf

	net_up || { stop; die "cannot set up the network (are network namespaces permitted here?)"; }

	if [ ! -s "$DIR/munge/munge.key" ]; then
		(umask 077; head -c 1024 /dev/urandom >"$DIR/munge/munge.key")
	fi
	munged --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
		--pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
		--seed-file="$DIR/munge/munged.seed" ||
		{ stop; die "munged did not start: $(tail -2 "$DIR/munge/munged.log")"; }

	# -c: a clean state, no jobs of an earlier cluster.  The controller's own UTS namespace makes its host
	# name "ctl", the name in SlurmctldHost.
	unshare --uts sh -c 'hostname ctl && exec slurmctld -c -f "$1"' sh "$DIR/slurm.conf" ||
		{ stop; die "slurmctld did not start: $(tail -3 "$DIR/ctld/slurmctld.log")"; }
	wait_for 30 "slurmctld answering" ctld_up ||
		{ stop; die "see $DIR/ctld/slurmctld.log: $(tail -3 "$DIR/ctld/slurmctld.log")"; }

	for n in $NODES; do
		node_start "$n" || { stop; die "slurmd $n did not start: $(tail -3 "$DIR/$n/slurmd.log")"; }
	done
	wait_for 60 "nodes $NODES idle" nodes_idle ||
		{ sinfo -N; stop; die "see $DIR/*/slurmd.log and $DIR/ctld/slurmctld.log"; }
	say "up: controller ctl $CTL_ADDR, nodes$(for n in $NODES; do printf ' %s %s' "$n" "$(node_addr "$n")"; done)"
	say "export SLURM_CONF=$DIR/slurm.conf"
}

stop() {
	local n ns pids=""
	if [ -s "$POINTER" ] && [ "$(cat "$POINTER")" != "$DIR" ]; then
		say "the network belongs to the cluster of $(cat "$POINTER"): stopping only the daemons of $DIR"
		# shellcheck disable=SC2046
		stop_pids $(daemons | awk '$1 != "munged" { print $2 }')
		# shellcheck disable=SC2046
		stop_pids $(daemons | awk '{ print $2 }')
		return 0
	fi
	# The nodes (slurmd, slurmstepd and the tasks: every process in their namespaces) and the controller
	# together, each takes a second or two to end; then munged, which they may still ask while ending.
	for n in $NODES; do
		ns=$(node_ns "$n")
		[ -e "/run/netns/$ns" ] && pids="$pids $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
	done
	# shellcheck disable=SC2046,SC2086
	stop_pids $pids $(daemons | awk '$1 != "munged" { print $2 }')
	# shellcheck disable=SC2046
	stop_pids $(daemons | awk '{ print $2 }')
	net_down
	rm -f "$POINTER"
	say "stopped ($DIR)"
}

status() {
	local n ns up=0 out
	echo "daemons ($DIR):"
	out=$(daemons)
	for d in munged slurmctld $(printf 'slurmd-%s ' $NODES); do
		if grep -q "^$d " <<<"$out"; then
			echo "  $d running, pid $(grep "^$d " <<<"$out" | cut -d' ' -f2)"
			up=$((up + 1))
		else
			echo "  $d not running"
		fi
	done
	echo "network:"
	if ip link show "$BRIDGE" >/dev/null 2>&1; then
		echo "  controller: $(ip -br addr show dev "$BRIDGE")"
	else
		echo "  controller: no bridge $BRIDGE"
	fi
	for n in $NODES; do
		ns=$(node_ns "$n")
		if [ -e "/run/netns/$ns" ]; then
			echo "  $n (namespace $ns): $(ip -n "$ns" -br addr show dev eth0 2>/dev/null)"
		else
			echo "  $n: no namespace $ns"
		fi
	done
	[ "$up" = $((COUNT + 2)) ] || return 3
	echo "sinfo (SLURM_CONF=$DIR/slurm.conf):"
	sinfo -N -o "%N %t %c %P %o" | sed 's/^/  /'
	nodes_up || return 3
}

cmd=${1:-}
DIR=${2:-/tmp/ngauge-slurm}
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
export SLURM_CONF=$DIR/slurm.conf
case $cmd in
start) start ;;
stop) stop ;;
status) status ;;
*) echo "usage: $0 start|stop|status [DIR]" >&2; exit 2 ;;
esac
