#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bad input and a missing gnuplot give one clear line and the right status.

- wrong schema, truncated JSON, invalid JSON, a missing file, a directory,
  a document without results: exit 1, one line on stderr naming the file,
  nothing written (plot and report alike);
- a valid file with nothing to draw (no values, no block its figure needs,
  no rows naming rma's tests): plot and report both exit 1 with one line
  naming it and why ("plot: ...", "report: ..."); plot writes nothing, report
  writes its page with the other files and says in it what was left out;
- report -o r.pdf without Chromium: exit 1, one line, nothing written;
- usage errors: exit 2;
- no gnuplot (PATH without it and NGAUGE_GNUPLOT naming a file that does
  not exist): plot exits 1 with "gnuplot not found: install the Debian
  package gnuplot-nox"; report still writes its page, without figures.
Needs no gnuplot.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

NOT_FOUND = "gnuplot not found: install the Debian package gnuplot-nox"


def one_line_naming(err, path, what):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    pc.expect(len(lines) == 1, "%s: %d lines on stderr, expected one: %r" % (what, len(lines), err))
    pc.expect(path in lines[0], "%s: the message does not name %s: %r" % (what, path, err))
    pc.expect(lines[0].startswith("ngauge: "), "%s: message without the ngauge prefix: %r" % (what, err))
    return lines[0]


def body(exe, tmp):
    bad = {}
    bad["wrong-schema.json"] = pc.fixture("wrong-schema.json")
    bad["truncated.json"] = pc.fixture("truncated.json")
    bad["missing.json"] = os.path.join(tmp, "missing.json")
    bad["directory"] = tmp
    for name, text in (("not-json.json", "schema: ngauge-result/1\n"), ("empty.json", ""),
                       ("array.json", "[1, 2]\n"), ("trailing.json", '{"schema": "ngauge-result/1"} x\n'),
                       ("no-results.json", json.dumps({"schema": "ngauge-result/1", "pattern": "pingpong"})),
                       ("empty-results.json", json.dumps({"schema": "ngauge-result/1", "pattern": "pingpong",
                                                          "results": []})),
                       ("bad-row.json", json.dumps({"schema": "ngauge-result/1", "pattern": "pingpong",
                                                    "results": [{"size": "big"}]})),
                       ("loggp-no-block.json", json.dumps({"schema": "ngauge-result/1", "pattern": "loggp",
                                                           "complete": False,
                                                           "results": [{"size": 1, "count": 1}]}))):
        bad[name] = os.path.join(tmp, name)
        with open(bad[name], "w") as f:
            f.write(text)
    good = pc.fixture("pingpong-2.json")

    for name, path in bad.items():
        for cmd, out in (("plot", os.path.join(tmp, "out.pdf")), ("report", os.path.join(tmp, "out.html"))):
            if cmd == "report" and name == "loggp-no-block.json":
                continue  # a report shows whatever the file holds
            # the bad file after a good one: nothing may be written
            _, err = pc.expect_run([exe, cmd, good, path, "-o", out], 1)
            line = one_line_naming(err, path, "%s %s" % (cmd, name))
            left = [f for f in os.listdir(tmp) if f.startswith("out")]
            pc.expect(not left, "%s %s left %r behind" % (cmd, name, left))
        print("%s: %s" % (name, line))
    _, err = pc.expect_run([exe, "plot", bad["wrong-schema.json"]], 1)
    pc.expect("ngauge-result/0" in err and "ngauge-result/1" in err, "schema message: %r" % err)
    _, err = pc.expect_run([exe, "plot", bad["truncated.json"]], 1)
    pc.expect("truncated" in err, "truncation not named as such: %r" % err)

    # a result file with nothing to draw (every value null, no block, no test named): plot and report
    # agree, exit 1 and one line naming the file and why (report's starting "report:"); plot writes
    # nothing, report writes its page, the good file's figure in it, and says in it what was left out
    nothing = pc.load("pingpong-2.json")
    for row in nothing["results"]:
        row["latency_us"] = None
        row["bandwidth_MBps"] = None
    notest = pc.load("rma-a.json")
    for row in notest["results"]:
        del row["test"]
    undrawable = {"no-values.json": (nothing, "nothing to draw"), "no-test.json": (notest, "no row names its test")}
    for name, (doc, why) in undrawable.items():
        bad[name] = os.path.join(tmp, name)
        with open(bad[name], "w") as f:
            json.dump(doc, f)
    undrawable["loggp-no-block.json"] = (None, "no \"loggp\" block")
    for name, (_, why) in undrawable.items():
        path = bad[name]
        _, err = pc.expect_run([exe, "plot", good, path, "-o", os.path.join(tmp, "out.pdf")], 1)
        line = one_line_naming(err, path, "plot %s" % name)
        pc.expect(line.startswith("ngauge: plot: ") and why in line, "plot %s: %r" % (name, line))
        left = [f for f in os.listdir(tmp) if f.startswith("out")]
        pc.expect(not left, "plot %s left %r behind" % (name, left))
        page = os.path.join(tmp, "page.html")
        out, err = pc.expect_run([exe, "report", good, path, "-o", page], 1)
        line = one_line_naming(err, path, "report %s" % name)
        pc.expect(line.startswith("ngauge: report: ") and why in line, "report %s: %r" % (name, line))
        pc.expect(out.strip() == page, "report %s: the page is not listed: %r" % (name, out))
        with open(page, encoding="utf-8") as f:
            text = f.read()
        pc.expect(text.count("<svg") >= 1 and "Figure left out: " in text and why.replace('"', "&quot;") in text,
                  "report %s: the page does not say what was left out" % name)
        os.unlink(page)
        print("%s: %s" % (name, line))

    # a PDF report is printed by Chromium: without it, one line and nothing written
    env = pc.clean_env(NGAUGE_CHROMIUM=os.path.join(tmp, "no", "chromium"))
    _, err = pc.expect_run([exe, "report", good, "-o", os.path.join(tmp, "r.pdf")], 1, env=env)
    line = one_line_naming(err, os.path.join(tmp, "r.pdf"), "report -o r.pdf without Chromium")
    pc.expect(line.startswith("ngauge: report: ") and "Chromium" in line, "report -o r.pdf: %r" % line)
    pc.expect(not [f for f in os.listdir(tmp) if f.startswith("r.pdf")], "report -o r.pdf wrote something")

    # usage errors
    usage = (
        [],
        ["--bogus", good],
        [good, "-o"],
        [good, "-o", os.path.join(tmp, "x.jpeg")],
        [good, "--kind", "sideways"],
        ["--kind", "bandwidth", pc.fixture("plogp.json"), "-o", os.path.join(tmp, "k.pdf")],
        ["--kind", "overhead", pc.fixture("pingpong-2.json"), "-o", os.path.join(tmp, "k.pdf")],
        [good, "--label", "a", "--label", "b", "-o", os.path.join(tmp, "k.pdf")],
    )
    for args in usage:
        _, err = pc.expect_run([exe, "plot"] + args, 2)
        pc.expect(err.strip(), "plot %r: no message" % args)
    for args in ([], ["--bogus", good], [good, "-o"]):
        pc.expect_run([exe, "report"] + args, 2)
    out, _ = pc.expect_run([exe, "plot", "--help"], 0)
    pc.expect("usage: ngauge plot" in out, "plot --help: %r" % out)
    out, _ = pc.expect_run([exe, "report", "-h"], 0)
    pc.expect("usage: ngauge report" in out, "report -h: %r" % out)
    left = [f for f in os.listdir(tmp) if f.startswith(("k.", "k-", "x."))]
    pc.expect(not left, "usage errors left %r behind" % left)

    # no gnuplot: the PATH has none and NGAUGE_GNUPLOT names nothing
    env = pc.clean_env(PATH=os.path.join(tmp, "empty-bin"), NGAUGE_GNUPLOT=os.path.join(tmp, "no", "gnuplot"))
    out = os.path.join(tmp, "ng.pdf")
    _, err = pc.expect_run([exe, "plot", good, "-o", out], 1, env=env)
    pc.expect(NOT_FOUND in err, "missing gnuplot: %r" % err)
    pc.expect(len(err.strip().splitlines()) == 1, "missing gnuplot: more than one line: %r" % err)
    pc.expect(os.path.getsize(os.path.join(tmp, "ng.gp")) > 0, "no script written without gnuplot")
    pc.expect(not os.path.exists(out), "a figure without gnuplot?")
    # NGAUGE_GNUPLOT naming something that is not gnuplot: gnuplot "fails"
    env = pc.clean_env(NGAUGE_GNUPLOT="/bin/false")
    if os.access("/bin/false", os.X_OK):
        _, err = pc.expect_run([exe, "plot", good, "-o", out], 1, env=env)
        pc.expect("gnuplot failed" in err and "ng.gp" in err, "failing gnuplot: %r" % err)
    # the report is still written, without figures, with a warning
    env = pc.clean_env(PATH=os.path.join(tmp, "empty-bin"), NGAUGE_GNUPLOT=os.path.join(tmp, "no", "gnuplot"))
    html = os.path.join(tmp, "ng.html")
    _, err = pc.expect_run([exe, "report", good, "-o", html], 0, env=env)
    pc.expect(NOT_FOUND in err, "report without gnuplot: no warning: %r" % err)
    with open(html, encoding="utf-8") as f:
        text = f.read()
    pc.expect("<svg" not in text and "gnuplot was not found" in text, "report without gnuplot: %r" % text[:300])


if __name__ == "__main__":
    pc.main(body)
