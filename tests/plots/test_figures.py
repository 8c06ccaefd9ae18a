#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`ngauge plot` draws every pattern with every terminal.

Checks: exit status 0, the figure is there and not empty, a PDF starts with
"%PDF-", a PNG with the PNG signature, an SVG parses as XML (and contains the
legend text), a .tex file is a LaTeX picture with its .pdf beside it; the
naming of outputs with several files and several patterns; --kind; the
default output name; labels that need quoting in gnuplot, SVG and LaTeX.
Skipped (77) without gnuplot.
"""
import os
import shutil
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_figure(path):
    pc.expect(os.path.isfile(path), "%s was not written" % path)
    size = os.path.getsize(path)
    pc.expect(size > 0, "%s is empty" % path)
    with open(path, "rb") as f:
        head = f.read(16)
    ext = os.path.splitext(path)[1]
    if ext == ".pdf":
        pc.expect(head.startswith(b"%PDF-"), "%s is not a PDF" % path)
    elif ext == ".png":
        pc.expect(head.startswith(PNG_SIGNATURE), "%s is not a PNG" % path)
    elif ext == ".svg":
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            raise pc.Failed("%s is not XML: %s" % (path, e))
        pc.expect(root.tag.endswith("svg"), "%s: root element %s" % (path, root.tag))
        if shutil.which("xmllint"):
            rc = os.system("xmllint --noout '%s'" % path)
            pc.expect(rc == 0, "xmllint rejects %s" % path)
    elif ext == ".tex":
        with open(path, encoding="utf-8") as f:
            text = f.read()
        pc.expect("\\begin{picture}" in text, "%s is not a LaTeX picture" % path)
        check_figure(path[:-4] + ".pdf")
    for side in (".gp", ".dat"):
        base = path[: -len(ext)]
        if side == ".dat" and not os.path.exists(base + side):
            side = "-1.dat"
        pc.expect(os.path.getsize(base + side) > 0, "%s%s is empty" % (base, side))


def svg_text(path):
    return "".join(ET.parse(path).getroot().itertext())


def svg_texts(path):
    """The texts of the figure, one per <text> element."""
    return ["".join(t.itertext()).strip() for t in ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}text")]


def read_tables(path):
    """The tables of a data file: lists of rows (lists of words), tables parted by two blank lines."""
    tables, cur, blanks = [], [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                blanks += 1
                if blanks == 2:
                    tables.append(cur)
                    cur = []
                continue
            blanks = 0
            if not line.startswith("#"):
                cur.append(line.split())
    tables.append(cur)
    return tables


def body(exe, tmp):
    # every pattern, every terminal
    for name, pattern in pc.FIXTURES.items():
        for ext in (".pdf", ".svg", ".png", ".tex"):
            out = os.path.join(tmp, name.replace(".json", "") + ext)
            stdout, _ = pc.expect_run([exe, "plot", pc.fixture(name), "-o", out], 0)
            pc.expect(stdout.strip() == out, "stdout %r, expected the figure's name %r" % (stdout, out))
            check_figure(out)
        text = svg_text(os.path.join(tmp, name.replace(".json", ".svg")))
        doc = pc.load(name)
        pc.expect("%s %s" % (doc["module"], pattern) in text or pattern == "alltoall",
                  "%s: default legend missing in %r" % (name, text[:200]))
        print("%s: pdf svg png tex ok" % name)

    # the legend of the figures
    text = svg_text(os.path.join(tmp, "alltoall.svg"))
    for alg in pc.load("alltoall.json")["alltoall"]["algorithms"]:
        pc.expect(alg in text, "alltoall: no series %s" % alg)
    text = svg_text(os.path.join(tmp, "loggp.svg"))
    for word in ("o_s", "o_r", "T(s)", "fit", "breakpoints"):
        pc.expect(word in text, "loggp: %s missing from the figure" % word)
    text = svg_text(os.path.join(tmp, "plogp.svg"))
    for word in ("g(m)", "o_s(m)", "o_r(m)", "L(m)"):
        pc.expect(word in text, "plogp: %s missing from the figure" % word)
    text = svg_text(os.path.join(tmp, "overlap.svg"))
    for word in ("no overlap", "perfect overlap", "sender computes, 16 KiB", "receiver computes, 64 KiB",
                 "Computation (\u00b5s)", "Time per iteration (\u00b5s)"):
        pc.expect(word in text, "overlap: %s missing from the figure" % word)
    text = svg_text(os.path.join(tmp, "skew.svg"))
    for word in ("slope 0.87 [0.80, 0.94]", "Computation at the target (skew) (\u00b5s)"):
        pc.expect(word in text, "skew: %s missing from the figure" % word)
    text = svg_text(os.path.join(tmp, "pingpong-4.svg"))
    pc.expect("aggregate" in text, "pingpong with 4 ranks: no aggregate bandwidth series")
    for unit in ("(\u00b5s)", "(MB/s)", "(bytes)"):
        pc.expect(unit in text, "pingpong: unit %s missing from the axis labels" % unit)
    for name in ("bw", "bibw-4"):
        text = svg_text(os.path.join(tmp, name + ".svg"))
        for word in ("Bandwidth (MB/s)", "Message rate (messages/s)"):
            pc.expect(word in text, "%s: panel %s missing" % (name, word))
        pc.expect(("aggregate" in text) == (name == "bibw-4"), "%s: aggregate series wrong" % name)

    # a module's prediction beside the measurement (spipe's model), as time and as bandwidth
    text = svg_text(os.path.join(tmp, "spipe.svg"))
    pc.expect(text.count("model (dotted)") == 2, "spipe: no model line in both panels: %r" % text[:300])
    with open(os.path.join(tmp, "spipe.gp"), encoding="utf-8") as f:
        gp = f.read()
    pc.expect("(ypos($1, $1 / $" in gp, "spipe: the bandwidth panel does not draw size / predicted time")
    text = svg_text(os.path.join(tmp, "pingpong-2.svg"))
    pc.expect("model" not in text, "a model line without predictions")

    # several files of one pattern, labels in the order of the files, quoting
    label = "a<b & 'c' \"d\" 50% $_^~#{}\\"
    out = os.path.join(tmp, "both.svg")
    pc.expect_run([exe, "plot", pc.fixture("pingpong-2.json"), "--label", label, pc.fixture("pingpong-4.json"),
                   "-o", out], 0)
    check_figure(out)
    text = svg_text(out)
    pc.expect(label in text, "label %r not in the figure" % label)
    pc.expect("tcp pingpong" in text, "default label of the second file missing")
    out = os.path.join(tmp, "both.tex")
    pc.expect_run([exe, "plot", pc.fixture("pingpong-2.json"), pc.fixture("pingpong-4.json"), "--label", label,
                   "-o", out], 0)
    check_figure(out)
    with open(out, encoding="utf-8") as f:
        pc.expect("a<b \\& 'c' \"d\" 50\\% \\$\\_" in f.read(), "label not escaped for LaTeX in %s" % out)

    # default legends name what differs (the rank count), the title what the files share
    out = os.path.join(tmp, "uniq.svg")
    pc.expect_run([exe, "plot", pc.fixture("pingpong-2.json"), pc.fixture("pingpong-4.json"), "-o", out], 0)
    texts = svg_texts(out)
    pc.expect("2 ranks" in texts and "4 ranks" in texts and "tcp pingpong" in texts,
              "default legends not made of what differs: %r" % texts)

    # an oversubscribed run says so in the legend, with a label of its own or the default one
    over_path = pc.oversubscribed("n1.json", tmp)
    out = os.path.join(tmp, "over.svg")
    pc.expect_run([exe, "plot", over_path, pc.fixture("n1.json"), "-o", out], 0)
    text = svg_text(out)
    pc.expect(text.count("(oversubscribed)") >= 1, "no oversubscription mark in the legend: %r" % text[:300])
    pc.expect_run([exe, "plot", over_path, "--label", "mine", "-o", out], 0)
    pc.expect("mine (oversubscribed)" in svg_text(out), "user label of an oversubscribed run not marked")
    with open(os.path.join(tmp, "over.gp"), encoding="utf-8") as f:
        pc.expect("mine (oversubscribed)" in f.read(), "the script's legend is not marked")

    # several patterns: one figure each, OUT-PATTERN.EXT
    out = os.path.join(tmp, "mix.png")
    stdout, _ = pc.expect_run([exe, "plot", pc.fixture("loggp.json"), pc.fixture("pingpong-2.json"),
                               pc.fixture("plogp.json"), pc.fixture("pingpong-4.json"), "-o", out], 0)
    for p in ("loggp", "pingpong", "plogp"):
        check_figure(os.path.join(tmp, "mix-%s.png" % p))
    pc.expect(stdout.split() == [os.path.join(tmp, "mix-%s.png" % p) for p in ("loggp", "pingpong", "plogp")],
              "figures listed as %r" % stdout)
    pc.expect(not os.path.exists(out), "%s written besides the per-pattern figures" % out)

    # --kind
    for kind, name in (("latency", "pingpong-2.json"), ("bandwidth", "n1.json"), ("overhead", "loggp.json"),
                       ("latency", "plogp.json"), ("bandwidth", "alltoall.json"), ("auto", "1n.json"),
                       ("bandwidth", "bw.json")):
        out = os.path.join(tmp, "kind-%s-%s.svg" % (kind, name[:-5]))
        pc.expect_run([exe, "plot", "--kind", kind, pc.fixture(name), "-o", out], 0)
        check_figure(out)
    text = svg_text(os.path.join(tmp, "kind-latency-pingpong-2.svg"))
    pc.expect("Latency" in text and "Bandwidth" not in text, "--kind latency drew %r" % text[:300])
    text = svg_text(os.path.join(tmp, "kind-bandwidth-bw.svg"))
    pc.expect("Bandwidth" in text and "Message rate" in text, "--kind bandwidth drew %r for bw" % text[:300])
    pc.expect_run([exe, "plot", "--kind", "latency", pc.fixture("bw.json"), "-o", os.path.join(tmp, "x.svg")], 2)
    text = svg_text(os.path.join(tmp, "kind-overhead-loggp.svg"))
    pc.expect("o_s" in text and "T(s)" not in text, "--kind overhead drew %r" % text[:300])

    # --kind cdf and hist: the distribution per size from --raw samples or --histogram buckets, the run's
    # --percentiles marked; several files side by side, a panel each
    for name in pc.DIST_FIXTURES:
        doc = pc.load(name)
        marks = ["p" + q for q in doc["parameters"]["percentiles"].split(",")]
        for kind, ylabel in (("cdf", "Cumulative fraction"), ("hist", "Fraction of the samples")):
            stem = os.path.join(tmp, "dist-%s-%s" % (kind, name[:-5]))
            for ext in (".png", ".svg", ".pdf", ".tex"):
                stdout, _ = pc.expect_run([exe, "plot", "--kind", kind, pc.fixture(name), "-o", stem + ext], 0)
                pc.expect(stdout.strip() == stem + ext, "stdout %r" % stdout)
                check_figure(stem + ext)
            texts = svg_texts(stem + ".svg")
            for word in [ylabel, "latency (\u00b5s)", "size 1", "size 1K", "size 64K"] + marks:
                pc.expect(word in texts, "%s --kind %s: %r missing from the figure: %r" % (name, kind, word, texts))
            # the data: per size the distribution, then the percentiles as the file has them
            tables = read_tables(stem + ".dat")
            pc.expect(len(tables) == 4 * len(doc["results"]), "%s: %d tables" % (name, len(tables)))
            for r, row in enumerate(doc["results"]):
                dist, pct = tables[4 * r + (0 if kind == "cdf" else 2)], tables[4 * r + (1 if kind == "cdf" else 3)]
                ys = [float(t[1]) for t in dist]
                xs = [float(t[0]) for t in dist]
                pc.expect(xs == sorted(xs), "%s: size %d: values not ascending" % (name, row["size"]))
                if kind == "cdf":
                    pc.expect(ys == sorted(ys) and abs(ys[-1] - 1) < 1e-12,
                              "%s: size %d: not a CDF ending at 1" % (name, row["size"]))
                    if "raw" in row:
                        pc.expect(len(dist) == len(row["raw"]["latency_us"]), "%s: not every sample" % name)
                else:
                    pc.expect(abs(sum(ys) - 1) < 1e-9, "%s: size %d: fractions sum to %g"
                              % (name, row["size"], sum(ys)))
                pc.expect([t[2] for t in pct] == marks, "%s: percentiles %r" % (name, pct))
                for t in pct:
                    pc.expect(pc.same_number(t[0], row["latency_us"][t[2]]),
                              "%s: %s is %s, the file says %r" % (name, t[2], t[0], row["latency_us"][t[2]]))
    out = os.path.join(tmp, "dist-both.svg")
    pc.expect_run([exe, "plot", "--kind", "cdf"] + [pc.fixture(n) for n in pc.DIST_FIXTURES] +
                  ["--label", "raw", "--label", "buckets", "-o", out], 0)
    texts = svg_texts(out)
    pc.expect(texts.count("Cumulative fraction") == 2 and "raw" in texts and "buckets" in texts,
              "two files: not a panel each with its label: %r" % texts)
    # a file with neither: one line naming both options, exit 1 as the other files that cannot be drawn
    out = os.path.join(tmp, "dist-none.png")
    _, err = pc.expect_run([exe, "plot", "--kind", "cdf", pc.fixture("pingpong-2.json"), "-o", out], 1)
    lines = err.strip().splitlines()
    pc.expect(len(lines) == 1 and pc.fixture("pingpong-2.json") in lines[0] and "--raw" in lines[0]
              and "--histogram" in lines[0], "no-samples error: %r" % err)
    pc.expect(not os.path.exists(out), "a figure without samples was written")
    pc.expect_run([exe, "plot", "--kind", "cdfx", pc.fixture("pingpong-raw.json"), "-o", out], 2)

    # default output: FILE with .json replaced by .pdf, in FILE's directory
    local = os.path.join(tmp, "local")
    os.mkdir(local)
    shutil.copy(pc.fixture("n1.json"), os.path.join(local, "run.json"))
    pc.expect_run([exe, "plot", "run.json"], 0, cwd=local)
    check_figure(os.path.join(local, "run.pdf"))

    # the script redoes the figure in its own directory
    os.unlink(os.path.join(local, "run.pdf"))
    rc = os.system("cd '%s' && gnuplot run.gp" % local)
    pc.expect(rc == 0, "gnuplot run.gp failed")
    check_figure(os.path.join(local, "run.pdf"))


if __name__ == "__main__":
    pc.need_gnuplot()
    pc.main(body)
