#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""loggp finds a protocol switch where the MPI library's own configuration puts it.

MPICH over UCX switches from its eager protocols to rendezvous at UCX_RNDV_THRESH bytes.  Moved to three
positions across the range, 1 KiB, 4 KiB and 16 KiB (the last in the upper third of 1 B - 1 MiB on a
logarithmic scale), loggp over two ranks under mpiexec must put its first breakpoint at the gap of
measured sizes where the switch is, each time: the first size of the second segment is the first measured
size above the threshold.  The sizes start at 256 B, above the small-message protocols of UCX's shared
memory transport (whose own steps, at about 32 and 128 B, would be the first breakpoints otherwise), and
end at 128 KiB: above about 48 KiB eager and rendezvous transfer alike on shared memory here, so a
switch there is no jump, and on a busy host the rounds of the largest sizes wait for a CPU
(doc/loggp.md, "A switch the library moves").

A position is measured again, up to three attempts, when an attempt misses (a busy host can disturb a whole
run: at a load average of 6 on 2 cores a spurious first breakpoint at 1296 B was seen); all attempts are
printed, and the test fails when all miss.  Exit 0 pass, 1 fail, 77 when there is no
mpiexec or mpi module, or the MPI library is not UCX-based (UCX_RNDV_THRESH does not apply to it).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema"))
import validate  # noqa: E402

NGAUGE = os.environ.get("NGAUGE", "")
SIZES = "256-128K:x1.5"
THRESHOLDS = [1024, 4096, 16384]
ATTEMPTS = 3


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def sizes():
    out, s = [], 256.0
    while s <= 131072 * 1.0000001:
        r = int(round(s))
        if not out or r > out[-1]:
            out.append(r)
        s *= 1.5
    return out + [131072] if out[-1] < 131072 else out


def measure(thresh, path):
    """One loggp run with the switch at @thresh; returns the parsed result, or exits (fail, skip)."""
    env = dict(os.environ, UCX_RNDV_THRESH=str(thresh))
    cmd = ["mpiexec", "-n", "2", NGAUGE, "-x", "mpi", "-p", "loggp", "-s", SIZES, "--loggp-budget", "3",
           "-o", path]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150, env=env)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}")
        sys.exit(1)
    if validate.available():
        bad = validate.file_problems(path)
        if bad:
            print("FAIL: %s does not match the schema:\n  %s" % (path, "\n  ".join(bad)))
            sys.exit(1)
    with open(path) as f:
        return json.load(f)


def main():
    if not NGAUGE or not os.access(NGAUGE, os.X_OK):
        skip("NGAUGE not set")
    if not shutil.which("mpiexec"):
        skip("no mpiexec")
    lst = subprocess.run([NGAUGE, "--list"], capture_output=True, text=True).stdout
    if "\n  mpi " not in lst:
        skip("no mpi module in this build")
    want_sizes = sizes()
    fails = 0
    with tempfile.TemporaryDirectory(prefix="ngauge-switch.") as d:
        for t in THRESHOLDS:
            below = max(s for s in want_sizes if s < t)
            above = min(s for s in want_sizes if s > t)
            ok = False
            for a in range(ATTEMPTS):
                r = measure(t, os.path.join(d, f"switch-{t}-{a}.json"))
                dev = r["env"].get("versions", {}).get("mpi_device") or ""
                if "ucx" not in dev:
                    skip(f"the MPI library's device is '{dev}', not UCX: UCX_RNDV_THRESH does not move its switch")
                blk = r["loggp"]
                T = {e["size"]: e["T_us"] for e in blk["sizes"]}
                got = blk["breakpoints"][0] if blk["breakpoints"] else None
                ok = got == above and blk["segments"][0]["to"] == below
                redone = sum(1 for e in blk["sizes"] if "remeasured" in e)
                print(f"{'ok:  ' if ok else 'miss:'} UCX_RNDV_THRESH={t}: T {T[below]:.3f} us at {below} B, "
                      f"{T[above]:.3f} us at {above} B; breakpoints {blk['breakpoints']} (want the first at "
                      f"{above}); {redone} size(s) measured again")
                if ok:
                    break
            if not ok:
                print(f"FAIL: switch at {t} B: first breakpoint not at the gap {below} | {above} B in "
                      f"{ATTEMPTS} attempts")
                fails += 1
    if fails:
        return 1
    print("ok: loggp's first breakpoint at the switch, at each of the three positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
