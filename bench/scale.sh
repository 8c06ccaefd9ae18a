#!/bin/bash
# Start-up and end-to-end time, descriptors and peak RSS per rank of local tcp ranks in sleep mode, from 16
# ranks up to the most this machine holds (at most NGAUGE_SCALE_MAX, default 2048): the measurement of
# doc/scale.md.  Each run is the issue's `ngauge --np N -x tcp -p pingpong -s 8 -c 10` under the soft limit of
# 1,024 descriptors most clusters set (ulimit -Sn 1024), niced, one at a time.
#
# Per run:
#   startup_s  from the launch to rank 0's first write of the result file (every rank has opened the module
#              and taken part in the clock fit; nothing measured yet)
#   total_s    the launch to the launcher's exit
#   fds        the most descriptors any rank held (/proc/PID/fd, sampled every ~20 ms over the run), the most
#              after start-up, and the launcher's (the hub: one per rank)
#   rss        peak RSS per rank (VmHWM): the median and the largest over the ranks
# Then the growth of start-up from 64 ranks on: the exponent of a power law fitted in log-log, and the check
# that t(max)/t(64) stays within (p log p)(max)/(p log p)(64).
#
# Usage: NGAUGE=build/ngauge bench/scale.sh [NP...]   (or meson test -C build --benchmark scale)
. "$(dirname "$0")/lib.sh" scale

MAX=${NGAUGE_SCALE_MAX:-2048}
LIST=("$@")
[ ${#LIST[@]} -gt 0 ] || LIST=(16 32 64 128 256 512 1024 2048)
OUT=$T/scale.txt
FAILED=0

# What one rank needs at most (MiB) beyond what the machine keeps free: a run of N ranks only when
# N x 8 MiB fit in MemAvailable (a rank's peak RSS is 3-7 MiB, much of it shared with the launcher it was
# forked from).
mem_ok() {
	local avail
	avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
	[ $(($1 * 8)) -lt "$avail" ]
}

# One run of N ranks, started and watched from python (no race with a short run): the launch under
# `ulimit -Sn 1024` and nice, start-up (the result file's first write), the end; every ~20 ms until then
# the ranks' (the launcher's children's) descriptors and VmHWM, and the launcher's descriptors.  Prints
# "startup total rank_fds rank_fds_steady hub_fds rss_med rss_max ranks_seen rc".  rank_fds is the most any
# rank held at any time, rank_fds_steady the most after start-up: a rank forked late holds the launcher's
# ends of the ranks before it until it first runs and closes them.
run_one() {
	python3 - "$NGAUGE" "$1" "$2" <<'EOF'
import os, resource, subprocess, sys, time
exe, np, res = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    os.nice(10)
t0 = time.time()
p = subprocess.Popen([exe, "--np", str(np), "-x", "tcp", "-p", "pingpong", "-s", "8", "-c", "10", "-o", res],
                     stdout=subprocess.DEVNULL, stderr=open(res + ".err", "w"), preexec_fn=limit)
fds, steady, hwm, hub, startup = {}, {}, {}, 0, None
def kids(q):
    try:
        with open("/proc/%d/task/%d/children" % (q, q)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []
while p.poll() is None:
    if startup is None and os.path.exists(res):
        startup = time.time() - t0
    try:
        hub = max(hub, len(os.listdir("/proc/%d/fd" % p.pid)))
    except OSError:
        pass
    for k in kids(p.pid):
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
print("%s %.2f %d %d %d %d %d %d %d" % ("%.2f" % startup if startup is not None else "nan", total,
      max(fds.values() or [0]), max(steady.values() or [0]), hub, h[len(h) // 2], h[-1], len(hwm), p.returncode))
EOF
}

printf "%6s %10s %9s %9s %12s %8s %12s %12s %7s\n" ranks startup_s total_s rank_fds rank_fds_run hub_fds rss_med_KiB \
	rss_max_KiB seen
for np in "${LIST[@]}"; do
	[ "$np" -le "$MAX" ] || break
	if ! mem_ok "$np"; then
		echo "# $np ranks: not enough memory available for them; stopping"
		break
	fi
	res=$T/r$np.json
	rm -f "$res"
	read -r startup total rfds rsteady hfds rmed rmax seen rc <<<"$(run_one "$np" "$res")"
	if [ "$rc" != 0 ]; then
		echo "# $np ranks: exit $rc after $total s: $(tail -1 "$res.err")"
		FAILED=1
		break
	fi
	printf "%6d %10s %9s %9s %12s %8s %12s %12s %7s\n" "$np" "$startup" "$total" "$rfds" "$rsteady" "$hfds" "$rmed" \
		"$rmax" "$seen" | tee -a "$OUT"
done

[ -s "$OUT" ] || exit 1
python3 - "$OUT" "$FAILED" <<'EOF'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
bad = sys.argv[2] != "0"
pts = [(int(r[0]), float(r[1]), float(r[2]), int(r[6]), int(r[7])) for r in rows if r[1] != "nan"]
def fit(lo, hi):
    """The exponent b of t ~ p^b fitted in log-log over the runs from @lo to @hi ranks, the ratio of the
    start-up times at the ends and that of p log p; None with fewer than two runs."""
    f = [(p, t) for p, t, _, _, _ in pts if lo <= p <= hi]
    if len(f) < 2:
        return None
    xs, ys = [math.log(p) for p, _ in f], [math.log(t) for _, t in f]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    (p0, t0), (p1, t1) = f[0], f[-1]
    return b, p0, p1, t0, t1, t1 / t0, (p1 * math.log(p1)) / (p0 * math.log(p0))
# The issue's check: from 64 to 1,024 ranks, start-up no faster than p log p; beyond, printed.
for lo, hi, judged in ((64, 1024, True), (64, 1 << 30, False)):
    r = fit(lo, hi)
    if not r or (not judged and r[2] <= 1024):
        continue
    b, p0, p1, t0, t1, ratio, plogp = r
    ok = ratio <= plogp
    print("# start-up from %d to %d ranks: t ~ p^%.2f (log-log fit); t(%d)/t(%d) = %.1f, (p log p) ratio %.1f: %s%s"
          % (p0, p1, b, p1, p0, ratio, plogp, "no faster than p log p" if ok else "FASTER than p log p",
             "" if judged else " (not judged)"))
    if judged:
        bad |= not ok
    else:
        print("# at %d ranks: %.2f ms of start-up per rank; extrapolated to 10,000 ranks: %.0f s (p^%.2f)"
              % (p1, 1e3 * t1 / p1, t1 * (10000 / p1) ** b, b))
small = [r for r in pts if r[0] == 16]
for big in [r for r in pts if r[0] == 1024] + pts[-1:]:
    if small and big[0] > 16:
        print("# peak RSS per rank, median: %d KiB at 16 ranks, %d KiB at %d ranks: %.2fx; largest (rank 0, the "
              "reporter): %d KiB and %d KiB: %.2fx" % (small[0][3], big[3], big[0], big[3] / small[0][3], small[0][4],
                                                        big[4], big[4] / small[0][4]))
    if big[0] == pts[-1][0]:
        break
sys.exit(1 if bad else 0)
EOF
