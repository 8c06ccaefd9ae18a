#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bad input and a missing gnuplot give one clear line and the right status.

- wrong schema, truncated JSON, invalid JSON, a missing file, a directory,
  a document without results: exit 1, one line on stderr naming the file,
  nothing written (plot and report alike);
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
