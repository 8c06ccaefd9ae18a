#!/bin/bash
# ngauge on a real two-node Slurm cluster on this machine (scripts/slurm-cluster.sh: slurmctld in the root
# network namespace behind the bridge ngsbr0 at 198.18.0.1, slurmd n1 at 198.18.0.11 and n2 at 198.18.0.12,
# each in a network and UTS namespace of its own, joined by veth to the bridge):
# - the helper starts the cluster, a second start is a no-op, a partial cluster is restarted, stop removes it;
# - the ngauge binary runs on both nodes (one file system, one path);
# - `srun -N 2 -n 2 --mpi=pmi2 ngauge -x tcp -p pingpong --verify`, bootstrapped through Slurm's PMI-2 and no
#   MPI (the result's launch "pmi2", no MPI library in its env): rank 0 on n1 (the result's env), rank 1 on n2
#   (Slurm's placement, as each task saw it), the tcp module on n1's address, and the traffic over the veths
#   (their byte counters: at least count x 4 KiB each way through n1's and n2's links);
# - the same through PMIx (srun --mpi=pmix, launch "pmix");
# - plain `srun -N 2 -n 2` (the cluster's MpiDefault=none: no PMI at all): exit 2, one line naming the cause
#   and the fix (srun --mpi=pmi2, or mpiexec inside the allocation), no result;
# - an sbatch job script running a LogGP report over tcp: the job completes on n1 and n2, its JSON is checked;
# - the same ping-pong over the mpi module, with the MPI launched by srun (MPICH: --mpi=pmi2, Open MPI:
#   --mpi=pmix; the build's MPI is $NGAUGE_MPI_IMPL);
# - (MPICH) mpiexec inside an sbatch allocation, one rank per node, over the mpi module and over tcp (MPI as
#   the bootstrap: Hydra's ranks are not taken for the step's tasks);
# - MPI singletons under srun: without --mpi the tasks have no PMI, refused before MPI is initialised; and
#   (MPICH) with --mpi=pmix, a PMI MPICH does not speak, MPI comes up in each task as a singleton (MPI size 1,
#   Slurm says 2), refused: exit 2, the one line naming the cause and the fix, no result.
# Skipped (77) only where the machine forbids network namespaces or veths, the Slurm or munge packages are
# missing (scripts/setup.sh installs them), or this is not root.  A build without PMI-2 fails (setup.sh
# installs libpmi2-0-dev); the PMIx and MPI parts are left out, saying so, in a build without them.  The
# cluster is stopped at the end, also when a check fails or the test is killed (trap).
. "$NGAUGE_SRC/tests/integration/lib.sh"
HELPER=$NGAUGE_SRC/scripts/slurm-cluster.sh

skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, daemons)"
for c in slurmctld slurmd munged srun sbatch sinfo scontrol ip unshare nsenter; do
	command -v "$c" >/dev/null || skip "$c not found: install slurm-wlm and munge (scripts/setup.sh)"
done
# What the helper does for a node, in a throwaway namespace that ends with the probe.
unshare --net --uts --mount sh -c 'ip link add ngs-probe0 type veth peer name ngs-probe1 && hostname probe &&
	mount -t sysfs sysfs /sys' 2>/dev/null ||
	skip "this machine forbids network, UTS or mount namespaces, veth pairs or a sysfs mount in a namespace"
# What this build has (its config.h).
have() { grep -q "^#define $1 1" "$NGAUGE_BUILD/config.h"; }

# The cluster lives in $T/slurm; munged wants its socket's directories searchable by all.
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

# --- the helper -----------------------------------------------------------------------------------------
section "the helper: start, status, start again, restart"
start=$EPOCHREALTIME
if ! run 0 "$HELPER" start "$C"; then
	for f in "$C"/ctld/slurmctld.log "$C"/n?/slurmd.log "$C"/munge/munged.log; do
		[ -f "$f" ] && tail -5 "$f" | sed "s|^|  $f: |" >&2
	done
	finish
fi
pass "cluster up in $(python3 -c "print(round($EPOCHREALTIME - $start, 1))") s"
run 0 "$HELPER" status "$C" && grep -q "n1 idle .* 198.18.0.11" "$T/out" && grep -q "n2 idle .* 198.18.0.12" "$T/out" &&
	pass "status: n1 at 198.18.0.11 and n2 at 198.18.0.12 idle" || fail "status: $(cat "$T/out")"
