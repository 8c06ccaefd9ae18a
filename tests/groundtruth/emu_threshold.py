#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ground truth for protocol-change detection: emu injects G up to 8 KiB and
G2 = 3 G above (--emu-G2 with --emu-threshold 8K), on top of o_s, o_r, g, L
of tens of microseconds.  loggp must report a breakpoint within one
measured size of the threshold (the sizes are powers of two, so the first
size of the new regime must be 16 KiB, or 8 KiB at worst), and the G of the
two segments near G and G2 (10%).
Exit 0 pass, 1 fail, 77 when ngauge is missing or the host cannot give
two idle CPUs to the test (gtlib.quiet_host).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib  # noqa: E402

G, G2, THR = 0.002, 0.006, 8192
SIZES = [2 ** i for i in range(17)]  # 1 .. 64K


def measure():
    fails = []
    with tempfile.TemporaryDirectory(prefix="ngauge-gt.") as d:
        # Only T(s) matters here: g + (s-1)G must dominate the base's own
        # per-message costs, and o_s, o_r must stay below g.
        w = gtlib.base_worst(d, "1-64K:x4", 10)
        g = round(max(45.0, 4 * max(w["T"], w["os"], w["or"])), 1)
        o = round(g / 3, 1)
        r = gtlib.run(["-x", "emu", "--emu-os", str(o), "--emu-or", str(o), "--emu-g", str(g), "--emu-L", str(g),
                       "--emu-G", str(G), "--emu-G2", str(G2), "--emu-threshold", "8K", "-p", "loggp",
                       "-s", "1-64K", "-c", "15"], os.path.join(d, "thr.json"))
    blk = r["loggp"]
    bps = blk["breakpoints"]
    want = SIZES.index(THR) + 1  # first size above the threshold
    print(f"threshold {THR} B: first size of the new regime should be {SIZES[want]} B; breakpoints {bps}")
    near = [b for b in bps if b in SIZES and abs(SIZES.index(b) - want) <= 1]
    if len(bps) != 1 or len(near) != 1:
        fails.append(f"expected one breakpoint within one size of {SIZES[want]} B, got {bps}")
    segs = blk["segments"]
    if len(segs) == 2:
        for seg, want_G in ((segs[0], G), (segs[1], G2)):
            v = seg["G_us_per_byte"]["value"]
            ok = v is not None and abs(v - want_G) <= 0.1 * want_G
            print(("ok:   " if ok else "FAIL: ") + f"segment {seg['from']}-{seg['to']}: G {v}, injected {want_G}")
            if not ok:
                fails.append(f"G of segment {seg['from']}-{seg['to']} is {v}, injected {want_G}")
    return fails


def main():
    gtlib.need_ngauge()
    rc = gtlib.attempts(measure, budget=150.0)
    if rc == 0:
        print("ok: protocol change found at the injected threshold")
    return rc


if __name__ == "__main__":
    sys.exit(main())
