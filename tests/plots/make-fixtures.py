#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the synthetic result files in tests/plots/data/.

These are fixtures for the plotter and report tests, NOT measurements: every
number comes from a simple made-up formula below, and each file says so in
"command", "env.host" and "env.device".  Re-run after changing the formulas:

    python3 tests/plots/make-fixtures.py
"""
import json
import os

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SYNTH = "synthetic fixture for tests/plots (not a measurement)"


def stats(m, n=1000):
    """A STATS object around the median m (made-up spread)."""
    return {"n": n, "min": m * 0.95, "median": m, "mean": m * 1.0125, "stddev": m * 0.0213,
            "p99": m * 1.21, "max": m * 1.5, "ci95": [m * 0.987, m * 1.0313]}


def param(v, lo, hi):
    return {"value": v, "ci95": [lo, hi]}


# The parameters block as ngauge writes it: the run's own settings, then the options of the module and of
# the pattern with their defaults (doc/schema/ngauge-result-1.schema.json names them all).
RUN_PARAMS = {"sizes": "1-1M", "count": 1000, "warmup": 100, "output": "fixture.json", "np": 2, "timer": None,
              "verify": False, "raw": False, "percentiles": "50,90,99,99.9,99.99", "histogram": False, "seed": 1,
              "server": False, "once": False, "client": None, "port": 5217, "bind": None, "auth": None, "allow": None,
              "server-max-time": 3600.0, "server-max-size": 1073741824, "server-max-count": 10000000, "pin": None,
              "timeout": 8.0,
              "sync": "auto", "sync-check": False}
RDMA_PARAMS = {"rdma-backend": "auto", "ofi-provider": None, "rdma-ring": 32, "rdma-eager": 8192, "rdma-poll": "spin"}
MODULE_PARAMS = {
    "tcp": {"tcp-port": None, "tcp-bind": None, "tcp-sndbuf": None, "tcp-rcvbuf": None, "tcp-poll": "sleep"},
    "emu": {"emu-base": "tcp", "emu-os": 0.0, "emu-or": 0.0, "emu-g": 0.0, "emu-L": 0.0, "emu-G": 0.0,
            "emu-G2": None, "emu-threshold": 0, "emu-corrupt": 0, "emu-max": 0, "emu-os-drift": 0.0},
    "mpi": {"mpi-ssend": False},
    "mpirma": {"mpi-ssend": False},
    "rma": dict(RDMA_PARAMS, **{"rma-design": "direct", "rma-sched": "none", "rma-aggregate": 256}),
    "spipe": dict(RDMA_PARAMS, **{"spipe-mode": "super", "spipe-block": 4096, "spipe-buffers": 3,
                                  "spipe-bufsize": 1048576, "spipe-c0": None, "spipe-q": None,
                                  "spipe-fresh": False}),
}
PATTERN_PARAMS = {
    "pingpong": {"pp-echo": "separate"},
    "loggp": {"loggp-n": 16, "loggp-budget": 15.0, "loggp-ci": 0.01, "loggp-delay": 0.0},
    "plogp": {"plogp-n": 16, "plogp-budget": 15.0, "plogp-ci": 0.01, "plogp-delay": 0.0},
    "alltoall": {"a2a-algo": "all", "a2a-blocking": False, "ranks-per-node": 0},
    "bw": {"bw-window": 64},
    "rma": {"rma-test": "all", "rma-sync": "auto", "rma-burst": 16, "rma-origins": 0},
    "overlap": {"overlap-compute": "0-4t/12", "overlap-side": "sender", "overlap-rma": False,
                "overlap-burst": None},
    "skew": {"skew-compute": "0-4t/12", "skew-rma": False, "skew-burst": None},
    "matrix": {"matrix-order": "pair", "matrix-outlier": 1.5},
    "coll": {"coll-op": "all", "coll-algo": "all", "coll-timing": "window", "coll-type": "int32",
             "coll-model": None},
}


def head(pattern, module, ranks, extra_params=None):
    params = dict(RUN_PARAMS, np=ranks)
    params.update(MODULE_PARAMS.get(module, {}))
    params.update(PATTERN_PARAMS.get(pattern, {}))
    params.update(extra_params or {})
    return {
        "schema": "ngauge-result/1",
        "complete": True,
        "module": module,
        "pattern": pattern,
        "ranks": ranks,
        "command": SYNTH,
        "started": "2000-01-01T00:00:00Z",
        "finished": "2000-01-01T00:00:01Z",
        "launch": "local",
        "env": {"host": "synthetic-fixture", "kernel": "none", "cpu": "none", "mpi": None,
                "device": "none (" + SYNTH + ")", "ngauge": "fixture", "cores": 2, "oversubscribed": False},
        "timer": {"name": "clock", "resolution_ns": 1.0, "overhead_ns": 20.5, "invariant_tsc": False,
                  "tsc_ghz": 0.0},
        "parameters": params,
        "results": [],
    }


SIZES = [1 << k for k in range(0, 21)]  # 1 B .. 1 MiB


def lat(s, base=2.718281828459045, per_byte=1 / 1187.0):
    return base + s * per_byte


def pingpong(ranks):
    d = head("pingpong", "tcp", ranks)
    for s in SIZES:
        m = lat(s) * (1.0 if ranks == 2 else 1.37)
        row = {"size": s, "count": 1000, "latency_us": stats(m), "bandwidth_MBps": stats(s / m)}
        if ranks > 2:
            row["pairs"] = [{"client": c, "server": c + 1, "latency_us": stats(m * (1 + c / 100.0))}
                            for c in range(0, ranks, 2)]
            row["aggregate_bandwidth_MBps"] = sum(s / (m * (1 + c / 100.0)) for c in range(0, ranks, 2))
        d["results"].append(row)
    if ranks == 2:
        # a CI bound that could not be computed is written as null by the writer
        d["results"][3]["latency_us"]["ci95"] = [None, d["results"][3]["latency_us"]["median"] * 1.1]
    return d


def one_n(pattern):
    d = head(pattern, "emu", 4)
    for s in SIZES:
        t = 3 * lat(s, 4.1, 1 / 1000.0)
        row = {"size": s, "count": 500, "time_us": stats(t, 500),
               "bandwidth_per_client_MBps": stats(s / t, 500),
               "aggregate_bandwidth_MBps": stats(3 * s / t, 500),
               "clients": 3, "server": 2,
               "per_client": [{"rank": r, "time_us": stats(t, 500), "bandwidth_MBps": stats(s / t, 500)}
                              for r in (0, 1, 3)]}
        d["results"].append(row)
    return d


def loggp():
    d = head("loggp", "tcp", 2, {"loggp-n": 16})
    sizes = []
    # two protocol segments: eager up to 4 KiB, rendezvous above
    segs = [(1, 4096, 1.25, 0.000731), (4096, 1048576, 6.5, 0.000853)]
    for s in SIZES:
        g, G = (segs[0][2], segs[0][3]) if s <= 4096 else (segs[1][2], segs[1][3])
        f = segs[0][0] if s <= 4096 else segs[1][0]
        T = g + (s - f) * G + (0.0137 if s % 3 else -0.0091)  # a little off the line
        p1 = 2 * (3.1 + 0.4 + 0.35) + s * 0.00161
        o_s, o_r = 0.4 + s * 0.000113, 0.35 + s * 0.0000971
        sizes.append({"size": s, "count": 1000, "prtt1_us": p1, "prttn_us": p1 + 15 * T,
                      "prttnd_us": p1 + 15 * (T + p1), "T_us": T, "o_s_us": o_s, "o_r_us": o_r, "delay_us": p1})
        d["results"].append({"size": s, "count": 1000, "prtt1_us": stats(p1), "prttn_us": stats(p1 + 15 * T),
                             "prttnd_us": stats(p1 + 15 * (T + p1)), "o_r_us": stats(o_r), "T_us": T,
                             "o_s_us": o_s, "delay_us": p1})
    d["loggp"] = {
        "n": 16,
        "segments": [
            {"from": segs[0][0], "to": segs[0][1], "L_us": param(3.1, 2.9, 3.3), "o_s_us": param(0.4, 0.38, 0.43),
             "o_r_us": param(0.35, 0.33, 0.37), "g_us": param(segs[0][2], 1.2, 1.31),
             "G_us_per_byte": param(segs[0][3], 0.0007, 0.00076), "O_s_us_per_byte": param(0.000113, 0.0001, 0.00012),
             "O_r_us_per_byte": param(0.0000971, 0.00009, 0.000105), "sizes": 13},
            {"from": segs[1][0], "to": segs[1][1], "L_us": {"value": None, "flag": "negative estimate"},
             "o_s_us": param(0.9, 0.85, 0.95), "o_r_us": param(0.8, 0.75, 0.86),
             "g_us": param(segs[1][2], 6.1, 6.9), "G_us_per_byte": param(segs[1][3], 0.00083, 0.00087),
             "O_s_us_per_byte": param(0.000113, 0.0001, 0.00012),
             "O_r_us_per_byte": param(0.0000971, 0.00009, 0.000105), "sizes": 9},
        ],
        "breakpoints": [4096],
        "sizes": sizes,
        "model_selection": {"criterion": "BIC, breakpoint charged as 4 parameters", "bic": [-12.5, -40.25, -38.0]},
        "loggopsim": "-L 3100 -o 400 -g 1250 -G 0.731 -O 0 -S 4096",
    }
    return d


def plogp():
    d = head("plogp", "emu", 2)
    sizes = []
    for s in [0] + SIZES[:17]:
        g = 1.75 + s * 0.000913
        rtt, os_, or_ = 2 * (3.5 + g), 0.61 + s * 0.00021, 0.52 + s * 0.00017
        sizes.append({"size": s, "count": 1000, "g_us": param(g, g * 0.97, g * 1.04),
                      "o_s_us": param(0.61 + s * 0.00021, 0.6 + s * 0.0002, 0.63 + s * 0.00022),
                      "o_r_us": param(0.52 + s * 0.00017, 0.5 + s * 0.00016, 0.55 + s * 0.00018)
                      if s != 8 else {"value": None, "flag": "negative estimate"},
                      "L_us": param(3.5, 3.3, 3.71), "rtt_us": rtt, "delay_us": 1.25 * rtt})
        d["results"].append({"size": s, "count": 1000, "rtt_us": stats(rtt), "g_us": stats(g), "o_s_us": stats(os_),
                             "o_r_us": stats(or_), "delay_us": 1.25 * rtt})
    d["plogp"] = {"n": 16, "L_us": param(3.5, 3.3, 3.71), "sizes": sizes}
    return d


def alltoall():
    d = head("alltoall", "tcp", 8)
    algs = {"bruck": (12.5, 0.0213), "pairwise": (31.0, 0.0087), "isend": (25.0, 0.011)}
    for name, (a, b) in algs.items():
        for s in SIZES[:15]:
            t = a + s * b * 7
            d["results"].append({"size": s, "count": 200, "algorithm": name, "time_us": stats(t, 200),
                                 "algbw_MBps": stats(s * 7 / t, 200), "verified": 0})
    d["alltoall"] = {"algorithms": list(algs), "ranks_per_node": 4, "nodes": 2, "membership": "host",
                     "node_sizes": [4, 4], "skipped": {"mpi": "the module has no alltoall of its own"},
                     "blocking_steps": False}
    return d


def bw(pattern, ranks):
    """Streaming bandwidth: windows of 64 messages, one acknowledgement each."""
    d = head(pattern, "mpi", ranks, {"bw-window": 64} if pattern == "bw" else None)
    dirs = 2 if pattern == "bibw" else 1
    pairs = ranks // 2
    for s in SIZES:
        t = 64 * (0.31 + s / 9871.0) + 0.6  # window time (us)
        count = 100 if s <= 8192 else 20
        row = {"size": s, "count": count, "bandwidth_MBps": stats(dirs * 64 * s / t, count * pairs),
               "messages_per_s": stats(dirs * 64e6 / t, count * pairs), "time_us": stats(t, count * pairs),
               "window": 64, "warmup": 10 if s <= 8192 else 2, "messages": pairs * dirs * 64 * (count + 10),
               "bytes": pairs * dirs * 64 * (count + 10) * s, "verified": 0}
        if pairs > 1:
            row["pairs"] = [{"client": c, "server": c + 1, "bandwidth_MBps": stats(dirs * 64 * s / t, count),
                             "messages_per_s": stats(dirs * 64e6 / t, count)} for c in range(0, ranks, 2)]
            row["aggregate_bandwidth_MBps"] = pairs * dirs * 64 * s / t
            row["aggregate_messages_per_s"] = pairs * dirs * 64e6 / t
        d["results"].append(row)
    d["bw"] = {"direction": "bi" if dirs == 2 else "uni", "window": 64, "ack_bytes": 1, "pairs": pairs,
               "buffers": "single"}
    return d


def custom():
    """A pattern without a figure of its own: the plotter's fallback."""
    d = head("custom", "tcp", 2)
    for s in SIZES[:12]:
        d["results"].append({"size": s, "count": 1000, "put_latency_us": stats(lat(s, 1.5)),
                             "put_bandwidth_MBps": stats(s / lat(s, 1.5))})
    return d


