#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`ngauge report` writes one self-contained HTML page.

Checks: exit 0; the page parses (html.parser, balanced tags); no external
reference (no src=, <link>, <script>, url(http...)); one section per file and a
comparison per shared pattern; every inline SVG parses as XML and ids are
unique page-wide with every reference resolved; text from the files is
escaped; the tables carry the medians, CIs and the LogGP/pLogP parameters;
no temporary files are left.  Skipped (77) without gnuplot.
"""
import html
import html.parser
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}


class Balance(html.parser.HTMLParser):
    """Checks that non-void HTML elements are closed in order (SVG skipped)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.svg = 0
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self.svg += 1
        if self.svg or tag in VOID:
            return
        self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg -= 1
            return
        if self.svg or tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            raise pc.Failed("unbalanced </%s>, open: %r" % (tag, self.stack[-5:]))
        self.stack.pop()

    def handle_data(self, data):
        if not self.svg:
            self.text.append(data)


def fmt(v):
    """The report's number format (ng_fmt_human in plots/html.c)."""
    if v == int(v) and abs(v) < 1e15:
        return "%.0f" % v
    if abs(v) >= 1e4:
        return "%.0f" % v
    return "%.4g" % v


def body(exe, tmp):
    names = list(pc.FIXTURES)
    out = os.path.join(tmp, "r.html")
    env = pc.clean_env(TMPDIR=os.path.join(tmp, "t"))
    os.mkdir(os.path.join(tmp, "t"))
    stdout, _ = pc.expect_run([exe, "report"] + [pc.fixture(n) for n in names] + ["-o", out], 0, env=env)
    pc.expect(stdout.strip() == out, "stdout %r" % stdout)
    pc.expect(not os.listdir(os.path.join(tmp, "t")), "temporary files left: %r" % os.listdir(os.path.join(tmp, "t")))
    pc.expect(not os.path.exists(out + ".tmp"), "OUT.tmp left")
    with open(out, encoding="utf-8") as f:
        page = f.read()
    pc.expect(page.startswith("<!DOCTYPE html>"), "no doctype")

    p = Balance()
    p.feed(page)
    p.close()
    pc.expect(not p.stack, "unclosed elements: %r" % p.stack)
    text = "".join(p.text)

    # self-contained
    for bad in (r"<script", r"<link", r"\ssrc=", r"url\(\s*['\"]?http", r"<iframe", r"@import"):
        pc.expect(not re.search(bad, page, re.I), "external reference %s in the page" % bad)

    # inline figures: one per file and one per pattern shared by several files
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    patterns = list(pc.FIXTURES.values())
    shared = len({p for p in patterns if patterns.count(p) > 1})
    # ... and, in each comparison, the figure of the ratios to its first file (ngauge compare)
    ratios = page.count("<h3>Ratios against the first file (ngauge compare)</h3>")
    pc.expect(ratios == shared, "%d sections of ratios for %d comparisons" % (ratios, shared))
    # ... and the distribution (plot --kind cdf) of each file with samples, and of no other
    dists = page.count("<h3>Distribution</h3>")
    pc.expect(dists == len(pc.DIST_FIXTURES), "%d distribution figures for %d files with samples"
              % (dists, len(pc.DIST_FIXTURES)))
    pc.expect(len(svgs) == len(names) + 2 * shared + dists,
              "%d figures for %d files + %d comparisons with their ratios + %d distributions"
              % (len(svgs), len(names), shared, dists))
    for n in pc.DIST_FIXTURES:
        sec = page[page.index('id="file-%d"' % (names.index(n) + 1)):]
        sec = sec[:sec.find("</section>")]
        pc.expect("<h3>Distribution</h3>" in sec and "Cumulative fraction" in sec,
                  "%s: no distribution figure in its section" % n)
    for s in svgs:
        try:
            ET.fromstring(s)
        except ET.ParseError as e:
            raise pc.Failed("an inline SVG is not XML: %s" % e)
    ids = re.findall(r"""\sid=["']([^"']+)["']""", page)
    dup = {i for i in ids if ids.count(i) > 1}
    pc.expect(not dup, "ids used twice: %r" % sorted(dup)[:5])
    refs = set(re.findall(r"""href=["']#([^"']+)["']""", page)) | set(re.findall(r"url\(#([^)]+)\)", page))
    pc.expect(refs <= set(ids), "references to no id: %r" % sorted(refs - set(ids))[:5])

    # one section per file, its environment escaped
    for i, n in enumerate(names):
        pc.expect('id="file-%d"' % (i + 1) in page, "no section for %s" % n)
        pc.expect(pc.fixture(n) in text, "file name %s not shown" % n)
    device = pc.load("pingpong-2.json")["env"]["device"]
    pc.expect(html.escape(device, quote=True).replace("&#x27;", "&#39;") in page, "device string not escaped")
    pc.expect(device in text, "device string not shown")

    # tables: medians and CIs, parameters with CIs, flags
    doc = pc.load("pingpong-2.json")
    row = doc["results"][5]
    for key in ("latency_us", "bandwidth_MBps"):
        st = row[key]
        pc.expect(fmt(st["median"]) in text, "%s median %s missing" % (key, fmt(st["median"])))
        ci = "[%s, %s]" % (fmt(st["ci95"][0]), fmt(st["ci95"][1]))
        pc.expect(ci in text, "%s CI %s missing" % (key, ci))
    pc.expect("latency median (\u00b5s)" in text and "95% CI" in text, "results table headings")
    loggp = pc.load("loggp.json")["loggp"]
    seg = loggp["segments"][0]
    for key in ("g_us", "G_us_per_byte", "o_s_us"):
        v = "%s</td><td class=\"num\">[%s, %s]" % (fmt(seg[key]["value"]), fmt(seg[key]["ci95"][0]),
                                                  fmt(seg[key]["ci95"][1]))
        pc.expect(v in page, "loggp %s with CI missing: %s" % (key, v))
    pc.expect(loggp["segments"][1]["L_us"]["flag"] in text, "flagged loggp parameter not shown")
    pc.expect(loggp["loggopsim"] in text, "LogGOPSim line missing")
    plogp = pc.load("plogp.json")["plogp"]
    pc.expect("[%s, %s]" % (fmt(plogp["L_us"]["ci95"][0]), fmt(plogp["L_us"]["ci95"][1])) in text,
              "pLogP L with CI missing")
    g = plogp["sizes"][3]["g_us"]
    pc.expect(fmt(g["value"]) in text, "pLogP g(m) missing")
    for alg in pc.load("alltoall.json")["alltoall"]["algorithms"]:
        pc.expect(alg in text, "alltoall algorithm %s missing" % alg)
    st = pc.load("bibw-4.json")["results"][4]["messages_per_s"]
    pc.expect("Streaming bandwidth" in text and fmt(st["median"]) in text, "bibw section or message rate missing")

    # an oversubscribed run is marked in its section and its label
    over_path = pc.oversubscribed("n1.json", tmp)
    out = os.path.join(tmp, "over.html")
    pc.expect_run([exe, "report", over_path, pc.fixture("n1.json"), "-o", out], 0, env=env)
    with open(out, encoding="utf-8") as f:
        page = f.read()
    pc.expect(page.count("Oversubscribed: 3 busy-polling ranks shared 2 cores") == 1,
              "the oversubscribed run is not marked once")
    pc.expect("(oversubscribed)" in page, "the oversubscribed run's label is not marked")

    # one file: one figure, no comparison; default output beside the file
    local = os.path.join(tmp, "local")
    os.mkdir(local)
    with open(pc.fixture("n1.json"), encoding="utf-8") as src, open(os.path.join(local, "run.json"), "w") as dst:
        dst.write(src.read())
    pc.expect_run([exe, "report", "run.json"], 0, env=env, cwd=local)
    with open(os.path.join(local, "run.html"), encoding="utf-8") as f:
        pc.expect(f.read().count("<svg") == 1, "single file: one figure")


if __name__ == "__main__":
    pc.need_gnuplot()
    pc.main(body)
