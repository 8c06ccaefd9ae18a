#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ground truth for the overlap pattern: emu over tcp with known o_s, o_r, L
and G, both sides computing, two-sided (isend/irecv).

What emu does (modules/emu/emu.c): isend is its blocking send, which spins o_s
on the calling rank before it returns (the transfer cannot overlap the
sender's computation: by construction everything is done at post); the
receive spins o_r after the message's delivery time t_inj + L + (s-1) G,
and that time runs while the receiver computes.  The pattern's iteration
(patterns/engine/progress.h) is, for the receiver,
    t0  irecv  send(ready: o_s)  compute X  wait (o_r after delivery)  t1
and for the sender  recv(ready)  t0  isend (o_s)  compute X  wait  t1,
the sender starting when the ready message has arrived (L) and been
received (o_r).  So, with w = (s-1) G:
    receiver  T(0) = 2 o_s + 2 L + 2 o_r + w
              T(X) = o_s + X + o_r once X > o_s + 2L + o_r + w
              ratio (T(0) + X - T(X)) / T(0) = 1 - (o_s + o_r) / T(0)
    sender    T(0) = o_s, T(X) = o_s + X: ratio 0.
Checks, at the largest X: the receiver's ratio, T(0) and exposed time
o_s + o_r within 10% of these; the sender's T(0) within 10% of o_s and its
ratio below 0.1 (near 0).
Exit 0 pass, 1 fail, 77 when ngauge is missing or the host cannot give two
idle CPUs to the test (gtlib).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib  # noqa: E402

SIZE = 16384
OS, OR, L, G = 40.0, 40.0, 30.0, 0.008  # us, us, us, us per byte: w = 131 us
XS = "0,600,1200"


def near(fails, what, got, want, rel=0.10):
    ok = got is not None and abs(got - want) <= rel * abs(want)
    line = f"{what:<42} expected {want:<9.4g} measured {got!s:<12.8}"
    print(("ok:   " if ok else "FAIL: ") + line)
    if not ok:
        fails.append(line)


def measure():
    fails = []
    w = (SIZE - 1) * G
    t0_r = 2 * OS + 2 * L + 2 * OR + w
    want_r = 1 - (OS + OR) / t0_r
    with tempfile.TemporaryDirectory(prefix="ngauge-gt.") as d:
        r = gtlib.run(["-x", "emu", "--emu-base", "tcp", "--emu-os", str(OS), "--emu-or", str(OR), "--emu-L", str(L),
                       "--emu-G", str(G), "-p", "overlap", "--overlap-side", "both", "--overlap-compute", XS,
                       "-s", str(SIZE), "-c", "40", "-w", "5"], os.path.join(d, "overlap.json"))
    sizes = {e["side"]: e for e in r["overlap"]["sizes"]}
    last = {row["side"]: row for row in r["results"]}  # the largest X of each side
    rec, snd = sizes["receiver"], sizes["sender"]
    near(fails, "receiver T(0) = 2 o_s + 2 L + 2 o_r + w", rec["transfer_us"]["value"], t0_r)
    near(fails, "receiver exposed time = o_s + o_r", last["receiver"]["exposed_us"]["median"], OS + OR)
    near(fails, "receiver ratio = 1 - (o_s + o_r) / T(0)", rec["overlap_ratio"]["value"], want_r)
    lo, hi = rec["overlap_ratio"]["ci95"]
    print(f"      receiver ratio 95% CI [{lo}, {hi}]")
    near(fails, "sender T(0) = o_s", snd["transfer_us"]["value"], OS)
    v = snd["overlap_ratio"]["value"]
    ok = v is not None and v < 0.1
    line = f"{'sender ratio (blocking send) near 0':<42} expected < 0.1    measured {v}"
    print(("ok:   " if ok else "FAIL: ") + line)
    if not ok:
        fails.append(line)
    return fails


if __name__ == "__main__":
    gtlib.need_ngauge()
    sys.exit(gtlib.attempts(measure, budget=60.0))
