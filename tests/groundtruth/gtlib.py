# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of the emu ground-truth tests.

emu emulates costs by busy-waiting, so each of the two ranks needs a CPU of
its own while it runs: on a host whose cores are taken by other work, the
ranks steal time from each other and the emulated machine is not the one
that was injected.  quiet_host() checks for that first (two spinning
processes, each measuring the time it loses), and the tests skip (77) when
the host stays too busy to give two cores to the test.
"""
import json
import multiprocessing
import os
import subprocess
import sys
import time

NGAUGE = os.environ.get("NGAUGE", "")


def _spin(seconds, q):
    # Time this process lost to others: gaps between consecutive clock reads.
    lost, end = 0.0, time.monotonic() + seconds
    prev = time.monotonic()
    while prev < end:
        t = time.monotonic()
        if t - prev > 50e-6:
            lost += t - prev
        prev = t
    q.put(lost / seconds)


def stolen_fraction(seconds=0.3):
    """Largest fraction of time either of two spinning processes lost."""
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=_spin, args=(seconds, q)) for _ in range(2)]
    for p in ps:
        p.start()
    res = [q.get() for _ in ps]
    for p in ps:
        p.join()
    return max(res)


def quiet_host(limit=0.05, tries=10):
    """True once two spinning processes lose at most @limit of their time."""
    if len(os.sched_getaffinity(0)) < 2:
        print("SKIP: fewer than two CPUs: busy-wait emulation needs one per rank")
        return False
    worst = 1.0
    for i in range(tries):
        f = stolen_fraction()
        worst = min(worst, f)
        if f <= limit:
            return True
        time.sleep(2)
    print(f"SKIP: host too busy for busy-wait emulation (two spinning processes lost {100 * worst:.0f}% "
          f"of their time; limit {100 * limit:.0f}%)")
    return False


def need_ngauge():
    if not NGAUGE or not os.access(NGAUGE, os.X_OK):
        print("SKIP: NGAUGE not set")
        sys.exit(77)


def run(args, out):
    """Runs ngauge ARGS -o OUT; returns the parsed result (exits 1 on failure)."""
    cmd = [NGAUGE] + args + ["-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}")
        sys.exit(1)
    with open(out) as f:
        return json.load(f)


def attempts(measure, n=2):
    """Runs measure() (a list of failures) up to @n times on a quiet host:
    a burst of outside load can spoil one run; the checks themselves stay
    strict.  Returns the exit status."""
    for i in range(n):
        if not quiet_host():
            return 77
        fails = measure()
        if not fails:
            return 0
        print(f"attempt {i + 1}: {len(fails)} check(s) failed" + ("; measuring again" if i + 1 < n else ""))
        for f in fails:
            print("  " + f)
    return 1


def base_worst(d, sizes, count=20):
    """The base's own worst per-size LogGP figures (loggp over plain tcp):
    injected values are sized to dominate them."""
    base = run(["-x", "tcp", "-p", "loggp", "-s", sizes, "-c", str(count)], os.path.join(d, "base.json"))
    sz = base["loggp"]["sizes"]
    w = {"os": max(max(s["o_s_us"] for s in sz), 0.0), "or": max(max(s["o_r_us"] for s in sz), 0.0),
         "T": max(max(s["T_us"] for s in sz), 0.0), "half": max(s["prtt1_us"] / 2 for s in sz)}
    print("base worst (us): " + ", ".join(f"{k} {v:.2f}" for k, v in w.items()))
    return w
