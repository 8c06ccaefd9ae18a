#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`ngauge compare` against ground truth (doc/compare.md).

    test_compare.py NGAUGE

- emu over tcp with an injected o_s of 10 and 11 us (a pingpong's half round trip is o_s there): every size
  "slower", its interval holding the true ratio 1.1, the rank test's p-value small, exit 3;
- one run a side without --single-run: exit 2 and one line saying why (the rest runs with --single-run);
- a file compared with itself: "same" everywhere, ratio 1, exit 0; two runs with the same injection: exit 0;
- a planted 10% regression (every latency times 1.1): exit 3 at --threshold 5, from raw samples and, with the
  samples removed, from the reported intervals (the table says so); exit 0 at --threshold 20;
- what cannot be compared: exit 2 and one line naming the file (unreadable, another pattern, no common row);
- the manifests' differences are listed before the table; -o writes the JSON; --plot draws a PNG (checked);
- a 2-rank mpi run against a tcp run (when MPI is there): the figure is drawn and the report shows the ratios.
Exit 0 pass, 1 fail, 77 skipped (no gnuplot).
"""
import copy
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "schema"))
import validate  # noqa: E402

EXE = sys.argv[1]
FAILS = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILS.append(what)


def run(args, timeout=180):
    return subprocess.run([EXE] + args, capture_output=True, text=True, timeout=timeout)


def measure(path, args):
    p = run(args + ["-o", path])
    if p.returncode != 0:
        print(p.stderr)
        return False
    problems = validate.file_problems(path) if validate.available() else []
    check(not problems, "%s matches the schema %s" % (os.path.basename(path), problems[:3]))
    return True


def rows_of(table):
    return [l.split() for l in table.splitlines() if l and not l.startswith("#")]


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    gp = os.environ.get("NGAUGE_GNUPLOT") or shutil.which("gnuplot")
    if not gp:
        print("gnuplot not installed: skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="ngauge-compare.")
    try:
        return body(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def disturbed(a, b, a2):
    """The sizes whose medians the host's load decided rather than the injection: a and a2 (the same o_s) more
    than 2% apart, or b (o_s 1 us more) not 1 us (+-0.2) above a. Read from the files' rows, not from compare."""
    med = [{x["size"]: x["latency_us"]["median"] for x in json.load(open(f))["results"]} for f in (a, b, a2)]
    return [(s, round(med[0][s], 3), round(med[1][s], 3), round(med[2][s], 3)) for s in med[0]
            if abs(med[2][s] / med[0][s] - 1.0) > 0.02 or abs(med[1][s] - med[0][s] - 1.0) > 0.2]


def body(tmp):
    a, b, a2 = (os.path.join(tmp, n) for n in ("a.json", "b.json", "a2.json"))
    emu = ["-x", "emu", "-p", "pingpong", "-s", "1-4K", "-c", "200", "--raw", "--pin", "0,1"]
    # The three runs are the ground truth compare is judged against. On a loaded host a burst of load can
    # hold up most of one size's samples (seen at load 7 beside a CPU hog: a median of 90 us at 32 B, 10 us at
    # every other size): such a set of runs did not measure the injection, and is measured again (up to three
    # times in all; the last set is judged whatever it holds). Compare itself plays no part in the choice.
    for attempt in range(1, 4):
        if not (measure(a, emu + ["--emu-os", "10"]) and measure(b, emu + ["--emu-os", "11"]) and
                measure(a2, emu + ["--emu-os", "10"])):
            check(False, "the emu runs")
            return 1
        bad = disturbed(a, b, a2)
        if not bad:
            break
        print("note: attempt %d: the load decided these sizes' medians (size, o_s 10, 11, 10 again): %s%s"
              % (attempt, bad, "; measuring again" if attempt < 3 else ""))

    # one run a side: the variance between runs is unknown, so no verdict without --single-run or --calibrate
    p = run(["compare", a, b])
    err = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode == 2 and len(err) == 1 and "one run on a side" in err[0] and "--single-run" in err[0]
          and "--repeat" in err[0] and not p.stdout.strip(),
          "one run a side, no --single-run: exit 2, one line saying why, no table (%d) %r" % (p.returncode, p.stderr))

    # ground truth, one run a side (--single-run): o_s 10 -> 11 us
    out = os.path.join(tmp, "c.json")
    png = os.path.join(tmp, "c.png")
    p = run(["compare", a, b, "-o", out, "--plot", png, "--single-run"])
    check(p.returncode == 3, "o_s 10 vs 11: exit 3 (slower), got %d %s" % (p.returncode, p.stderr))
    c = json.load(open(out))
    rows = c["comparisons"][0]["rows"]
    check(len(rows) == 13 and all(r["verdict"] == "slower" for r in rows),
          "o_s 10 vs 11: every size slower: %s" % [(r["size"], r["verdict"]) for r in rows])
    # the truth per size: b's latency is a's plus the 1 us more of o_s, so the ratio is 1 + 1 / a's median
    # (1.1 only where the transport adds nothing to emu's 10 us: under the sanitizer a 4 KiB message adds
    # about 6 us, and the ratio is 1.06). The interval is the sampling interval of one pair of runs: what moves
    # between the two runs (the emu overshoots, measured anew in each run; the host's load while one size ran)
    # is outside it. On this shared host that drift moved single sizes by up to 1.5% (the sanitizer build at
    # load 8: intervals [1.096, 1.106] and [1.109, 1.119] around a truth of 1.1003), so each interval must come
    # within 2% of the truth, and the sizes' median ratio within 1%: a wrong ratio (1.0, 1.2, a swapped A/B)
    # fails both by far
    med_a = {x["size"]: x["latency_us"]["median"] for x in json.load(open(a))["results"]}
    truth = {r["size"]: 1.0 + 1.0 / med_a[r["size"]] for r in rows}
    check(all(r["ci95"][0] <= truth[r["size"]] * 1.02 and truth[r["size"]] / 1.02 <= r["ci95"][1] for r in rows),
          "o_s 10 vs 11: every interval within 2%% of the true ratio 1 + 1 us / a's median: %s"
          % [(r["size"], round(truth[r["size"]], 4), r["ci95"]) for r in rows])
    rel = sorted(r["ratio"] / truth[r["size"]] for r in rows)
    check(abs(rel[len(rel) // 2] - 1.0) <= 0.01,
          "o_s 10 vs 11: the sizes' median of ratio / true ratio within 1%% of 1: %.4f" % rel[len(rel) // 2])
    # (a 10% shift over these samples gives p near 1e-70 on a quiet host; at load 6 beside a hog one size gave
    # p above 1e-6: a rank test that works finds it below 1e-3, a broken one gives about 0.5 or 1)
    check(all(r["method"] == "bootstrap" and r["p_value"] < 1e-3 for r in rows),
          "bootstrap, rank test p < 1e-3: %s" % [(r["size"], r["p_value"]) for r in rows])
    check(c["metric"] == "latency_us" and c["slower"] is True and c["threshold_pct"] == 5, "the JSON's head")
    lines = p.stdout.splitlines()
    diff = [i for i, l in enumerate(lines) if l.startswith("#   differs: parameters.emu-os: 10")]
    head = [i for i, l in enumerate(lines) if "verdict" in l and l.startswith("#")]
    check(diff and head and diff[0] < head[0], "the manifests' differences (emu-os) come before the table")
    size = png_size(png)
    check(size is not None and size[0] == 1200 and size[1] > 300, "--plot draws a PNG 1200 pixels wide: %s" % (size,))
    check(os.path.exists(os.path.join(tmp, "c.gp")) and "first 1 to graph 1" in open(os.path.join(tmp, "c.gp")).read()
          and "rect from graph 0, first 0.952381 to graph 1, first 1.05" in open(os.path.join(tmp, "c.gp")).read(),
          "the figure has the 1.0 line and the threshold band")

    # the same file, and the same injection twice
    p = run(["compare", a, a, "--single-run"])
    t = rows_of(p.stdout)
    check(p.returncode == 0 and len(t) == 13 and all(r[-1] == "same" and r[4] == "1.0000" for r in t),
          "a file with itself: same everywhere, ratio 1, exit 0 (%d)" % p.returncode)
    p = run(["compare", a, a2, "--single-run"])
    check(p.returncode == 0 and all(r[-1] == "same" for r in rows_of(p.stdout)),
          "two runs with o_s 10: same everywhere, exit 0 (%d)\n%s" % (p.returncode, p.stdout))

    # a planted 10% regression
    doc = json.load(open(a))
    reg = copy.deepcopy(doc)
    for r in reg["results"]:
        for k in ("min", "median", "mean", "p99", "max"):
            r["latency_us"][k] *= 1.1
        r["latency_us"]["ci95"] = [x * 1.1 for x in r["latency_us"]["ci95"]]
        r["raw"]["latency_us"] = [x * 1.1 for x in r["raw"]["latency_us"]]
    planted = os.path.join(tmp, "planted.json")
    json.dump(reg, open(planted, "w"))
    p = run(["compare", a, planted, "--threshold", "5", "--single-run"])
    check(p.returncode == 3, "planted 10%% regression, raw samples: exit 3 at --threshold 5 (%d)" % p.returncode)
    p = run(["compare", a, planted, "--threshold", "20", "--single-run"])
    check(p.returncode == 0, "planted 10%% regression: exit 0 at --threshold 20 (%d)" % p.returncode)
    for d in (doc, reg):
        for r in d["results"]:
            del r["raw"]
        d["parameters"]["raw"] = False
    a_noraw, p_noraw = os.path.join(tmp, "a-noraw.json"), os.path.join(tmp, "p-noraw.json")
    json.dump(doc, open(a_noraw, "w"))
    json.dump(reg, open(p_noraw, "w"))
    p = run(["compare", a_noraw, p_noraw, "--threshold", "5", "--single-run"])
    check(p.returncode == 3 and "from the files' reported intervals" in p.stdout,
          "planted 10%% regression, no samples: exit 3, intervals from the reported ones, said (%d)" % p.returncode)

    # what cannot be compared
    bad = os.path.join(tmp, "bad.json")
    open(bad, "w").write('{"schema": "ngauge-result/1", "pattern": ')
    p = run(["compare", a, bad])
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "bad.json" in p.stderr,
          "a truncated file: exit 2, one line naming it: %r" % p.stderr)
    p = run(["compare", a, os.path.join(tmp, "missing.json")])
    check(p.returncode == 2 and "missing.json" in p.stderr, "a missing file: exit 2")
    other = copy.deepcopy(json.load(open(a)))
    other["pattern"] = "bw"
    json.dump(other, open(os.path.join(tmp, "other.json"), "w"))
    p = run(["compare", a, os.path.join(tmp, "other.json"), "--single-run"])
    check(p.returncode == 2 and "pattern" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          "another pattern: exit 2, one line: %r" % p.stderr)
    disjoint = copy.deepcopy(json.load(open(a)))
    for r in disjoint["results"]:
        r["size"] += 1000000
    json.dump(disjoint, open(os.path.join(tmp, "disjoint.json"), "w"))
    p = run(["compare", a, os.path.join(tmp, "disjoint.json"), "--single-run"])
    check(p.returncode == 2 and "no row in common" in p.stderr, "no row in common: exit 2: %r" % p.stderr)
    p = run(["compare", a])
    check(p.returncode == 2, "one file: usage, exit 2")
    p = run(["compare", a, b, "--threshold", "x"])
    check(p.returncode == 2 and "--threshold" in p.stderr, "a bad --threshold: exit 2")

    # untrusted input: mutated files against a, no crash, exit 0, 2 or 3, one line on stderr when 2
    base = json.load(open(a))
    mutations = []
    for k in ("median", "ci95", "raw", "size", "test", "latency_us"):
        for v in (None, "x\ny<script>", -1, 0, 1e308, [], {}, [1, "a"], [float("nan")] if k == "raw" else [0, -1]):
            d = copy.deepcopy(base)
            row = d["results"][len(d["results"]) // 2]
            if k in ("median", "ci95"):
                row["latency_us"][k] = v
            elif k == "raw":
                row["raw"]["latency_us"] = v
            else:
                row[k] = v
            mutations.append(("%s=%r" % (k, v), d))
    d = copy.deepcopy(base)
    d["env"]["kernel"] = "Linux\n\x1b[31m6.8"
    mutations.append(("kernel with control characters", d))
    bad_runs = []
    for i, (what, d) in enumerate(mutations):
        path = os.path.join(tmp, "m%d.json" % i)
        with open(path, "w") as f:
            f.write(json.dumps(d).replace("NaN", "null") if i % 2 else json.dumps(d))
        p = run(["compare", a, path, "--single-run"])
        err = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode not in (0, 2, 3) or (p.returncode == 2 and len(err) != 1) or \
                any("\x1b" in l for l in p.stdout.splitlines()):
            bad_runs.append("%s: exit %d, stderr %r" % (what, p.returncode, p.stderr[:200]))
    check(not bad_runs, "%d mutated files compared: exit 0, 2 or 3, one line when refused, no control "
          "characters in the table %s" % (len(mutations), bad_runs[:3]))

    # a 2-rank mpi run against a tcp run: the figure and the report
    if shutil.which("mpiexec") and " mpi " in run(["--list"]).stdout:
        m, t = os.path.join(tmp, "mpi.json"), os.path.join(tmp, "tcp.json")
        if measure(t, ["-x", "tcp", "-s", "1-64K", "-c", "100"]) and measure(m, ["-x", "mpi", "-s", "1-64K", "-c", "100"]):
            mpng = os.path.join(tmp, "mt.png")
            p = run(["compare", t, m, "--plot", mpng, "--single-run"])
            check(p.returncode in (0, 3) and "differs: module: tcp vs mpi" in p.stdout,
                  "tcp vs mpi: compared, the modules' difference listed (%d)" % p.returncode)
            size = png_size(mpng)
            check(size is not None and size[0] == 1200, "tcp vs mpi: PNG drawn %s" % (size,))
            html = os.path.join(tmp, "r.html")
            p = run(["report", t, m, "-o", html])
            page = open(html).read() if os.path.exists(html) else ""
            check(p.returncode == 0 and "Ratios against the first file" in page and page.count("<svg") >= 4,
                  "report of tcp and mpi: the ratios' section and its figure")
    else:
        print("note: no mpiexec or no mpi module: the mpi-vs-tcp comparison not run")
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
