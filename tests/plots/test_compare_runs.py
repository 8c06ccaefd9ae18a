#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Comparisons over several runs (doc/compare.md): --repeat, compare with sides, --calibrate, ngauge ab.

    test_compare_runs.py NGAUGE

On synthetic files (a fixed generator: no timing involved):
- runs that differ by known offsets (A's run levels 10.0, 10.6, 9.7; B's 10.7, 9.8, 10.2, samples 0.3% apart
  within a run): the first runs alone, with --single-run, read "slower" (B1/A1 = 1.07) with an interval that
  excludes 1; the three runs a side (A1 A2 A3 -- B1 B2 B3) give "same", an interval that holds 1 and is wider,
  the median of the runs' ratios (Hodges-Lehmann), "hierarchical", runs 3 and 3, exit 0;
- the same runs as two --repeat files give the same rows as the six files, and the same input twice the same
  output (fixed seed);
- runs 1.5% apart against the same levels times 1.1 (a planted 10% slowdown): "slower" at every size, the
  interval holding 1.1, exit 3;
- one run a side is refused (exit 2, one line) unless --single-run or --calibrate; --calibrate with a file of runs
  4% apart widens the interval (its "widened" factor above 1) and turns the 7% difference of one run a side into
  "same"; a --calibrate file of one run is refused;
- bad sides ('--' first, an empty side): exit 2, one line.
With real runs (tcp and emu over tcp; a few seconds):
- --repeat 3: the file has 3 blocks numbered 1..3, each complete with the rows of every size, "between_runs" per
  size with the 3 blocks' medians, the top level's results the first block's, parameters.repeat 3, the schema;
  --repeat with -o x.csv or --client: exit 2, one line;
- ngauge ab --rounds 3 of emu with o_s 20 against 22 us (the injected floor is the half round trip, so the runs
  hardly move): the order A B B A A B recorded in the JSON and said on stdout, the kept files written in that
  order, every size "slower" with the interval within 2% of the true ratio 1 + 2 us / A's median, exit 3.