run 0 "$HELPER" start "$C" && grep -q "already running" "$T/out" && pass "a second start is a no-op" ||
	fail "second start: $(cat "$T/out")"
# A partial cluster (n2's slurmd gone): start brings the whole cluster back.
kill "$(cat "$C/n2/slurmd.pid")"
run 0 "$HELPER" start "$C" && "$HELPER" status "$C" >/dev/null && pass "start after a partial cluster" ||
	fail "restart of a partial cluster: $(cat "$T/out" "$T/err")"

# veth NODE rx|tx: the byte counter of NODE's veth on the bridge (rx: sent by the node).
veth() { cat "/sys/class/net/ngs-$1/statistics/$2_bytes"; }
counters() { echo "$(veth n1 rx) $(veth n1 tx) $(veth n2 rx) $(veth n2 tx)"; }
# crossed WHAT BEFORE AFTER BYTES: at least BYTES went n1 -> n2 and n2 -> n1 over the veths.
crossed() {
	read -r a1 b1 c1 d1 <<<"$2"
	read -r a2 b2 c2 d2 <<<"$3"
	local n1_out=$((a2 - a1)) n2_in=$((d2 - d1)) n2_out=$((c2 - c1)) n1_in=$((b2 - b1))
	if [ "$n1_out" -ge "$4" ] && [ "$n2_in" -ge "$4" ] && [ "$n2_out" -ge "$4" ] && [ "$n1_in" -ge "$4" ]; then
		pass "$1: over the veths (n1->n2 $n1_out/$n2_in B, n2->n1 $n2_out/$n1_in B, >= $4 B each)"
	else
		fail "$1: not over the veths (n1->n2 $n1_out/$n2_in B, n2->n1 $n2_out/$n1_in B, expected >= $4 B)"
	fi
}

# --- the binary on both nodes ----------------------------------------------------------------------------
section "the binary on both nodes"
version=$("$NGAUGE" --version)
if run 0 srun -N 2 -n 2 -l sh -c 'echo "$(hostname) $("$1" --version)"' sh "$NGAUGE"; then
	[ "$(sort "$T/out")" = "$(printf '0: n1 %s\n1: n2 %s' "$version" "$version")" ] &&
		pass "$NGAUGE runs on n1 and n2" || fail "ngauge on the nodes: $(cat "$T/out")"
fi

# --- srun, tcp module --------------------------------------------------------------------------------------
section "srun -N 2 -n 2 --mpi=pmi2, tcp module: the PMI-2 bootstrap, no MPI"
have NG_HAVE_PMI2 || fail "built without PMI-2 (libpmi2-0-dev, scripts/setup.sh): no bootstrap under srun without MPI"
# Each task notes where Slurm placed it, then becomes ngauge.
where='echo "$SLURM_PROCID $(hostname)" >"where.$SLURM_PROCID" && exec "$@"'
count=100
before=$(counters)
if run 0 srun -N 2 -n 2 --mpi=pmi2 sh -c "$where" sh \
	"$NGAUGE" -x tcp -p pingpong --verify -s 1,4K -c $count -o "$T/tcp.json"; then
	after=$(counters)
	[ "$(cat where.0 where.1)" = "$(printf '0 n1\n1 n2')" ] && pass "srun tcp: task 0 on n1, task 1 on n2" ||
		fail "srun tcp: placement $(cat where.0 where.1)"
	pycheck "$T/tcp.json" "srun tcp pingpong through PMI-2 without MPI: rank 0 on n1, tcp on 198.18.0.11, 2 rows verified" "
assert r['complete'] and r['module'] == 'tcp' and r['pattern'] == 'pingpong' and r['ranks'] == 2, r
assert r['launch'] == 'pmi2' and r['env']['mpi'] is None and r['env']['host'] == 'n1', (r['launch'], r['env'])
assert r['env']['device'] == 'tcp 198.18.0.11', r['env']['device']
assert r['parameters']['verify'] is True
assert [row['size'] for row in r['results']] == [1, 4096]
for row in r['results']: assert row['count'] == $count and stats_ok(row['latency_us']), row
"
	# Only what the run measured is counted (not its warm-up): a lower bound.
	crossed "srun tcp" "$before" "$after" $((count * 4096))