def rma(module, factor):
    """The rma suite: rows of several tests, syncs, origin counts (a figure per test)."""
    d = head("rma", module, 4, {"rma-test": "all", "rma-sync": "pscw,fence,lock"})
    sizes = [8, 64, 1024, 65536]

    def row(test, sync, size, t, origins=1, targets=1, burst=1, epochs=1.0, moved=None):
        moved = size * burst if moved is None else moved
        return {"size": size, "count": 500, "test": test, "sync": sync, "time_us": stats(t, 500),
                "bandwidth_MBps": stats(moved / t, 500), "epochs_per_s": stats(epochs * 1e6 / t, 500),
                "origins": origins, "targets": targets, "burst": burst, "verified": 0,
                "aggregate_epochs_per_s": epochs * 1e6 / (t * 1.05)}

    for sync, k in (("pscw", 1.0), ("fence", 1.3)):
        for s in sizes:
            d["results"].append(row("put-pingpong", sync, s, factor * k * lat(s, 0.9), 2, 2))
    for sync, k in (("fence", 1.0), ("pscw", 1.2), ("two-sided", 0.8)):
        for s in sizes:
            d["results"].append(row("bidir", sync, s, factor * k * lat(s, 1.1), 2, 2, epochs=2.0, moved=2 * s))
    for sync, k in (("pscw", 1.0), ("lock-exclusive", 1.1)):
        for s in sizes:
            d["results"].append(row("put-bw", sync, s, factor * k * lat(16 * s, 2.0), burst=16))
    for n in (1, 2, 3):
        d["results"].append(row("sync", "pscw", 0, factor * 0.9 * n, n, 1, 0, epochs=n))
    for n in (2, 3):
        d["results"].append(row("sync", "pscw", 0, factor * 1.1 * n, 1, n, 0))
    for n in (1, 2, 3):
        d["results"].append(row("multi-origin", "pscw", 65536, factor * 16 * 65536 / 9000.0 * n, n, 1, 16,
                                epochs=n, moved=n * 16 * 65536))
    for sync in ("lock-exclusive", "lock-shared"):
        for s in sizes:
            d["results"].append(row("lock", sync, s, factor * lat(s, 0.5)))
        for n in (2, 3):
            d["results"].append(row("lock", sync, 8, factor * 0.5 * n, n, 1, epochs=n))
    d["rma"] = {"tests": ["put-pingpong", "bidir", "put-bw", "sync", "multi-origin", "lock"], "burst": 16,
                "max_origins": 3, "multi_origin_sizes": [65536], "lock_throughput_size": 8, "skipped": {}}
    return d