Exit 0 pass, 1 fail.
"""
import copy
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "schema"))
import validate  # noqa: E402

EXE = sys.argv[1]
FAILS = []
SIZES = [1, 4096, 65536]


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILS.append(what)


def run(args, timeout=300):
    return subprocess.run([EXE] + args, capture_output=True, text=True, timeout=timeout)


def stats(x):
    s = sorted(x)
    n = len(s)
    med = (s[n // 2] + s[(n - 1) // 2]) / 2.0
    mean = sum(s) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in s) / (n - 1))
    lo, hi = s[int(n / 2 - 1.96 * math.sqrt(n) / 2)], s[int(n / 2 + 1.96 * math.sqrt(n) / 2)]
    return {"min": s[0], "median": med, "mean": mean, "stddev": sd, "p99": s[int(0.99 * (n - 1))], "max": s[-1],
            "ci95": [lo, hi]}


def rows(level, rng, factor=1.0, n=400):
    """Pingpong rows whose latency is level (times 1, 1.3, 3 by size) with samples 0.3% apart."""
    out = []
    for k, size in enumerate(SIZES):
        base = level * (1.0, 1.3, 3.0)[k] * factor
        x = [base * math.exp(rng.gauss(0.0, 0.003)) for _ in range(n)]
        out.append({"size": size, "count": n, "latency_us": stats(x),
                    "bandwidth_MBps": stats([size / v for v in x]), "raw": {"latency_us": x}})
    return out


def doc(results, template):
    d = copy.deepcopy(template)
    d["results"] = results
    d["parameters"]["raw"] = True
    return d


def write(path, d):
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def repeat_doc(template, blocks):
    d = doc(blocks[0], template)
    d["repeat"] = {"runs": len(blocks), "completed": len(blocks), "how": "launch",
                   "blocks": [{"run": i + 1, "started": d["started"], "complete": True, "results": b}
                              for i, b in enumerate(blocks)],
                   "between_runs": []}
    return d


def compare_json(args, out):
    p = run(["compare"] + args + ["-o", out])
    c = json.load(open(out)) if os.path.exists(out) and p.returncode in (0, 3) else None
    if os.path.exists(out):
        os.unlink(out)
    return p, c


def synthetic(tmp, template):
    rng = random.Random(1)
    la, lb = [10.0, 10.6, 9.7], [10.7, 9.8, 10.2]
    ra = [rows(v, rng) for v in la]
    rb = [rows(v, rng) for v in lb]
    fa = [write(os.path.join(tmp, "a%d.json" % i), doc(r, template)) for i, r in enumerate(ra)]
    fb = [write(os.path.join(tmp, "b%d.json" % i), doc(r, template)) for i, r in enumerate(rb)]
    out = os.path.join(tmp, "c.json")

    p, c = compare_json([fa[0], fb[0], "--single-run"], out)
    one = c["comparisons"][0]["rows"] if c else []
    check(p.returncode == 3 and len(one) == 3 and all(r["verdict"] == "slower" and r["ci95"][0] > 1.0 for r in one),
          "runs 7%% apart, the first runs alone (--single-run): slower, intervals above 1, exit 3 (%d) %s"
          % (p.returncode, [(r["ratio"], r["ci95"]) for r in one]))

    p, c = compare_json(fa + ["--"] + fb, out)
    many = c["comparisons"][0]["rows"] if c else []
    pairs = sorted(y / x for x in la for y in lb)
    hl = pairs[len(pairs) // 2]  # Hodges-Lehmann: the median of the 9 ratios of B's runs to A's
    check(p.returncode == 0 and len(many) == 3 and all(r["verdict"] == "same" for r in many),
          "three runs a side, levels apart by known offsets: same at every size, exit 0 (%d) %s"
          % (p.returncode, [(r["ratio"], r["ci95"], r["verdict"]) for r in many]))
    check(all(r["method"] == "hierarchical" and r["runs_a"] == 3 and r["runs_b"] == 3 and r["p_value"] is None
              for r in many), "three runs a side: hierarchical, runs 3 and 3, no p-value")
    check(all(r["ci95"][0] < 1.0 < r["ci95"][1] and abs(r["ratio"] / hl - 1) < 0.003 for r in many),
          "three runs a side: the interval holds 1, the ratio is the median of the runs' ratios %.4f: %s"
          % (hl, [(round(r["ratio"], 4), r["ci95"]) for r in many]))
    check(all(m["ci95"][1] / m["ci95"][0] > 3 * (o["ci95"][1] / o["ci95"][0] - 1) + 1 for m, o in zip(many, one)),
          "three runs a side: the interval is several times wider than one run's")
    check(all(abs(r["between_pct_a"] - 100 * statistics_sd([math.log(v) for v in la])) < 0.3 for r in many),
          "the spread between A's runs is the sd of their log levels (%.2f%%): %s"
          % (100 * statistics_sd([math.log(v) for v in la]), [r["between_pct_a"] for r in many]))

    # the same runs as --repeat files, and the same input twice
    rpa = write(os.path.join(tmp, "ra.json"), repeat_doc(template, ra))
    rpb = write(os.path.join(tmp, "rb.json"), repeat_doc(template, rb))
    p2, c2 = compare_json([rpa, rpb], out)
    rep = c2["comparisons"][0]["rows"] if c2 else []
    check(p2.returncode == 0 and [(r["ratio"], r["ci95"]) for r in rep] == [(r["ratio"], r["ci95"]) for r in many],
          "two --repeat files of the same runs: the same rows as the six files")
    p3, c3 = compare_json(fa + ["--"] + fb, out)
    check(c3 is not None and c3["comparisons"][0]["rows"] == many, "the same input twice: the same output")
    p4 = run(["compare", rpa, fb[0]])
    check(p4.returncode == 2 and "one run on a side" in p4.stderr,
          "runs on one side only, one on the other: refused without --single-run (%d)" % p4.returncode)

    # a planted 10% slowdown, over runs 1.5% apart (over A's 4.5%, three runs a side cannot tell 10%: the interval
    # spans [0.94, 1.29], as it should)
    lc = [10.0, 10.3, 9.9]
    fc = [write(os.path.join(tmp, "q%d.json" % i), doc(rows(v, rng), template)) for i, v in enumerate(lc)]
    fp = [write(os.path.join(tmp, "p%d.json" % i), doc(rows(v, rng, 1.1), template)) for i, v in enumerate(lc[::-1])]
    p, c = compare_json(fc + ["--"] + fp, out)
    pl = c["comparisons"][0]["rows"] if c else []
    check(p.returncode == 3 and len(pl) == 3 and all(r["verdict"] == "slower" and r["ci95"][0] <= 1.1 <= r["ci95"][1]
                                                     for r in pl),
          "runs slowed by 10%%: slower at every size, the interval holding 1.1, exit 3 (%d) %s"
          % (p.returncode, [(round(r["ratio"], 4), r["ci95"]) for r in pl]))

    # --calibrate: a file of runs 4% apart widens one run a side
    rc = random.Random(2)
    cal = write(os.path.join(tmp, "cal.json"), repeat_doc(template, [rows(v, rc) for v in (10.0, 10.4, 9.6, 10.2, 9.8)]))
    p, c = compare_json([fa[0], fb[0], "--calibrate", cal], out)
    cr = c["comparisons"][0]["rows"] if c else []
    check(p.returncode == 0 and len(cr) == 3 and all(r["verdict"] == "same" and r["widened"] > 1.5 and
                                                     r["ci95"][0] < 1.0 for r in cr)
          and c["calibration"]["runs"] == 5 and "widened by the spread between the 5 runs" in p.stdout,
          "one run a side with --calibrate (runs 4%% apart): same, widened, said, exit 0 (%d) %s"
          % (p.returncode, [(r["ci95"], r["widened"]) for r in cr]))
    p = run(["compare", fa[0], fb[0], "--calibrate", fa[1]])
    check(p.returncode == 2 and "--calibrate" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          "--calibrate with a file of one run: exit 2, one line: %r" % p.stderr)
    for bad in ([fa[0], "--", "--", fb[0]], ["--", fa[0], fb[0]], [fa[0], fa[1], "--"]):
        p = run(["compare"] + bad)
        check(p.returncode == 2 and len(p.stderr.strip().splitlines()) >= 1 and "compare:" in p.stderr,
              "bad sides %s: exit 2" % [os.path.basename(x) for x in bad])


def statistics_sd(x):
    m = sum(x) / len(x)
    return math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1))


def real(tmp):
    r3 = os.path.join(tmp, "r3.json")
    p = run(["-x", "tcp", "-s", "1,4K", "-c", "100", "-w", "10", "--repeat", "3", "-o", r3])
    check(p.returncode == 0 and p.stdout.count("# run ") == 3 and "# between runs: 3 runs" in p.stdout,
          "--repeat 3: three runs said, the spread table (%d) %s" % (p.returncode, p.stderr[-300:]))
    d = json.load(open(r3)) if os.path.exists(r3) else {}
    rp = d.get("repeat", {})
    blocks = rp.get("blocks", [])
    check(rp.get("runs") == 3 and rp.get("completed") == 3 and rp.get("how") == "launch" and
          [b["run"] for b in blocks] == [1, 2, 3] and all(b["complete"] and [x["size"] for x in b["results"]] == [1, 4096]
                                                          for b in blocks),
          "--repeat 3: blocks 1, 2, 3, each complete with both sizes")
    br = rp.get("between_runs", [])
    check([e["size"] for e in br] == [1, 4096] and all(
        e["key"] == "latency_us" and e["runs"] == 3 and
        e["medians"] == [b["results"][k]["latency_us"]["median"] for b in blocks] and
        e["min"] <= e["median"] <= e["max"] and e["within_ci_pct"] > 0 for k, e in enumerate(br)),
        "--repeat 3: between_runs per size with the blocks' medians")
    check(d.get("results") == blocks[0]["results"] if blocks else False, "--repeat 3: the top level's rows are run 1's")
    check(d.get("parameters", {}).get("repeat") == 3 and "--repeat 3" in d.get("command", "") and d.get("complete") is True
          and d.get("parameters", {}).get("output") == r3, "--repeat 3: parameters.repeat, output, command, complete")
    if validate.available():
        problems = validate.file_problems(r3)
        check(not problems, "--repeat 3: the file matches the schema %s" % problems[:3])
    p = run(["-x", "tcp", "-s", "1", "-c", "10", "--repeat", "2", "-o", os.path.join(tmp, "x.csv")])
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and ".json" in p.stderr,
          "--repeat with -o x.csv: exit 2, one line: %r" % p.stderr)
    p = run(["-x", "tcp", "-s", "1", "-c", "10", "--repeat", "2", "--client", "127.0.0.1", "--port", "1"])
    check(p.returncode == 2 and "--repeat" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          "--repeat with --client: exit 2, one line: %r" % p.stderr)

    # ab: alternation and a planted difference the runs cannot hide. The emu runs measure busy-waits: a host that
    # takes a rank's core for part of a run moves that run's medians by far more than the 10% planted (seen under
    # the sanitizer beside other work: a size drifting by 61% of its median, an interval [0.50, 1.11]). The order
    # is checked on every attempt; the planted difference is found in one of up to three attempts, each printed.
    emu = ["-x", "emu", "-p", "pingpong", "-s", "1,4K", "-c", "300", "--pin", "0,1"]
    for attempt in range(3):
        keep, out = os.path.join(tmp, "ab%d" % attempt), os.path.join(tmp, "ab%d.json" % attempt)
        p = run(["ab", "--rounds", "3", "--keep", keep, "-o", out, "--"] + emu + ["--emu-os", "20", "--"] + emu +
                ["--emu-os", "22"])
        c = json.load(open(out)) if os.path.exists(out) else {}
        order = c.get("ab", {}).get("order")
        check(order == ["A", "B", "B", "A", "A", "B"] and "runs in the order A B B A A B" in p.stdout,
              "ab --rounds 3: the order A B B A A B recorded and said: %s" % order)
        names = ["a-1", "b-1", "b-2", "a-2", "a-3", "b-3"]
        times = [os.stat(os.path.join(keep, n + ".json")).st_mtime_ns
                 if os.path.exists(os.path.join(keep, n + ".json")) else 0 for n in names]
        check(all(times) and times == sorted(times), "ab --rounds 3: the kept files were written in that order")
        rows_ = c.get("comparisons", [{}])[0].get("rows", [])
        med_a = [math.exp(sum(math.log(json.load(open(os.path.join(keep, "a-%d.json" % k)))["results"][i]
                                       ["latency_us"]["median"]) for k in (1, 2, 3)) / 3)
                 for i in range(2)] if all(times) else [1, 1]
        truth = [1.0 + 2.0 / m for m in med_a]
        found = p.returncode == 3 and len(rows_) == 2 and all(
            r["verdict"] == "slower" and r["method"] == "hierarchical" and r["runs_a"] == 3 and r["runs_b"] == 3 and
            r["ci95"][0] <= t * 1.02 and t / 1.02 <= r["ci95"][1] for r, t in zip(rows_, truth))
        what = ("ab emu o_s 20 vs 22: slower at every size, intervals within 2%% of the true ratio %s, exit 3 (%d): "
                "%s %s" % ([round(t, 4) for t in truth], p.returncode,
                           [(round(r["ratio"], 4), r["ci95"]) for r in rows_], p.stderr[-300:]))
        if found or attempt == 2:
            check(found, what + (" (attempt %d of 3)" % (attempt + 1)))
            break
        print("note: attempt %d: %s" % (attempt + 1, what))
    p = run(["ab", "--", "-x", "tcp", "-o", "x.json", "--", "-x", "tcp"])
    check(p.returncode == 2 and "-o" in p.stderr, "ab with -o in a side: exit 2 (%d)" % p.returncode)
    p = run(["ab", "--rounds", "2", "--", "-x", "tcp"])
    check(p.returncode == 2 and "two command lines" in p.stderr, "ab with one command line: exit 2 (%d)" % p.returncode)


def main():
    tmp = tempfile.mkdtemp(prefix="ngauge-compare-runs.")
    try:
        template = os.path.join(tmp, "t.json")
        p = run(["-x", "tcp", "-s", "1,4K,64K", "-c", "20", "-w", "2", "-o", template])
        if p.returncode != 0:
            check(False, "a tcp run for the files' head: %s" % p.stderr)
            return 1
        synthetic(tmp, json.load(open(template)))
        real(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
