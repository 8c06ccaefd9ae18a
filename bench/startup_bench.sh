#!/bin/bash
# How fast ngauge answers without running anything (--version, --help, --list and a usage error), against the
# cost of starting a program at all on this host (/bin/true, the reference, timed in the same rounds).
# BENCH_ROUNDS rounds (default 20) of each, interleaved; printed per command: the best and the median wall time
# and the median's ratio to the reference's median, with the reference's own spread (its upper quartile over
# its median). Targets: --version under 20 ms and the others under 100 ms (best of the rounds). Exit 1 otherwise.
set -u
. "$(dirname "$0")/lib.sh" startup
python3 - "$NGAUGE" "${BENCH_ROUNDS:-20}" <<'PY'
import statistics, subprocess, sys, time
ng, rounds = sys.argv[1], int(sys.argv[2])
cmds = {"reference /bin/true": (["/bin/true"], None), "--version": ([ng, "--version"], 0.020),
        "--help": ([ng, "--help"], 0.100), "--list": ([ng, "--list"], 0.100),
        "-x nosuch (usage error)": ([ng, "-x", "nosuch", "-p", "pingpong"], 0.100)}
times = {k: [] for k in cmds}
for _ in range(rounds):
    for k, (argv, _) in cmds.items():
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[k].append(time.perf_counter() - t)
ref = times["reference /bin/true"]
ref_med = statistics.median(ref)
ref_spread = statistics.quantiles(ref, n=4)[2] / ref_med - 1
bad = 0
for k, (argv, target) in cmds.items():
    best, med = min(times[k]), statistics.median(times[k])
    line = f"{k:26s} best {best * 1e3:7.2f} ms  median {med * 1e3:7.2f} ms  ratio to reference {med / ref_med:5.2f}"
    if target is not None:
        ok = best < target
        bad += not ok
        line = ("ok   " if ok else "FAIL ") + line + f"  (target {target * 1e3:.0f} ms)"
    else:
        line = "     " + line + f"  (its own spread {ref_spread * 100:.0f}%)"
    print(line)
sys.exit(1 if bad else 0)
PY