def spipe():
    """Ping-pong over a module whose rows carry a model's prediction (spipe)."""
    d = head("pingpong", "spipe", 2, {"spipe-mode": "super"})
    for s in SIZES[10:]:
        m = lat(s, 5.0, 1 / 3000.0)
        d["results"].append({"size": s, "count": 100, "latency_us": stats(m, 100), "bandwidth_MBps": stats(s / m, 100),
                             "predicted_us": m * 1.0625,
                             "predicted_us_by_mode": {"super": m * 1.0625, "reg": m * 3.0}})
    d["spipe"] = {
        "mode": "super", "memory": "reused", "memory_note": "the same buffers again and again",
        "eager_bytes": 8192, "buffers": 3, "buffer_bytes": 1048576, "block_bytes": 4096, "sub_blocks": True,
        "c0_bytes": "model: B_copy(L) 2 lambda_net", "q": "model: B_copy(L) / B_net, at least 1.5",
        "model": {"lambda_reg_us": 0.58, "B_reg_MBps": None, "lambda_dereg_us": 0.03, "B_dereg_MBps": None,
                  "B_copy_MBps": [{"size": 4096, "MBps": 68000.0}, {"size": 1048576, "MBps": 12000.0}],
                  "lambda_net_us": 5.0, "B_net_MBps": 3000.0, "g_us": 0.01,
                  "reg_samples": [{"size": 4096, "reg_us": 0.59, "dereg_us": 0.03}],
                  "net_samples": [{"size": 8, "T_us": 5.0}, {"size": 65536, "T_us": 26.8}],
                  "train_64B_us": {"1": 5.0, "16": 5.2},
                  "equations": {m: m + ": synthetic" for m in ("reg", "rcache", "copy", "pipeline", "super")},
                  "registration_samples_note": SYNTH, "seconds": 0.04, "seconds_local": 0.03,
                  "measured_on": "rank 0 (network: ranks 0 and 1)"},
        "backend": "none (" + SYNTH + ")",
        "rcache": {"hits": 0, "misses": 0, "evictions": 0, "invalidations": 0, "uncached": 0}}
    return d


