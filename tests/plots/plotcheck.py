# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of the tests in tests/plots (imported, not run).

Every test is run as `TEST NGAUGE` (the built ngauge binary as argv[1]) and
exits 0 (pass), 1 (fail) or 77 (skipped: gnuplot is not installed).
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SKIP = 77

# fixture -> pattern; every pattern with a figure of its own, and a fallback
FIXTURES = {
    "pingpong-2.json": "pingpong",
    "pingpong-4.json": "pingpong",
    "n1.json": "n1",
    "1n.json": "1n",
    "loggp.json": "loggp",
    "plogp.json": "plogp",
    "alltoall.json": "alltoall",
    "bw.json": "bw",
    "bibw-4.json": "bibw",
    "custom.json": "custom",
    "spipe.json": "pingpong",
    "overlap.json": "overlap",
    "skew.json": "skew",
    "ebb.json": "ebb",
    "noise.json": "noise",
    "congestion.json": "congestion",
    "matrix.json": "matrix",
    "pingpong-raw.json": "pingpong",
    "pingpong-hist.json": "pingpong",
}

# a sweep of offered loads, pingpong open loop at 1000, 4000 and 16000 messages/s (plot --kind load; test_load.py)
LOAD_FIXTURES = ["load-1000.json", "load-4000.json", "load-16000.json"]

# the fixtures with samples: --raw, --histogram (plot --kind cdf|hist; the report's distribution figure)
DIST_FIXTURES = ["pingpong-raw.json", "pingpong-hist.json"]

# the rma suite: a figure per test (test_rma.py)
RMA_FIXTURES = ["rma-a.json", "rma-b.json"]

# collectives: a figure per operation (test_coll.py)
COLL_FIXTURES = ["coll.json"]

# Fixtures that are not ngauge-result/1 files on purpose: a pattern ngauge does not have (the plotter's
# fallback), another format version, a cut file, rma rows without their origins and targets.  The schema must reject them; every other fixture, and
# every file written from one, must match it (check_schema).
NOT_THE_FORMAT = ["custom.json", "wrong-schema.json", "truncated.json", "rma-no-origins.json"]

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema"))
import validate  # noqa: E402  (tests/schema/validate.py)

# runs the figures draw only in part: size 0 (which a log axis has not, and
# at which no byte moves), rma rows without origins and targets
EDGE_FIXTURES = {
    "bw-s0.json": "bw",
    "pingpong-s0.json": "pingpong",
    "rma-s0.json": "rma",
    "rma-no-origins.json": "rma",
}


class Failed(Exception):
    pass


def fixture(name):
    return os.path.join(DATA, name)


def load(name):
    with open(fixture(name), encoding="utf-8") as f:
        return json.load(f)


def ngauge():
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        print("usage: %s PATH/TO/ngauge" % sys.argv[0], file=sys.stderr)
        sys.exit(1)
    return os.path.abspath(sys.argv[1])


def clean_env(**extra):
    env = dict(os.environ)
    env.pop("NGAUGE_GNUPLOT", None)
    env.update(extra)
    return env


def need_gnuplot():
    if not shutil.which("gnuplot"):
        print("SKIP: gnuplot is not installed (Debian package gnuplot-nox)")
        sys.exit(SKIP)


def run(args, env=None, cwd=None):
    """Runs ngauge ARGS; returns (status, stdout, stderr)."""
    p = subprocess.run(args, env=env or clean_env(), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def expect(cond, what):
    if not cond:
        raise Failed(what)


def expect_run(args, status, env=None, cwd=None):
    rc, out, err = run(args, env=env, cwd=cwd)
    if rc != status:
        raise Failed("%s: exit %d, expected %d\nstdout: %s\nstderr: %s" % (" ".join(args), rc, status, out, err))
    return out, err


def check_schema(path):
    """Raises Failed, naming the file and the key, unless the result file at PATH matches the published schema
    (doc/schema; a no-op without python3-jsonschema)."""
    if validate.available():
        lines = validate.file_problems(path)
        expect(not lines, "not an ngauge-result/1 file:\n  " + "\n  ".join(lines[:20]))


def check_fixtures():
    """Every fixture matches the schema, but those NOT_THE_FORMAT, which it rejects."""
    if not validate.available():
        print("note: python3-jsonschema is not installed: the fixtures are not checked against the schema")
        return
    for name in sorted(os.listdir(DATA)):
        if not name.endswith(".json"):
            continue
        if name in NOT_THE_FORMAT:
            expect(validate.file_problems(fixture(name)), "%s matches the schema, but should not" % name)
        else:
            check_schema(fixture(name))


def main(body):
    """Runs body(ngauge, tmpdir) after checking the fixtures against the schema; reports Failed as a test
    failure."""
    exe = ngauge()
    with tempfile.TemporaryDirectory(prefix="ngauge-plots-") as tmp:
        try:
            check_fixtures()
            body(exe, tmp)
        except Failed as e:
            print("FAIL: %s" % e, file=sys.stderr)
            sys.exit(1)
    print("PASS")
    sys.exit(0)


def oversubscribed(name, tmp):
    """A copy of fixture NAME in TMP marked as an oversubscribed run (3 spinning ranks, 2 cores); its path."""
    doc = load(name)
    doc["env"]["oversubscribed"] = True
    doc["env"]["oversubscription"] = {"host": "h", "spinning_ranks": 3, "cores": 2}
    path = os.path.join(tmp, "over-" + name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    check_schema(path)
    return path


def same_number(a, b):
    """Exact equality, NaN equal to NaN (JSON null / absent)."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return False
    return float(a) == float(b)


def column_value(obj, col):
    """The number a data file's column COL takes from the JSON object OBJ
    (KEY, KEY_median, KEY_value, KEY_ci95_lo, KEY_ci95_hi); None: absent."""
    def get(o, k):
        return o.get(k) if isinstance(o, dict) else None

    for suffix, field in (("_median", "median"), ("_value", "value")):
        if col.endswith(suffix):
            return get(get(obj, col[: -len(suffix)]), field)
    for suffix, i in (("_ci95_lo", 0), ("_ci95_hi", 1)):
        if col.endswith(suffix):
            ci = get(get(obj, col[: -len(suffix)]), "ci95")
            return ci[i] if isinstance(ci, list) and len(ci) == 2 else None
    return get(obj, col)


def read_dat(path):
    """A data file as a list of tables: {"index", "name", "columns", "rows"}.

    Tables start with "# table N: NAME" and "# columns: ..."; numbers are
    floats (NaN included)."""
    tables = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# table "):
                head, name = line[len("# table "):].split(": ", 1)
                tables.append({"index": int(head), "name": name, "columns": None, "rows": []})
            elif line.startswith("# columns:"):
                tables[-1]["columns"] = line[len("# columns:"):].split()
            elif line.startswith("#") or not line.strip():
                continue
            else:
                fields = line.split()
                if len(fields) != len(tables[-1]["columns"]):
                    raise Failed("%s: %d fields, %d columns: %r" % (path, len(fields), len(tables[-1]["columns"]),
                                                                    line))
                tables[-1]["rows"].append([float(x) for x in fields])
    return tables
