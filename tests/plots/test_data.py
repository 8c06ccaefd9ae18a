#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The data files of `ngauge plot` hold exactly the numbers of the JSON.

Each column is checked against the document through its name alone
(KEY, KEY_median, KEY_value, KEY_ci95_lo, KEY_ci95_hi), so the test does not
repeat the plotter's tables.  Runs without gnuplot too: the data and the
script are written before gnuplot is looked for.
"""
import math
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

# columns each pattern's first table must have (more are allowed)
MUST = {
    "pingpong": ["size", "count", "latency_us_median", "latency_us_ci95_lo", "latency_us_ci95_hi",
                 "bandwidth_MBps_median", "bandwidth_MBps_ci95_lo", "bandwidth_MBps_ci95_hi"],
    "n1": ["size", "time_us_median", "time_us_ci95_lo", "time_us_ci95_hi", "aggregate_bandwidth_MBps_median"],
    "1n": ["size", "time_us_median", "time_us_ci95_lo", "time_us_ci95_hi", "aggregate_bandwidth_MBps_median"],
    "loggp": ["size", "T_us", "o_s_us", "o_r_us"],
    "plogp": ["size", "g_us_value", "g_us_ci95_lo", "g_us_ci95_hi", "o_s_us_value", "o_r_us_value",
              "L_us_value", "L_us_ci95_lo", "L_us_ci95_hi"],
    "alltoall": ["size", "time_us_median", "time_us_ci95_lo", "time_us_ci95_hi", "algbw_MBps_median"],
    "bw": ["size", "count", "bandwidth_MBps_median", "bandwidth_MBps_ci95_lo", "bandwidth_MBps_ci95_hi",
           "messages_per_s_median", "messages_per_s_ci95_lo", "messages_per_s_ci95_hi"],
    "bibw": ["size", "bandwidth_MBps_median", "messages_per_s_median", "aggregate_bandwidth_MBps",
             "aggregate_messages_per_s"],
    "custom": ["size", "put_latency_us_median", "put_latency_us_ci95_lo", "put_latency_us_ci95_hi"],
    "overlap": ["compute_measured_us_median", "time_us_median", "time_us_ci95_lo", "time_us_ci95_hi", "compute_us",
                "overlap_ratio", "overlap_ratio_lo", "overlap_ratio_hi", "overlap_bound", "size"],
    "skew": ["skew_measured_us_median", "time_us_median", "time_us_ci95_lo", "time_us_ci95_hi", "skew_us", "size"],
    "ebb": ["center_MBps", "count", "lo_MBps", "hi_MBps"],
    "noise": ["t_ms", "len_us"],
    "congestion": ["position", "percentile", "isolated", "congested"],
    "matrix": ["from", "to", "latency_us_median", "latency_us_ci95_lo", "latency_us_ci95_hi"],
}

# the tables each pattern's data file must have, in this order
TABLES = {
    "loggp": ["loggp.sizes", "loggp.segments", "loggp.breakpoints"],
    "plogp": ["plogp.sizes"],
    "alltoall": ["bruck", "pairwise", "isend"],
    "overlap": ["size 16384, side sender", "size 16384, side receiver", "size 65536, side sender",
                "size 65536, side receiver"],
    "skew": ["size 65536"],
    "ebb": ["ebb.histogram", "results"],
    "noise": ["rank 0 trace", "rank 0 histogram", "rank 1 trace", "rank 1 histogram"],
    "congestion": ["lat distribution", "lat impact", "bw distribution", "bw impact"],
    "matrix": ["matrix latency_us, size 1", "matrix bandwidth_MBps, size 262144", "outliers latency_us, size 1",
               "outliers bandwidth_MBps, size 262144"],
}


def source_rows(doc, table):
    """The JSON objects a table was made from."""
    name = table["name"]
    if name == "results":
        return doc["results"]
    if name in ("loggp.sizes", "loggp.segments", "plogp.sizes"):
        block, key = name.split(".")
        return doc[block][key]
    if name == "ebb.histogram":  # bins of 0 (which a log axis cannot show) are left out
        return [dict(b, center_MBps=math.sqrt(b["lo_MBps"] * b["hi_MBps"])) for b in doc["ebb"]["histogram"]
                if b["lo_MBps"] > 0]
    if doc["pattern"] == "noise":  # "rank R trace|histogram"
        rk = doc["noise"]["ranks"][int(name.split()[1])]
        if name.endswith("trace"):
            return [dict(x, t_ms=x["t_us"] / 1e3) for x in rk["trace"]]
        return [dict(b, center_us=math.sqrt(b["lo_us"] * b["hi_us"])) for b in rk["histogram"]]
    if doc["pattern"] == "congestion":  # "VICTIM distribution|impact"
        victim, what = name.split()
        v = [x for x in doc["congestion"]["impact"] if x["victim"] == victim][0]
        k = doc["congestion"]["impact"].index(v)
        if what == "distribution":
            keys = [("min", 0), ("p1", 1), ("p10", 10), ("p50", 50), ("p90", 90), ("p99", 99), ("max", 100)]
            return [{"position": j, "percentile": p, "isolated": v["isolated"][key], "congested": v["congested"][key]}
                    for j, (key, p) in enumerate(keys)]
        return [{"x": j + 0.08 * k, "factor": v[s]["factor"], "lo": v[s]["ci95"][0], "hi": v[s]["ci95"][1]}
                for j, s in enumerate(("median", "p99"))]
    if name == "loggp.breakpoints":
        return [{"size": b} for b in doc["loggp"]["breakpoints"]]
    if doc["pattern"] == "alltoall":
        return [r for r in doc["results"] if r.get("algorithm") == name]
    if doc["pattern"] in ("overlap", "skew"):
        # "size S" or "size S, side SIDE": one series
        words = name.replace(",", "").split()
        size, side = float(words[1]), (words[3] if len(words) > 3 else None)
        return [r for r in doc["results"] if r["size"] == size and r.get("side") == side]
    if doc["pattern"] == "matrix":
        # "matrix KEY, size S": every cell, row by row; "outliers KEY, size S": that matrix's outliers
        what, key, _, size = name.replace(",", "").split()
        entry = [e for e in doc["matrix"]["sizes"] if e["size"] == float(size)][0]
        if what == "outliers":
            return [o for o in entry["outliers"] if o["metric"] == key]
        return [{"from": i, "to": j, key: cell} for i, row in enumerate(entry[key]) for j, cell in enumerate(row)]
    raise pc.Failed("unknown table %r" % name)


def check_file(dat, name):
    doc = pc.load(name)
    pattern = doc["pattern"]
    tables = pc.read_dat(dat)
    pc.expect(tables, "%s: no tables" % dat)
    names = [t["name"] for t in tables]
    pc.expect(names == TABLES.get(pattern, ["results"]), "%s: tables %r" % (dat, names))
    for i, t in enumerate(tables):
        pc.expect(t["index"] == i, "%s: table %d numbered %d" % (dat, i, t["index"]))
    missing = [c for c in MUST[pattern] if c not in tables[0]["columns"]]
    pc.expect(not missing, "%s: columns %r missing" % (dat, missing))
    checked = 0
    for t in tables:
        rows = source_rows(doc, t)
        pc.expect(len(rows) == len(t["rows"]), "%s table %s: %d lines for %d JSON rows"
                  % (dat, t["name"], len(t["rows"]), len(rows)))
        pc.expect(len(rows) > 0, "%s table %s: empty" % (dat, t["name"]))
        for obj, line in zip(rows, t["rows"]):
            for col, got in zip(t["columns"], line):
                want = pc.column_value(obj, col)
                pc.expect(want is None or isinstance(want, (int, float)),
                          "%s: column %s is not a number in the JSON" % (dat, col))
                pc.expect(pc.same_number(want, got), "%s table %s size %s column %s: %r in the file, %r in %s"
                          % (dat, t["name"], obj.get("size"), col, got, want, name))
                checked += 1
    return checked


def body(exe, tmp):
    env = None
    if not shutil.which("gnuplot"):
        # the data comes first; the missing gnuplot then fails the command
        env = pc.clean_env(NGAUGE_GNUPLOT=os.path.join(tmp, "no-gnuplot"))
    status = 0 if env is None else 1
    nans = 0
    for name in pc.FIXTURES:
        out = os.path.join(tmp, name.replace(".json", ".svg"))
        pc.expect_run([exe, "plot", pc.fixture(name), "-o", out], status, env=env)
        dat = out[:-4] + ".dat"
        pc.expect(os.path.getsize(out[:-4] + ".gp") > 0, "%s.gp is empty" % out[:-4])
        n = check_file(dat, name)
        with open(dat) as f:
            nans += f.read().count("NaN")
        print("%s: %d numbers match" % (name, n))
    pc.expect(nans > 0, "the fixtures' nulls were not written as NaN")

    # several files of one pattern: OUT-1.dat, OUT-2.dat in the order given
    out = os.path.join(tmp, "pp.pdf")
    pc.expect_run([exe, "plot", pc.fixture("pingpong-4.json"), pc.fixture("pingpong-2.json"), "-o", out], status,
                  env=env)
    check_file(os.path.join(tmp, "pp-1.dat"), "pingpong-4.json")
    check_file(os.path.join(tmp, "pp-2.dat"), "pingpong-2.json")
    pc.expect(not os.path.exists(os.path.join(tmp, "pp.dat")), "pp.dat written for two files")

    # several patterns: OUT-PATTERN.dat
    out = os.path.join(tmp, "mix.pdf")
    pc.expect_run([exe, "plot", pc.fixture("loggp.json"), pc.fixture("n1.json"), pc.fixture("alltoall.json"),
                   "-o", out], status, env=env)
    check_file(os.path.join(tmp, "mix-loggp.dat"), "loggp.json")
    check_file(os.path.join(tmp, "mix-n1.dat"), "n1.json")
    check_file(os.path.join(tmp, "mix-alltoall.dat"), "alltoall.json")


if __name__ == "__main__":
    pc.main(body)