def overlap():
    """Two sizes, both sides computing: the sender's transfer hides (T(X) = max(T(0), X) + 3), the
    receiver's does not (T(X) = T(0) + X)."""
    d = head("overlap", "emu", 2, {"overlap-side": "both", "overlap-compute": "0-4t/5"})
    sizes = []
    for s, t0 in ((16384, 20.0), (65536, 80.0)):
        for side in ("sender", "receiver"):
            for k in range(5):
                x = 4.0 * t0 * k / 4
                t = max(t0, x) + 3.0 if side == "sender" else t0 + x
                t = t0 if k == 0 else t
                e = t - x
                r = max(0.0, min(1.0, 1 - e / t0))
                d["results"].append({"size": s, "count": 100, "side": side, "compute_us": x, "time_us": stats(t, 100),
                                     "compute_measured_us": stats(x * 1.01 if x else 0.02, 100),
                                     "exposed_us": stats(e, 100), "overlap_ratio": r,
                                     "overlap_ratio_lo": max(0.0, r - 0.02), "overlap_ratio_hi": min(1.0, r + 0.02),
                                     "overlap_bound": min(1.0, x / t0)})
            sizes.append({"size": s, "side": side, "transfer_us": param(t0, t0 * 0.99, t0 * 1.01),
                          "compute_us": 4 * t0, "compute_measured_us": 4.04 * t0,
                          "overlap_ratio": param(r, max(0.0, r - 0.02), min(1.0, r + 0.02)),
                          "overlap_ratio_unclipped": r, "overlap_bound": 1.0, "probe_transfer_us": t0})
    # a CI bound that could not be computed
    d["results"][1]["time_us"]["ci95"] = [None, d["results"][1]["time_us"]["median"] * 1.05]
    compute = {"kernel": "dependent 64-bit multiply-add chain, no memory", "windows": 31, "window_us": 200.0,
               "ranks": [{"rank": r, "iters_per_us": 800.0, "spread": 0.01, "iters_per_us_end": 801.0,
                          "change": 0.00125} for r in (0, 1)]}
    d["overlap"] = {"mode": "two-sided", "side": "both", "burst": 1, "compute_spec": "0-4t/5",
                    "ratio": "(T(0) + X - T(X)) / T(0)", "ci95": "bootstrap", "compute": compute, "sizes": sizes}
    return d


