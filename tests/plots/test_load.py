#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`ngauge plot --kind load`: the latency-throughput curve of a sweep of offered loads (plots/fig_load.c).

From the fixtures load-{1000,4000,16000}.json (pingpong open loop; 8 B holds 1000 and 4000 messages/s, 4 KiB
only 1000/s): exit 0 and one figure; the script holds a curve per size, its points in the order of the offer,
each the achieved rate, the median with its CI and the p99 of that file's row; the knee (the highest offer
held with every lower one) marked and named in the legend, 8 B at 4000/s, 4 KiB at 1000/s; a sweep that held
every offer says so; a closed-loop file is refused with its reason, exit 1, nothing drawn.
"""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402


def blocks(gp):
    """The script's datablocks: name -> rows of numbers."""
    out = {}
    for name, body in re.findall(r"^\$(\w+) << EOD\n(.*?)^EOD$", gp, re.M | re.S):
        out[name] = [[float(v) for v in line.split()] for line in body.splitlines() if line.strip()]
    return out


def body(exe, tmp):
    files = [pc.fixture(n) for n in pc.LOAD_FIXTURES]
    # given out of order: the curve follows the offer, not the command line
    out = os.path.join(tmp, "sweep.svg")
    stdout, _ = pc.expect_run([exe, "plot", "--kind", "load", files[2], files[0], files[1], "-o", out], 0)
    pc.expect(stdout.strip() == out and os.path.getsize(out) > 0, "one figure, %r" % stdout)
    gp = open(os.path.join(tmp, "sweep.gp"), encoding="utf-8").read()
    b = blocks(gp)
    docs = [pc.load(n) for n in pc.LOAD_FIXTURES]  # in the order of the offer
    for k, size in enumerate((8, 4096)):
        rows = [[r for r in d["results"] if r["size"] == size][0] for d in docs]
        want = [[r["achieved_rate_per_s"], r["latency_us"]["median"], r["latency_us"]["ci95"][0],
                 r["latency_us"]["ci95"][1], r["latency_us"]["p99"], r["offered_rate_per_s"]] for r in rows]
        got = b.get("load_%d" % k)
        pc.expect(got is not None and len(got) == 3, "size %d: a curve of 3 points: %r" % (size, got))
        for g, w in zip(got, want):
            pc.expect(all(abs(x - y) <= 1e-9 * max(1.0, abs(y)) for x, y in zip(g, w)),
                      "size %d: point %r, the row says %r" % (size, g, w))
    # the knees: 8 B held 1000 and 4000 (not 16000), 4 KiB held 1000 only
    pc.expect(b.get("knee_0") and abs(b["knee_0"][0][0] - 4000.0) < 1e-9, "8 B knee at 4000/s: %r" % b.get("knee_0"))
    pc.expect(b.get("knee_1") and abs(b["knee_1"][0][0] - 1000.0) < 1e-9, "4 KiB knee at 1000/s: %r" % b.get("knee_1"))
    text = open(out, encoding="utf-8").read()
    for words in ("8 B, knee 4000/s", "4 KiB, knee 1000/s", "p99", "Achieved rate (messages/s)"):
        pc.expect(words in text, "the figure says %r" % words)
    print("ok: a curve per size in the order of the offer, the knees 4000/s (8 B) and 1000/s (4 KiB)")

    # a sweep below the knee says so; one whose lowest offer failed too
    out = os.path.join(tmp, "low.svg")
    pc.expect_run([exe, "plot", "--kind", "load", files[0], files[1], "-o", out], 0)
    text = open(out, encoding="utf-8").read()
    pc.expect("8 B, every offer held" in text and "4 KiB, knee 1000/s" in text, "below the knee: %r" % text[-400:])
    out = os.path.join(tmp, "high.svg")
    pc.expect_run([exe, "plot", "--kind", "load", files[2], "-o", out], 0)
    text = open(out, encoding="utf-8").read()
    pc.expect("8 B, no offer held" in text and "knee_" not in open(os.path.join(tmp, "high.gp")).read(),
              "above the knee: no ring, and the legend says so")
    print("ok: a sweep that held every offer, and one that held none, say so")

    # a closed-loop file has no curve
    out = os.path.join(tmp, "closed.svg")
    _, err = pc.expect_run([exe, "plot", "--kind", "load", pc.fixture("pingpong-2.json"), "-o", out], 1)
    pc.expect("no offered load in its rows" in err and not os.path.exists(out), "a closed-loop file: %r" % err)
    print("ok: a closed-loop file is refused: %s" % err.strip().splitlines()[-1])


if __name__ == "__main__":
    pc.need_gnuplot()
    pc.main(body)