fi

section "srun -N 2 -n 2 --mpi=pmix, tcp module: the PMIx bootstrap"
if have NG_HAVE_PMIX; then
	rm -f where.0 where.1
	before=$(counters)
	if run 0 srun -N 2 -n 2 --mpi=pmix sh -c "$where" sh \
		"$NGAUGE" -x tcp -p pingpong --verify -s 1,4K -c $count -o "$T/pmix.json"; then
		after=$(counters)
		[ "$(cat where.0 where.1)" = "$(printf '0 n1\n1 n2')" ] && pass "srun pmix: task 0 on n1, task 1 on n2" ||
			fail "srun pmix: placement $(cat where.0 where.1)"
		pycheck "$T/pmix.json" "srun tcp pingpong through PMIx: rank 0 on n1, tcp on 198.18.0.11, verified" "
assert r['complete'] and r['module'] == 'tcp' and r['ranks'] == 2, r
assert r['launch'] == 'pmix' and r['env']['mpi'] is None and r['env']['host'] == 'n1', (r['launch'], r['env'])
assert r['env']['device'] == 'tcp 198.18.0.11', r['env']['device']
for row in r['results']: assert row['count'] == $count and stats_ok(row['latency_us']), row
"
		crossed "srun pmix" "$before" "$after" $((count * 4096))
	fi
else
	echo "built without PMIx (libpmix-dev): its part left out"
fi

# refused TEST WHAT: the run exited 2 (checked by run), wrote no result, and its stderr holds exactly one
# line of ngauge's (srun's own lines aside), naming the cause (WHAT) and the fix.
refused() {
	local lines
	lines=$(grep "^ngauge" "$T/err")
	if [ ! -e "$T/refused.json" ] && [ "$(printf '%s\n' "$lines" | wc -l)" = 1 ] && grep -qF -- "$2" <<<"$lines" &&
		grep -q "srun --mpi=pmi2" <<<"$lines" && grep -q "mpiexec inside the allocation" <<<"$lines"; then
		pass "$1: exit 2, no result, one line: $lines"
	else
		fail "$1: $(cat "$T/err")"
	fi
}
section "srun -N 2 -n 2 without --mpi (MpiDefault=none), tcp module: no PMI, refused"
run 2 srun -N 2 -n 2 "$NGAUGE" -x tcp -p pingpong -s 1 -c 10 -o "$T/refused.json" &&
	refused "srun without a PMI" "no process-management interface"

# --- sbatch: a LogGP report, the JSON collected after the job --------------------------------------------
section "sbatch, a LogGP report"
cat >"$T/loggp.job" <<EOF
#!/bin/bash
#SBATCH --job-name=ngauge-loggp
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --output=$T/loggp-%j.out
srun --mpi=pmi2 "$NGAUGE" -x tcp -p loggp -s 1-64K:x4 -c 10 -o "$T/loggp.json"
EOF
# job_ended JOB: its state is a final one (sbatch --wait polls at growing intervals, up to seconds late).
job_ended() {
	scontrol show job "$1" >"$T/job" 2>&1 &&
		grep -Eq "JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)" "$T/job"
}
if run 0 sbatch --parsable "$T/loggp.job"; then
	job=$(cut -d';' -f1 "$T/out")
	for _ in $(seq 600); do job_ended "$job" && break; sleep 0.1; done
	grep -q "JobState=COMPLETED" "$T/job" && grep -q "ExitCode=0:0" "$T/job" && grep -q " NodeList=n\[1-2\]" "$T/job" &&
		grep -q "BatchHost=n1" "$T/job" && pass "sbatch job $job completed on n1 and n2" ||
		fail "sbatch job $job: $(grep -E 'JobState|NodeList|BatchHost' "$T/job")"
	grep -q "^# LogGP parameters" "$T/loggp-$job.out" && grep -q "^# LogGOPSim: -L" "$T/loggp-$job.out" &&
		pass "sbatch: the LogGP table in the job's output" || fail "sbatch output: $(cat "$T/loggp-$job.out")"
	pycheck "$T/loggp.json" "sbatch: the LogGP JSON from n1 and n2, a block of parameters with CIs" '