def skew():
    """One size: the origin waits for the target once the skew passes 20 us (slope 0.9 above)."""
    d = head("skew", "rma", 2, {"skew-rma": True})
    for k in range(7):
        x = 50.0 * k
        d["results"].append({"size": 65536, "count": 100, "skew_us": x,
                             "time_us": stats(60.0 + 0.9 * max(0.0, x - 20.0), 100),
                             "skew_measured_us": stats(x * 1.01 if x else 0.02, 100)})
    d["skew"] = {"mode": "one-sided", "burst": 16, "compute_spec": "0-300:+50",
                 "target_computes": "between its post and its wait", "slope": "least squares",
                 "compute": {"kernel": "dependent 64-bit multiply-add chain, no memory", "windows": 31,
                             "window_us": 200.0,
                             "ranks": [{"rank": r, "iters_per_us": 800.0, "spread": 0.01} for r in (0, 1)]},
                 "sizes": [{"size": 65536, "transfer_us": param(60.0, 59.5, 60.5), "slope": param(0.87, 0.8, 0.94),
                            "intercept_us": param(48.0, 40.0, 56.0), "points": 7}]}
    return d


def ebb():
    """16 bisections of 4 ranks, ranks 0, 1 on one node and 2, 3 on another behind a shared 12 MB/s link:
    pairs across share it (6 MB/s each), pairs inside a node get 400 MB/s; bimodal."""
    import math
    d = head("ebb", "tcp", 4, {"ebb-rounds": 16, "ebb-size": 4096, "ebb-time": 0.4, "sizes": "0"})
    node = lambda r: r // 2
    rounds, bw = [], []
    for k in range(16):
        a, b = [(0, 2), (1, 3)], [(0, 1), (2, 3)]
        pairs = a if k % 3 else b
        v = [6.0 + 0.1 * ((k + i) % 3) if node(c) != node(s) else 400.0 + 10.0 * ((k + i) % 4)
             for i, (c, s) in enumerate(pairs)]
        bw += v
        rounds.append({"round": k, "pairs": [{"client": c, "server": s, "bandwidth_MBps": x}
                                             for (c, s), x in zip(pairs, v)], "sum_MBps": sum(v)})
    hist = {}
    for x in bw:
        e = math.floor(math.log2(x))
        lo = 2 ** e + (2 ** e / 8) * math.floor((x - 2 ** e) / (2 ** e / 8))
        hist[lo] = hist.get(lo, 0) + 1
    bins = [{"lo_MBps": lo, "hi_MBps": lo + 2 ** math.floor(math.log2(lo)) / 8, "count": n}
            for lo, n in sorted(hist.items())]
    m = sum(bw) / len(bw)
    s = sorted(bw)
    d["results"].append({"size": 4096, "count": 32, "bandwidth_MBps": dict(stats((s[15] + s[16]) / 2, 32),
                                                                          min=s[0], max=s[-1]),
                         "time_us": stats(400000.0, 32), "effective_bisection_MBps": param(m, m * 0.7, m * 1.3),
                         "rounds": 16, "pairs": 2, "window": 64, "messages": 20000, "bytes": 81920000,
                         "verified": 0})
    d["ebb"] = {"size": 4096, "window": 64, "rounds": 16, "pairs": 2, "time_s": 0.4, "histogram": bins,
                "bisections": rounds}
    return d


