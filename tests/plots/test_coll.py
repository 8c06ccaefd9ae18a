#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`ngauge plot` and `ngauge report` on a coll result: one figure per operation.

Checks on a synthetic file (three operations with their algorithms, and
barrier's one row of size 0): OUT-coll-OP.svg per operation but barrier, in
the order of the rows, each listed on stdout and no OUT itself; each figure
has the time per collective and the bus bandwidth against size, a series per
algorithm named in the legend; its data file a table per algorithm holding
exactly the numbers of the JSON rows it comes from; --kind latency and
--kind bandwidth keep one panel each; the report pastes the three figures
and keeps barrier's time in its table, split into parts that fit a page.
Skipped (77) without gnuplot.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

COLUMNS = ["size", "count", "time_us_median", "time_us_ci95_lo", "time_us_ci95_hi", "busbw_MBps_median",
           "busbw_MBps_ci95_lo", "busbw_MBps_ci95_hi"]
TIME_AXIS = "Time per collective (\u00b5s)"
BW_AXIS = "Bus bandwidth (MB/s)"


def svg_text(path):
    return "".join(ET.parse(path).getroot().itertext())


def ops_drawn(doc):
    """The operations with a figure: every one with rows, in the order of the rows, but barrier."""
    ops = []
    for r in doc["results"]:
        if r["op"] != "barrier" and r["op"] not in ops:
            ops.append(r["op"])
    return ops


def algorithms(doc, op):
    algs = []
    for r in doc["results"]:
        if r["op"] == op and r["algorithm"] not in algs:
            algs.append(r["algorithm"])
    return algs


def check_data(dat, doc, op):
    """Every number of the figure's data file against the JSON row it comes from; returns their count."""
    tables = pc.read_dat(dat)
    algs = algorithms(doc, op)
    pc.expect([t["name"] for t in tables] == ["%s %s" % (op, a) for a in algs],
              "%s: tables %r, expected one per algorithm of %s %r" % (dat, [t["name"] for t in tables], op, algs))
    n = 0
    for t, alg in zip(tables, algs):
        rows = [r for r in doc["results"] if r["op"] == op and r["algorithm"] == alg]
        pc.expect(t["columns"] == COLUMNS, "%s table %s: columns %r" % (dat, t["name"], t["columns"]))
        pc.expect(len(t["rows"]) == len(rows) > 0, "%s table %s: %d lines for %d rows"
                  % (dat, t["name"], len(t["rows"]), len(rows)))
        for obj, line in zip(rows, t["rows"]):
            for col, got in zip(t["columns"], line):
                want = pc.column_value(obj, col)
                pc.expect(pc.same_number(want, got), "%s table %s column %s: %r in the file, %r in the JSON"
                          % (dat, t["name"], col, got, want))
                n += 1
    return n


def body(exe, tmp):
    name = pc.COLL_FIXTURES[0]
    path, doc = pc.fixture(name), pc.load(name)
    ops = ops_drawn(doc)
    pc.expect(ops == ["allreduce", "bcast", "allgather"], "fixture's operations %r" % ops)

    # a figure per operation but barrier, in the order of the rows
    out = os.path.join(tmp, "r.svg")
    stdout, _ = pc.expect_run([exe, "plot", path, "-o", out], 0)
    figs = [os.path.join(tmp, "r-coll-%s.svg" % op) for op in ops]
    pc.expect(stdout.split() == figs, "figures listed as %r, expected %r" % (stdout.split(), figs))
    pc.expect(not os.path.exists(out), "%s written besides the figures per operation" % out)
    for op, fig in zip(ops, figs):
        text = svg_text(fig)
        pc.expect(TIME_AXIS in text and BW_AXIS in text, "%s: axes %r" % (fig, text[:300]))
        for alg in algorithms(doc, op):
            pc.expect(alg in text, "%s: no series %s" % (fig, alg))
        n = check_data(fig[:-4] + ".dat", doc, op)
        print("%s: a series per algorithm (%s), %d numbers match" % (op, ", ".join(algorithms(doc, op)), n))

    # --kind keeps one panel
    for kind, keep, drop in (("latency", TIME_AXIS, BW_AXIS), ("bandwidth", BW_AXIS, TIME_AXIS)):
        out = os.path.join(tmp, "%s.svg" % kind)
        stdout, _ = pc.expect_run([exe, "plot", "--kind", kind, path, "-o", out], 0)
        want = [os.path.join(tmp, "%s-coll-%s.svg" % (kind, op)) for op in ops]
        pc.expect(stdout.split() == want, "--kind %s drew %r" % (kind, stdout.split()))
        for fig in want:
            text = svg_text(fig)
            pc.expect(keep in text and drop not in text, "--kind %s, %s: %r" % (kind, fig, text[:300]))

    # the report: the three figures, and barrier's time in the rows
    out = os.path.join(tmp, "r.html")
    pc.expect_run([exe, "report", path, "-o", out], 0)
    with open(out, encoding="utf-8") as f:
        page = f.read()
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    pc.expect(len(svgs) == len(ops), "report: %d figures, expected %d" % (len(svgs), len(ops)))
    barrier = [r for r in doc["results"] if r["op"] == "barrier"][0]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<svg\b.*?</svg>", "", page, flags=re.S)))
    pc.expect(re.search(r"0 barrier dissemination %g \[" % barrier["time_us"]["median"], text),
              "report: barrier's row (median %g us) missing" % barrier["time_us"]["median"])
    # the rows' table is wider than a page: split, each part naming the rows by size, op and algorithm
    parts = page.count("<caption>the same rows, more columns</caption>")
    pc.expect(parts >= 1, "report: the results table is not split")


if __name__ == "__main__":
    pc.need_gnuplot()
    pc.main(body)
