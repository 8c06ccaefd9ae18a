#!/bin/bash
# bench/scale.sh's measurement for ranks that Slurm starts: an eight-node Slurm on this machine
# (scripts/slurm-cluster.sh with NGAUGE_SLURM_NODES=8, as root), and
#
#   srun -N 8 -n 64 --overcommit --mpi=pmi2 ngauge -x tcp -p pingpong -s 8 -c 10
#
# (each rank bootstrapped through PMI-2; tcp asleep, its default).  Prints, as bench/scale.sh does:
#   startup_s  from srun's start to rank 0's first write of the result file
#   total_s    srun's start to its exit
#   fds        the most descriptors any rank held (/proc/PID/fd, sampled every ~20 ms), the most after start-up
#   rss        peak RSS per rank (VmHWM): the median and the largest over the ranks
# The ranks are found as the processes named ngauge in the nodes' network namespaces (ip netns pids).  Skipped
# (77) without root or the Slurm and munge packages.  The cluster is stopped at the end.
#
# Usage: NGAUGE=build/ngauge bench/scale_slurm.sh [NODES [TASKS]]   (default 8 nodes, 64 tasks)
. "$(dirname "$0")/lib.sh" scale-slurm

NODES=${1:-8}
TASKS=${2:-64}
HELPER=$(dirname "$0")/../scripts/slurm-cluster.sh
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, daemons): skipped"; exit 77; }
for c in slurmctld slurmd munged srun ip; do
	command -v "$c" >/dev/null || { echo "$c not found (scripts/setup.sh): skipped"; exit 77; }
done
export NGAUGE_SLURM_NODES=$NODES
chmod 755 "$T"
C=$T/slurm
export SLURM_CONF=$C/slurm.conf
trap '"$HELPER" stop "$C" >/dev/null 2>&1; rm -rf "$T"' EXIT
"$HELPER" start "$C" >"$T/start.log" 2>&1 || { cat "$T/start.log"; exit 1; }
ns_prefix=ngs$NODES
[ "$NODES" = 2 ] && ns_prefix=ngs

python3 - "$NGAUGE" "$NODES" "$TASKS" "$T/r.json" "$ns_prefix" <<'EOF'
import os, subprocess, sys, time
exe, nodes, tasks, res, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def ranks():
    """The pids of the processes named ngauge in the nodes' namespaces."""
    out = []
    for i in range(1, nodes + 1):
        try:
            pids = subprocess.run(["ip", "netns", "pids", "%s-n%d" % (prefix, i)], capture_output=True,
                                  text=True).stdout.split()
        except OSError:
            continue
        for p in pids:
            try:
                with open("/proc/%s/comm" % p) as f:
                    if f.read().strip() == "ngauge":
                        out.append(int(p))
            except OSError:
                pass
    return out
t0 = time.time()
p = subprocess.Popen(["srun", "-N", str(nodes), "-n", str(tasks), "--overcommit", "--mpi=pmi2", exe, "-x", "tcp",
                      "-p", "pingpong", "-s", "8", "-c", "10", "-o", res],
                     stdout=subprocess.DEVNULL, stderr=open(res + ".err", "w"))
fds, steady, hwm, startup = {}, {}, {}, None
while p.poll() is None:
    if startup is None and os.path.exists(res):
        startup = time.time() - t0
    for k in ranks():
        try:
            n = len(os.listdir("/proc/%d/fd" % k))
            with open("/proc/%d/status" % k) as f:
                h = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")][0]
        except (OSError, IndexError):
            continue
        fds[k] = max(fds.get(k, 0), n)
        if startup is not None:
            steady[k] = max(steady.get(k, 0), n)
        hwm[k] = max(hwm.get(k, 0), h)
    time.sleep(0.02)
total = time.time() - t0
h = sorted(hwm.values()) or [0]
print("%6s %6s %10s %9s %9s %12s %12s %12s %7s" % ("nodes", "ranks", "startup_s", "total_s", "rank_fds",
      "rank_fds_run", "rss_med_KiB", "rss_max_KiB", "seen"))
print("%6d %6d %10s %9.2f %9d %12d %12d %12d %7d" % (nodes, tasks, "%.2f" % startup if startup is not None else "nan",
      total, max(fds.values() or [0]), max(steady.values() or [0]), h[len(h) // 2], h[-1], len(hwm)))
if p.returncode != 0:
    print("# srun exited %d: %s" % (p.returncode, open(res + ".err").read().strip().splitlines()[-1:]))
sys.exit(1 if p.returncode else 0)
EOF
