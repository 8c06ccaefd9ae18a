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

# Result files are checked against the published schema (doc/schema) by tests/schema/validate.py.
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema"))
import validate  # noqa: E402


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


def quiet_host(limit=0.05, wait=25.0):
    """True once two spinning processes lose at most @limit of their time,
    trying for up to @wait seconds (the hypervisor's steal comes in bursts
    of seconds to minutes on a shared host)."""
    best, end = 1.0, time.monotonic() + wait
    while True:
        f = stolen_fraction()
        best = min(best, f)
        if f <= limit:
            return True
        if time.monotonic() + 2.3 > end:
            break
        time.sleep(2)
    print(f"host too busy for busy-wait emulation for {wait:.0f} s (two spinning processes lost at least "
          f"{100 * best:.0f}% of their time; limit {100 * limit:.0f}%)")
    return False


def need_ngauge():
    if not NGAUGE or not os.access(NGAUGE, os.X_OK):
        print("SKIP: NGAUGE not set")
        sys.exit(77)


def run(args, out):
    """Runs ngauge ARGS -o OUT; returns the parsed result (exits 1 on failure, or when the file does not
    match the schema: each problem names the key)."""
    cmd = [NGAUGE] + args + ["-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}")
        sys.exit(1)
    if validate.available():
        bad = validate.file_problems(out)
        if bad:
            print("FAIL: %s does not match doc/schema/ngauge-result-1.schema.json:\n  %s" % (out, "\n  ".join(bad)))
            sys.exit(1)
    with open(out) as f:
        return json.load(f)


def cpu_jiffies():
    """(steal, total) CPU time of all CPUs so far, in jiffies (/proc/stat);
    steal is the time the hypervisor ran something else on this guest's
    CPUs (0 on bare metal)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    steal = v[7] if len(v) > 7 else 0
    return steal, sum(v[:8])


def attempts(measure, n=2, budget=200.0, steal_limit=0.01):
    """Runs measure() (a list of failures) on a quiet host until it passes,
    fails @n times, or @budget seconds are spent.  An attempt during which
    the hypervisor stole more than @steal_limit of the CPU time (a guest's
    ranks lost their cores to the host) did not test the estimators: its
    failures are printed and it is measured again; so is an attempt that
    could not start because the host stayed busy.  The checks themselves
    stay strict.  Returns the exit status: 0, 1, or 77 when the budget ran
    out without an undisturbed attempt that failed @n times (the host never
    gave the test two cores of its own)."""
    if len(os.sched_getaffinity(0)) < 2:
        print("SKIP: fewer than two CPUs: busy-wait emulation needs one per rank")
        return 77
    failed = disturbed = busy = 0
    start = time.monotonic()
    spent = lambda: time.monotonic() - start  # noqa: E731
    while True:
        if spent() > budget:
            print(f"SKIP: no undisturbed attempt in {budget:.0f} s ({disturbed} disturbed by the host's steal, "
                  f"{busy} waits for a quiet host that ran out): busy-wait emulation needs two cores of its own")
            return 77
        if not quiet_host(wait=min(25.0, max(budget - spent(), 3.0))):
            busy += 1
            continue
        s0, t0 = cpu_jiffies()
        fails = measure()
        s1, t1 = cpu_jiffies()
        steal = (s1 - s0) / max(t1 - t0, 1)
        print(f"the host stole {100 * steal:.2f}% of the CPU time during this attempt ({spent():.0f} s in)")
        if not fails:
            return 0
        for f in fails:
            print("  " + f)
        if steal > steal_limit:
            disturbed += 1
            print(f"attempt disturbed by the host ({len(fails)} check(s) failed); measuring again")
            continue
        failed += 1
        print(f"attempt failed: {len(fails)} check(s)" + ("; measuring again" if failed < n else ""))
        if failed >= n:
            return 1


def base_worst(d, sizes, count=20):
    """The base's own worst per-size LogGP figures, measured the way emu
    drives it (emu over tcp with nothing injected: the same calls, the
    trailer, the polled receives): injected values are sized to dominate
    them.  Measured twice, each figure the smaller of the two: a burst of
    outside load during one measurement does not inflate the floors (and
    with them the patterns' delays)."""
    runs = []
    for i in range(2):
        base = run(["-x", "emu", "--emu-base", "tcp", "-p", "loggp", "-s", sizes, "-c", str(count)],
                   os.path.join(d, f"base{i}.json"))
        sz = base["loggp"]["sizes"]
        runs.append({"os": max(max(s["o_s_us"] for s in sz), 0.0), "or": max(max(s["o_r_us"] for s in sz), 0.0),
                     "T": max(max(s["T_us"] for s in sz), 0.0), "half": max(s["prtt1_us"] / 2 for s in sz)})
    w = {k: min(r[k] for r in runs) for k in runs[0]}
    print("base worst (us): " + ", ".join(f"{k} {v:.2f}" for k, v in w.items()))
    return w