import math
assert r["pattern"] == "loggp" and r["module"] == "tcp" and r["complete"] is True and r["ranks"] == 2
assert r["launch"] == "pmi2" and r["env"]["host"] == "n1" and r["env"]["device"] == "tcp 198.18.0.11", r["env"]
sizes = [row["size"] for row in r["results"]]
assert sizes == [4 ** i for i in range(9)], sizes
for row in r["results"]:
    for k in ("prtt1_us", "prttn_us", "prttnd_us"): assert stats_ok(row[k]), (k, row)
b = r["loggp"]
assert [e["size"] for e in b["sizes"]] == sizes and len(b["segments"]) >= 1
for s in b["segments"]:
    for k in ("L_us", "o_s_us", "o_r_us", "g_us", "G_us_per_byte"):
        p = s[k]
        assert p["flag"] if p["value"] is None else math.isfinite(p["value"]) and p["value"] >= 0, (k, p)
assert b["loggopsim"].startswith("-L "), b["loggopsim"]
'
else
	tail -5 "$T"/loggp-*.out 2>/dev/null >&2
fi

# --- srun, mpi module --------------------------------------------------------------------------------------
mpi_pmi=--mpi=pmi2
[ "${NGAUGE_MPI_IMPL:-mpich}" = ompi ] && mpi_pmi=--mpi=pmix   # Debian's Open MPI speaks PMIx, not Slurm's PMI-2
section "srun -N 2 -n 2 $mpi_pmi, mpi module (${NGAUGE_MPI_IMPL:-mpich})"
if ! have NG_HAVE_MPI; then
	echo "built without MPI: the mpi module and the singleton refusal left out"
	section "stop"
	run 0 "$HELPER" stop "$C" && pass "stop"
	finish
fi
# The two nodes share one kernel: UCX (Debian's MPICH is ch4:ucx) sees the same boot id on both and would
# pass messages through shared memory and CMA, not the network.  UCX_TLS=self,tcp makes it use the veths,
# as between two machines; Open MPI's ob1 likewise, with its TCP transport alone (btl self,tcp).
before=$(counters)
rm -f where.0 where.1
if run 0 env UCX_TLS=self,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp srun -N 2 -n 2 $mpi_pmi sh -c "$where" sh \
	"$NGAUGE" -x mpi -p pingpong --verify -s 1,4K -c $count -o "$T/mpi.json"; then
	after=$(counters)
	[ "$(cat where.0 where.1)" = "$(printf '0 n1\n1 n2')" ] && pass "srun mpi: task 0 on n1, task 1 on n2" ||
		fail "srun mpi: placement $(cat where.0 where.1)"
	pycheck "$T/mpi.json" "srun mpi pingpong: MPI launched by srun, rank 0 on n1, 2 rows verified" "
assert r['complete'] and r['module'] == 'mpi' and r['ranks'] == 2 and r['launch'] == 'mpi', r
assert r['env']['host'] == 'n1' and r['env']['mpi'], r['env']
assert r['parameters']['verify'] is True
assert [row['size'] for row in r['results']] == [1, 4096]
for row in r['results']: assert row['count'] == $count and stats_ok(row['latency_us']), row
"
	crossed "srun mpi" "$before" "$after" $((count * 4096))
fi

# --- a singleton MPI under srun ------------------------------------------------------------------------------
if [ "${NGAUGE_MPI_IMPL:-mpich}" = mpich ]; then
	section "sbatch, mpiexec inside the allocation (MPICH's Hydra)"
	# Hydra starts its proxies with srun; they reach back to mpiexec on n1 at eth0's address (-iface: n1 is no
	# name any resolver knows here).
	cat >"$T/hydra.job" <<EOF
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --output=$T/hydra-%j.out
export UCX_TLS=self,tcp
for x in mpi tcp; do
	rm -f where.0 where.1
	mpiexec -iface eth0 -n 2 -ppn 1 sh -c 'echo "\$PMI_RANK \$(hostname)" >"where.\$PMI_RANK" && exec "\$@"' sh \
		"$NGAUGE" -x \$x -p pingpong --verify -s 1,4K -c $count -o "$T/hydra-\$x.json" >"$T/hydra-\$x.log" 2>&1
	echo \$? >"$T/hydra-\$x.rc"
	cat where.0 where.1 >"$T/hydra-\$x.where"