def noise():
    """2 ranks, selfish detour over 2 s: rank 0 has a 200 us detour every 15.6 ms over short ones of 1-3 us;
    rank 1 the short ones only."""
    d = head("noise", "tcp", 2, {"noise-method": "selfish", "noise-time": 2.0, "noise-threshold": 0,
                                 "sizes": "0"})
    ranks = []
    for r in (0, 1):
        trace = []
        for k in range(256):  # 256 of the 1024 slots hold a detour (a smaller file)
            t = k * 2e6 / 256 + 100.0
            long_ = r == 0 and k % 2 == 0
            trace.append({"t_us": t, "len_us": 200.0 + (k % 7) if long_ else 1.0 + (k % 3)})
        hist = [{"lo_us": 1.0, "hi_us": 1.19, "count": 800}, {"lo_us": 2.0, "hi_us": 2.38, "count": 600}]
        if r == 0:
            hist.append({"lo_us": 190.3, "hi_us": 226.3, "count": 200})
        n = sum(b["count"] for b in hist)
        top = sorted([x for x in trace], key=lambda x: -x["len_us"])[:32]
        ranks.append({"rank": r, "span_us": 2e6, "detours": n, "lost_fraction": 0.0213 if r == 0 else 0.0012,
                      "threshold_ns": 80.0, "histogram": hist, "longest": top, "trace": trace})
    d["results"].append({"size": 0, "count": 64, "detour_us": stats(100.0, 64), "lost_fraction": 0.0113})
    d["noise"] = {"method": "selfish", "time_s": 2.0, "ranks": ranks}
    return d


