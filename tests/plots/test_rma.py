#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`ngauge plot` and `ngauge report` on results of the rma suite: one figure per test.

Checks on two synthetic files (two modules): OUT-rma-TEST.EXT per test in the
order of the rows, each listed on stdout and no OUT itself; a file with one
test gives OUT; one series per file and synchronisation mode (sync: origins
and targets apart, each in a panel of its own; multi-origin: per size; lock:
latency against size and the aggregate throughput against origins in a
second panel), with the legend
naming the file's label and the mode; the data tables hold exactly the
numbers of the JSON rows they come from; --kind bandwidth keeps the
bandwidth tests (and lock's throughput panel); the report pastes every
figure.  Skipped (77) without gnuplot.
"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

TESTS = ["put-pingpong", "bidir", "put-bw", "sync", "multi-origin", "lock"]
LABELS = ["rma direct", "mpirma"]


def svg_text(path):
    return "".join(ET.parse(path).getroot().itertext())


def rows_of(doc, test):
    return [r for r in doc["results"] if r["test"] == test]


def expected_tables(doc, test):
    """(name, x key, rows) per table, as the plotter should write them."""
    rows = rows_of(doc, test)
    syncs = []
    for r in rows:
        if r["sync"] not in syncs:
            syncs.append(r["sync"])
    if test == "sync":
        out = []
        for s in syncs:
            out.append(("%s, n origins, 1 target" % s, "origins",
                        [r for r in rows if r["sync"] == s and r["targets"] == 1]))
            out.append(("%s, 1 origin, n targets" % s, "targets",
                        [r for r in rows if r["sync"] == s and r["origins"] == 1 and r["targets"] > 1]))
        return out
    if test == "multi-origin":
        return [("%s, 64 KiB" % s, "origins", [r for r in rows if r["sync"] == s]) for s in syncs]
    if test == "lock":
        size = doc["rma"]["lock_throughput_size"]
        lat = [(s, "size", [r for r in rows if r["sync"] == s and r["origins"] == 1]) for s in syncs]
        thr = [("%s (throughput)" % s, "origins", [r for r in rows if r["sync"] == s and r["size"] == size])
               for s in syncs]
        return lat + thr
    return [(s, "size", [r for r in rows if r["sync"] == s]) for s in syncs]


def check_data(dat, doc, test):
    tables = pc.read_dat(dat)
    want = expected_tables(doc, test)
    pc.expect([t["name"] for t in tables] == [w[0] for w in want],
              "%s: tables %r, expected %r" % (dat, [t["name"] for t in tables], [w[0] for w in want]))
    n = 0
    for t, (name, xkey, rows) in zip(tables, want):
        pc.expect(t["columns"][0] == xkey, "%s table %s: x column %s, expected %s" % (dat, name, t["columns"][0],
                                                                                     xkey))
        pc.expect(len(t["rows"]) == len(rows) > 0, "%s table %s: %d lines for %d rows"
                  % (dat, name, len(t["rows"]), len(rows)))
        for obj, line in zip(rows, t["rows"]):
            for col, got in zip(t["columns"], line):
                want_v = pc.column_value(obj, col)
                pc.expect(pc.same_number(want_v, got), "%s table %s column %s: %r in the file, %r in the JSON"
                          % (dat, name, col, got, want_v))
                n += 1
    return n


def body(exe, tmp):
    files = [pc.fixture(f) for f in pc.RMA_FIXTURES]
    docs = [pc.load(f) for f in pc.RMA_FIXTURES]

    # a figure per test, in the order of the rows
    out = os.path.join(tmp, "r.svg")
    stdout, _ = pc.expect_run([exe, "plot", files[0], "--label", LABELS[0], files[1], "--label", LABELS[1],
                               "-o", out], 0)
    figs = [os.path.join(tmp, "r-rma-%s.svg" % t) for t in TESTS]
    pc.expect(stdout.split() == figs, "figures listed as %r, expected %r" % (stdout.split(), figs))
    pc.expect(not os.path.exists(out), "%s written besides the figures per test" % out)
    for test, fig in zip(TESTS, figs):
        text = svg_text(fig)
        for label in LABELS:
            for name, _, _ in expected_tables(docs[0], test):
                name = name.replace(" (throughput)", "")
                pc.expect("%s %s" % (label, name) in text, "%s: no series %r" % (fig, "%s %s" % (label, name)))
        n = sum(check_data(fig[:-4] + "-%d.dat" % (i + 1), docs[i], test) for i in range(2))
        print("%s: series of both modules, %d numbers match" % (test, n))
    text = svg_text(figs[TESTS.index("lock")])
    pc.expect("lock: latency" in text and "lock: throughput" in text and "(1/s)" in text,
              "lock: two panels expected: %r" % text[:300])
    # sync: n origins (one target) and n targets (one origin) in panels of their own, one label per axis
    text = svg_text(figs[TESTS.index("sync")])
    pc.expect("Origins (one target)" in text and "Targets (one origin)" in text and "Origins or targets" not in text
              and text.count("(\u00b5s)") == 2, "sync: axes %r" % text[:300])
    text = svg_text(figs[TESTS.index("put-bw")])
    pc.expect("(MB/s)" in text and "Message size (bytes)" in text, "put-bw: axes %r" % text[:300])

    # one test in the file: the figure is OUT itself
    one = dict(docs[0])
    one["results"] = rows_of(docs[0], "put-pingpong")
    path = os.path.join(tmp, "one.json")
    with open(path, "w") as f:
        json.dump(one, f)
    out = os.path.join(tmp, "one.png")
    stdout, _ = pc.expect_run([exe, "plot", path, "-o", out], 0)
    pc.expect(stdout.strip() == out and os.path.getsize(out) > 0, "one test: %r" % stdout)

    # --kind bandwidth: the bandwidth tests, and lock's throughput panel
    out = os.path.join(tmp, "bw.svg")
    stdout, _ = pc.expect_run([exe, "plot", "--kind", "bandwidth"] + files + ["-o", out], 0)
    want = [os.path.join(tmp, "bw-rma-%s.svg" % t) for t in ("put-bw", "multi-origin", "lock")]
    pc.expect(stdout.split() == want, "--kind bandwidth drew %r" % stdout.split())
    text = svg_text(want[-1])
    pc.expect("throughput" in text and "latency" not in text, "--kind bandwidth, lock: %r" % text[:300])

    # the report pastes every figure: per file and the comparison
    out = os.path.join(tmp, "r.html")
    pc.expect_run([exe, "report"] + files + ["-o", out], 0)
    with open(out, encoding="utf-8") as f:
        page = f.read()
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    # (and the figure of the ratios of the second file to the first: ngauge compare)
    pc.expect(len(svgs) == 3 * len(TESTS) + 1, "report: %d figures, expected %d" % (len(svgs), 3 * len(TESTS) + 1))
    ids = re.findall(r"""\sid=["']([^"']+)["']""", page)
    dup = {i for i in ids if ids.count(i) > 1}
    pc.expect(not dup, "report: ids used twice: %r" % sorted(dup)[:5])


if __name__ == "__main__":
    pc.need_gnuplot()
    pc.main(body)