done
EOF
	if run 0 sbatch --parsable --chdir="$T" "$T/hydra.job"; then
		job=$(cut -d';' -f1 "$T/out")
		# Up to 2 minutes: each MPI_Finalize may take its --timeout of 8 s (doc/cluster.md).
		for _ in $(seq 1200); do job_ended "$job" && break; sleep 0.1; done
		grep -q "JobState=COMPLETED" "$T/job" && grep -q "ExitCode=0:0" "$T/job" &&
			pass "sbatch job $job (mpiexec inside the allocation) completed" ||
			fail "sbatch job $job: $(grep -E 'JobState|ExitCode' "$T/job"); $(tail -5 "$T"/hydra-*.log)"
		for x in mpi tcp; do
			# MPICH 4.0 over UCX 1.13's tcp transport can hang in MPI_Finalize after the results are
			# written (doc/cluster.md); ngauge ends it after --timeout, saying so, and Hydra may then
			# report an error for the rank that left its PMI barrier.  That is the library's, not a
			# failed run: the result below is checked in full either way.
			rc=$(cat "$T/hydra-$x.rc" 2>/dev/null)
			if [ "$rc" = 0 ]; then
				pass "mpiexec in the allocation, $x: exit 0"
			elif grep -q "MPI_Finalize did not return within --timeout" "$T/hydra-$x.log"; then
				pass "mpiexec in the allocation, $x: MPI_Finalize hung in the MPI library, ended after --timeout (exit $rc)"
			else
				fail "mpiexec in the allocation, $x: exit ${rc:-none}: $(tail -5 "$T/hydra-$x.log")"
			fi
			[ "$(cat "$T/hydra-$x.where" 2>/dev/null)" = "$(printf '0 n1\n1 n2')" ] &&
				pass "mpiexec in the allocation, $x: rank 0 on n1, rank 1 on n2" ||
				fail "mpiexec in the allocation, $x: placement $(cat "$T/hydra-$x.where" 2>/dev/null)"
			pycheck "$T/hydra-$x.json" "mpiexec in the allocation, $x: the MPI launch, rank 0 on n1, verified" "
assert r['complete'] and r['module'] == '$x' and r['ranks'] == 2 and r['launch'] == 'mpi', r
assert r['env']['host'] == 'n1' and r['env']['mpi'].startswith('MPICH'), r['env']
for row in r['results']: assert row['count'] == $count and stats_ok(row['latency_us']), row
"
		done
	fi
fi

section "srun without --mpi: no PMI for MPI, refused"
# Without --mpi (MpiDefault=none) MPI would come up in every task alone (MPICH) or abort (Open MPI).
run 2 srun -N 2 -n 2 "$NGAUGE" -x mpi -p pingpong -s 1 -c 10 -o "$T/refused.json" &&
	refused "srun without --mpi (no PMI for MPI)" "so MPI would come up in each as a singleton"
if [ "${NGAUGE_MPI_IMPL:-mpich}" = mpich ]; then
	section "srun --mpi=pmix with MPICH: MPI singletons, refused"
	# PMIx, which Debian's MPICH does not speak: each task's MPI comes up alone (MPI size 1, Slurm says 2).
	run 2 srun -N 2 -n 2 --mpi=pmix "$NGAUGE" -x mpi -p pingpong -s 1 -c 10 -o "$T/refused.json" &&
		refused "srun --mpi=pmix with MPICH (MPI singletons)" "MPI came up in each as a singleton (MPI size 1)"
fi

# --- teardown ------------------------------------------------------------------------------------------------
section "stop"
if run 0 "$HELPER" stop "$C"; then
	left=""
	for n in n1 n2; do
		[ -e "/run/netns/ngs-$n" ] && left="$left netns ngs-$n"
		ip link show "ngs-$n" >/dev/null 2>&1 && left="$left veth ngs-$n"
	done
	ip link show ngsbr0 >/dev/null 2>&1 && left="$left bridge ngsbr0"
	for p in "$C"/munge/munged.pid "$C"/ctld/slurmctld.pid "$C"/n?/slurmd.pid; do
		pid=$(cat "$p" 2>/dev/null) && [ -n "$pid" ] && [ -d "/proc/$pid" ] && left="$left pid $pid ($p)"
	done
	[ -z "$left" ] && pass "stop: no daemon, namespace, veth or bridge left" || fail "stop left:$left"
fi
section "done"
finish