def coll():
    """Collectives over 8 ranks: three operations with their algorithms, and barrier's one row of size 0."""
    p = 8
    d = head("coll", "tcp", p)
    algs = {"allreduce": {"ring": (14.0, 0.0021), "rd": (9.5, 0.0034), "rabenseifner": (16.0, 0.0017)},
            "bcast": {"binomial": (6.0, 0.0027), "linear": (11.0, 0.0061)},
            "allgather": {"ring": (12.0, 0.0019)},
            "barrier": {"dissemination": (7.5, 0.0)}}
    factor = {"allreduce": 2.0 * (p - 1) / p, "bcast": 1.0, "allgather": (p - 1.0) / p, "barrier": 0.0}
    for op, by_alg in algs.items():
        for alg, (a, b) in by_alg.items():
            for s in ([0] if op == "barrier" else SIZES[3:]):
                t = a + s * b
                row = {"size": s, "count": 100, "op": op, "algorithm": alg, "timing": "window",
                       "elements": s // 4, "time_us": stats(t, 100)}
                if s:
                    row["algbw_MBps"] = stats(s / t, 100)
                    row["busbw_MBps"] = stats(factor[op] * s / t, 100)
                row.update({"late": 1 if s == 8 else 0, "timed": 100, "window_us": 2.5 * t,
                            "late_bound_us": 0.01, "verified": 0, "start_spread_us": 0.05, "start_late": False,
                            "start_bound_us": 0.01})
                d["results"].append(row)
    native = "needs native collectives, which module 'tcp' does not offer (modules that do: mpi, mpirma)"
    d["coll"] = {"operations": list(algs), "variants": [{"op": op, "algorithm": alg}
                                                        for op, by_alg in algs.items() for alg in by_alg],
                 "skipped": {op: {"native": native} for op in algs}, "busbw_factor": factor, "type": "int32",
                 "root": 0, "timing": "window"}
    return d


def congestion():
    """4 ranks, a latency victim pair (1, 2) and a bandwidth one beside an incast of ranks 3 and 0, 3 rounds:
    latency 8 us alone, its tail (p99) 4 times longer beside the congestors; window times 90 ms alone, twice
    as long beside them."""
    d = head("congestion", "tcp", 4, {"cong-victims": "2", "cong-congestors": "incast", "cong-victim": "lat,bw",
                                      "cong-rounds": 3, "cong-size": 65536, "cong-bw-size": 65536, "cong-window": 8,
                                      "cong-placement": "random", "sizes": "8"})

    def dist(m, tail):
        return {"count": 600, "min": m * 0.95, "max": m * tail * 3, "p1": m * 0.96, "p10": m * 0.98, "p50": m,
                "p90": m * 1.1, "p99": m * tail}

    for rnd in range(3):
        for phase, f in (("isolated", 1.0), ("congested", 1.25)):
            d["results"].append({"size": 8, "count": 200, "victim": "lat", "phase": phase, "round": rnd, "pairs": 1,
                                 "latency_us": stats(8.0 * f, 200),
                                 "congestors": [{"type": "incast", "ranks": 2, "root": 3,
                                                 "rate_MBps": 0.0 if f == 1.0 else 700.0,
                                                 "messages": 0.0 if f == 1.0 else 160.0,
                                                 "seconds": 0.0 if f == 1.0 else 0.0015}],
                                 "congestor_messages": 0 if f == 1.0 else 160, "verified": 2})
    d["congestion"] = {
        "victims": [1, 2], "groups": [{"type": "incast", "ranks": [3, 0]}], "rounds": 3, "window": 8, "size": 65536,
        "bw_size": 65536,
        "impact": [
            {"victim": "lat", "unit": "latency_us", "isolated": dist(8.0, 2.0), "congested": dist(10.0, 6.4),
             "median": {"factor": 1.25, "ci95": [1.2, 1.3]}, "p99": {"factor": 4.0, "ci95": [2.5, 6.5]}},
            {"victim": "bw", "unit": "time_us", "isolated": dist(90000.0, 1.1), "congested": dist(180000.0, 1.2),
             "median": {"factor": 2.0, "ci95": [1.9, 2.1]}, "p99": {"factor": 2.18, "ci95": [1.8, 2.6]}}],
        "congestor_rates": [{"type": "incast", "ranks": 2, "median_MBps": 700.0, "min_MBps": 500.0,
                             "max_MBps": 1000.0, "phases": 3}]}
    return d


def bw_size0():
    """bw -s 0: every row of size 0 (bandwidth 0, which a log axis has not; a message rate)."""
    d = bw("bw", 2)
    d["parameters"]["sizes"] = "0"
    row = d["results"][0]
    row["size"] = 0
    row["bandwidth_MBps"] = stats(0.0, 100)
    row["bytes"] = 0
    d["results"] = [row]
    return d


# the sweep of offered loads (plot --kind load): per rate, whether each size held it
LOAD_SWEEP = {1000: (True, True), 4000: (True, False), 16000: (False, False)}


def load_sweep(rate):
    """pingpong --rate RATE -s 8,4K: open loop; 8 B holds 1000 and 4000/s, 4 KiB only 1000/s. Where an offer
    held, the latency is the path's and the rate came back; where not, the queue's (milliseconds) at a rate
    that levels off."""
    d = head("pingpong", "tcp", 2, {"sizes": "8,4K", "rate": float(rate), "load": 0.0, "one-way": False})
    for s, held in zip((8, 4096), LOAD_SWEEP[rate]):
        m = lat(s) if held else 1000.0 * rate / 1000.0
        got = float(rate) if held else rate * 0.6
        d["results"].append({"size": s, "count": 1000, "latency_us": stats(m), "bandwidth_MBps": stats(s / m),
                             "offered_rate_per_s": float(rate), "achieved_rate_per_s": got,
                             "latency_growth_us": 0.0 if held else 50.0 * m, "sustained": held})
    return d


def pingpong_size0():
    """pingpong -s 0,1-1K: size 0 beside the others on the log size axis."""
    d = head("pingpong", "tcp", 2, {"sizes": "0,1-1K"})
    for s in [0] + SIZES[:11]:
        m = lat(s)
        d["results"].append({"size": s, "count": 1000, "latency_us": stats(m), "bandwidth_MBps": stats(s / m)})
    return d


def rma_size0():
    """rma -s 0: every test at size 0 (the bandwidth tests move no bytes)."""
    d = rma("rma", 1.0)
    rows = []
    for r in d["results"]:
        if r["size"] == 65536 or (r["test"] not in ("sync", "multi-origin") and r["size"] != 8):
            continue
        r = json.loads(json.dumps(r))
        if r["test"] != "sync":
            r["size"] = 0
            r["bandwidth_MBps"] = stats(0.0, 500)
        rows.append(r)
    d["results"] = rows
    d["parameters"]["sizes"] = "0"
    d["rma"]["lock_throughput_size"] = 0
    d["rma"]["multi_origin_sizes"] = []
    return d


def rma_no_origins():
    """rma rows without "origins" and "targets" (a file written before they existed, or cut)."""
    d = rma("rma", 1.0)
    for r in d["results"]:
        del r["origins"]
        del r["targets"]
    return d


def matrix():
    """Four ranks, rank 3 behind a slow link: its cells 4 times the latency, a third of the bandwidth."""
    n, c = 4, 100
    d = head("matrix", "tcp", n)
    d["matrix"] = {"order": "pair", "window": 64, "outlier_factor": 1.5, "rounds": n * (n - 1),
                   "ranks": [{"rank": i, "host": "node%d" % i, "addr": "198.18.0.%d" % (i + 1),
                              "device": "tcp 198.18.0.%d" % (i + 1)} for i in range(n)], "sizes": []}
    for s in (1, 262144):
        def cell(i, j, bw):
            slow = 3 in (i, j)
            t = lat(s, 2.5 + 0.1 * i + 0.05 * j) * (4.0 if slow else 1.0)
            return stats(64 * s / (t * 1.1) / (3.0 if slow else 1.0), c) if bw else stats(t, c)
        latm = [[None if i == j else cell(i, j, False) for j in range(n)] for i in range(n)]
        bwm = [[None if i == j else cell(i, j, True) for j in range(n)] for i in range(n)]
        lm = sorted(latm[i][j]["median"] for i in range(n) for j in range(n) if i != j)
        bm = sorted(bwm[i][j]["median"] for i in range(n) for j in range(n) if i != j)
        lmed, bmed = (lm[5] + lm[6]) / 2, (bm[5] + bm[6]) / 2
        outl = [{"from": i, "to": j, "metric": "latency_us", "value": latm[i][j]["median"],
                 "ratio": latm[i][j]["median"] / lmed}
                for i in range(n) for j in range(n) if i != j and latm[i][j]["median"] > 1.5 * lmed]
        outl += [{"from": i, "to": j, "metric": "bandwidth_MBps", "value": bwm[i][j]["median"],
                  "ratio": bwm[i][j]["median"] / bmed}
                 for i in range(n) for j in range(n) if i != j and bwm[i][j]["median"] < bmed / 1.5]
        d["matrix"]["sizes"].append({"size": s, "latency_median_us": lmed, "bandwidth_median_MBps": bmed,
                                     "latency_us": latm, "bandwidth_MBps": bwm, "outliers": outl})
        d["results"].append({"size": s, "count": c, "latency_us": stats(lmed, 12), "bandwidth_MBps": stats(bmed, 12),
                             "pairs": 12, "rounds": 12, "window": 64, "bw_count": 100 if s <= 8192 else 20,
                             "verified": 0, "outliers": len(outl)})
    return d


def pingpong_dist(histogram):
    """Ping-pong at three sizes with its samples (--raw), or their buckets (--histogram): a made-up
    log-normal body with a tail of one sample in fifty at three times the median."""
    import math
    import random
    rnd = random.Random(23)
    d = head("pingpong", "tcp", 2, {"raw": not histogram, "histogram": histogram, "count": 2000,
                                   "percentiles": "50,90,99,99.9"})
    for s in (1, 1024, 65536):
        m = lat(s)
        xs = [m * math.exp(0.05 * rnd.gauss(0, 1)) * (3.0 if rnd.random() < 0.02 else 1.0) for _ in range(2000)]
        srt = sorted(xs)

        def q(p):
            h = (len(srt) - 1) * p / 100.0
            lo = int(math.floor(h))
            return srt[lo] + (srt[min(lo + 1, len(srt) - 1)] - srt[lo]) * (h - lo)
        st = stats(q(50), n=len(xs))
        st.update({"min": srt[0], "max": srt[-1], "p99": q(99), "p50": q(50), "p90": q(90), "p99.9": q(99.9)})
        row = {"size": s, "count": len(xs), "latency_us": st, "bandwidth_MBps": stats(s / m)}
        if histogram:
            buckets = {}
            for x in xs:
                k = math.floor(math.log2(x) * 128)
                buckets[k] = buckets.get(k, 0) + 1
            row["histogram"] = {"latency_us": {"buckets_per_octave": 128, "nonpositive": 0, "buckets": [
                [2 ** (k / 128.0), 2 ** ((k + 1) / 128.0), c] for k, c in sorted(buckets.items())]}}
        else:
            row["raw"] = {"latency_us": xs}
        d["results"].append(row)
    return d


def main():
    os.makedirs(DATA, exist_ok=True)
    files = {
        "pingpong-2.json": pingpong(2),
        "pingpong-4.json": pingpong(4),
        "n1.json": one_n("n1"),
        "1n.json": one_n("1n"),
        "loggp.json": loggp(),
        "plogp.json": plogp(),
        "alltoall.json": alltoall(),
        "bw.json": bw("bw", 2),
        "bibw-4.json": bw("bibw", 4),
        "custom.json": custom(),
        "rma-a.json": rma("rma", 1.0),
        "rma-b.json": rma("mpirma", 2.5),
        "spipe.json": spipe(),
        "overlap.json": overlap(),
        "skew.json": skew(),
        "ebb.json": ebb(),
        "noise.json": noise(),
        "congestion.json": congestion(),
        "coll.json": coll(),
        "load-1000.json": load_sweep(1000),
        "load-4000.json": load_sweep(4000),
        "load-16000.json": load_sweep(16000),
        "matrix.json": matrix(),
        "bw-s0.json": bw_size0(),
        "pingpong-s0.json": pingpong_size0(),
        "rma-s0.json": rma_size0(),
        "rma-no-origins.json": rma_no_origins(),
        "pingpong-raw.json": pingpong_dist(False),
        "pingpong-hist.json": pingpong_dist(True),
    }
    # a label that needs escaping in HTML, LaTeX and gnuplot strings
    files["pingpong-2.json"]["env"]["device"] = "lo <127.0.0.1> & 'quotes' \"too\" 50% $_^~#{}\\"
    for name, doc in files.items():
        with open(os.path.join(DATA, name), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    bad = head("pingpong", "tcp", 2)
    bad["schema"] = "ngauge-result/0"
    bad["results"] = pingpong(2)["results"][:2]
    with open(os.path.join(DATA, "wrong-schema.json"), "w") as f:
        json.dump(bad, f, indent=1)
    text = json.dumps(pingpong(2), indent=1)
    with open(os.path.join(DATA, "truncated.json"), "w") as f:
        f.write(text[: len(text) // 2])


if __name__ == "__main__":
    main()
