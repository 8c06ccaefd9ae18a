#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The published schema of the result format (suite 'schema').

    test_schema.py NGAUGE PART

PART is one of
  files     the fixtures of tests/plots match the schema (but those that are not the format on purpose), and so
            does a file freshly written by every pattern over tcp, the rma, spipe, emu and rdma modules and,
            when MPI is there, under mpiexec; partial files (a run in progress, an interrupted run) too;
  broken    files with a removed required key, a mistyped key, a wrong type, another pattern's or module's key,
            ... fail, validate.py naming exactly the key's path;
  doc       every key the schema names is in doc/result-format.md, every key the document writes as
            "key": is in the schema, and every known word (enum) of the schema is in the document;
  options   the parameters the schema names are ngauge's options (--help, --list), and each module's and
            pattern's options are the ones the schema requires and allows for it;
  integers  counts written as 64.0 (JSON Schema counts them as integers): exactly the known writer sites of
            KNOWN_FLOAT_COUNTS; a new one fails, and so does a known one that is fixed (remove it from the list).
Exit 0 pass, 1 fail, 77 skipped (no python3-jsonschema).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import validate  # noqa: E402

DOC = os.path.join(SRC, "doc", "result-format.md")
FIXTURES = os.path.join(SRC, "tests", "plots", "data")
# Fixtures that are not ngauge-result/1 files on purpose: the plots tests' own list.
sys.path.insert(0, os.path.join(SRC, "tests", "plots"))
from plotcheck import NOT_THE_FORMAT  # noqa: E402
# Options a pattern reads that another pattern owns (--list shows them under the owner), recorded in its files
# (core/driver_run.c) only since bw read --rate and --load: the schema allows them there without requiring them.
READ_NOT_RECORDED = {"bibw": {"bw-window"}, "mpbibw": {"ranks-per-node"}, "mbw": {"ranks-per-node"}, "ebb": {"bw-window"},
                     "matrix": {"bw-window"}, "bw": {"rate", "load"}}
PATTERNS = ["pingpong", "1n", "n1", "loggp", "plogp", "alltoall", "mpbibw", "bw", "bibw", "rma", "overlap", "skew", "matrix"]

# Counts the writers still put out as reals (ng_row_number, json_pack "f"): (where, path with [] for indices).
# Expected to fail the --strict-integers check until the writers write integers; each line goes when its
# writer is fixed (the test says which).
KNOWN_FLOAT_COUNTS = set()

# Options added after result files were written (the run's, and pingpong's one-way): the schema allows them without requiring them
# (older files lack them); every file ngauge writes now has them (the files part checks the fresh ones).
ADDED_LATER = {"quiet-warnings", "verbose", "time", "interval", "sync", "sync-check", "ci-target", "max-time", "one-way",
               "auth", "allow", "server-max-time", "server-max-size", "server-max-count", "repeat", "connect",
               "matrix-pairs", "matrix-cells"}

FAILS = []


def fail(what):
    print("FAIL: " + what)
    FAILS.append(what)


def ok(what):
    print("ok: " + what)


# ---- running ngauge -------------------------------------------------------------------------------------

def listing(exe):
    """(modules, patterns) of `ngauge --list`: name -> [option names]."""
    out = subprocess.run([exe, "--list"], capture_output=True, text=True, timeout=30).stdout
    mods, pats, cur, section = {}, {}, None, None
    for line in out.splitlines():
        if line in ("modules:", "patterns:"):
            section = mods if line == "modules:" else pats
            continue
        m = re.match(r"^  ([a-z0-9]+) ", line)
        if m and section is not None:
            cur = section.setdefault(m.group(1), [])
            continue
        m = re.match(r"^      --([a-zA-Z0-9-]+)", line)
        if m and cur is not None:
            cur.append(m.group(1))
    return mods, pats


def have_mpi(exe, mods):
    return "mpi" in mods and shutil.which("mpiexec") is not None


def run_ngauge(cmd, out, what):
    """Runs CMD (writing OUT); True when it exited 0 and wrote the file."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        fail("%s: timed out: %s" % (what, " ".join(cmd)))
        return False
    if p.returncode != 0 or not os.path.exists(out):
        fail("%s: exit %d: %s\n  %s" % (what, p.returncode, " ".join(cmd), p.stderr.strip()[-600:]))
        return False
    return True


YIELD = ["--rdma-backend", "shm", "--rdma-poll", "yield"]  # more ranks than cores: waiting ranks yield
SMALL = ["-s", "1,4K", "-c", "5", "-w", "2"]


def fresh_runs(exe, mods):
    """(name, command without -o) of the runs every pattern, module block and row variant comes from."""
    tcp = [exe, "-x", "tcp"]
    runs = [
        ("tcp-pingpong", tcp + ["-p", "pingpong"] + SMALL),
        ("tcp-pingpong-4-raw", tcp + ["--np", "4", "-p", "pingpong", "--raw"] + SMALL),
        ("tcp-pingpong-oneway", tcp + ["-p", "pingpong", "--one-way", "--raw", "--histogram"] + SMALL),
        ("tcp-pingpong-4-oneway-force", tcp + ["--np", "4", "--timer", "clock", "--sync", "force", "-p", "pingpong",
                                               "--one-way"] + SMALL),
        ("tcp-1n-3", tcp + ["--np", "3", "-p", "1n"] + SMALL),
        ("tcp-n1", tcp + ["-p", "n1", "--raw"] + SMALL),
        ("tcp-loggp", tcp + ["-p", "loggp", "-s", "1,256,1K,4K", "-c", "10", "-w", "2", "--raw"]),
        ("tcp-plogp", tcp + ["-p", "plogp", "--raw"] + SMALL),
        ("tcp-alltoall-3", tcp + ["--np", "3", "-p", "alltoall", "--verify"] + SMALL),
        ("tcp-coll-3", tcp + ["--np", "3", "-p", "coll", "--verify", "--raw", "-s", "8,4K", "-c", "3", "-w", "1"]),
        ("tcp-coll-barrier", tcp + ["-p", "coll", "--coll-timing", "barrier", "--coll-type", "double", "-s", "8,4K",
                                    "-c", "3", "-w", "1"]),
        ("tcp-mpbibw-4", tcp + ["--np", "4", "-p", "mpbibw", "--raw"] + SMALL),
        ("tcp-bw", tcp + ["-p", "bw", "--verify", "--bw-window", "8"] + SMALL),
        ("tcp-bibw-4", tcp + ["--np", "4", "-p", "bibw", "--raw"] + SMALL),
        ("tcp-overlap", tcp + ["-p", "overlap", "-s", "4K", "-c", "5", "-w", "2", "--overlap-compute", "0,20",
                               "--overlap-side", "both"]),
        ("tcp-skew", tcp + ["-p", "skew", "-s", "4K", "-c", "5", "-w", "2", "--skew-compute", "0,20", "--raw"]),
        ("tcp-pingpong-clock", tcp + ["--timer", "clock", "--pin", "0", "-p", "pingpong", "--pp-echo", "same"]
         + SMALL),
        ("tcp-ebb-4", tcp + ["--np", "4", "-p", "ebb", "--ebb-rounds", "3", "--ebb-time", "0.02", "--verify", "--raw",
                            "--histogram"]),
        ("tcp-matrix-3", tcp + ["--np", "3", "-p", "matrix", "--verify"] + SMALL),
        ("emu-plogp", [exe, "-x", "emu", "--emu-G2", "0.001", "--emu-threshold", "1K", "-p", "plogp"] + SMALL),
    ]
    if "rma" in mods:
        rma = [exe, "-x", "rma"] + YIELD
        runs += [
            ("rma-rma-3", rma + ["--np", "3", "-p", "rma", "--verify", "--raw"] + SMALL),
            ("rma-overlap", rma + ["-p", "overlap", "--overlap-rma", "-s", "4K", "-c", "5", "-w", "2",
                                   "--overlap-compute", "0,20"]),
            ("rma-skew", rma + ["-p", "skew", "--skew-rma", "-s", "4K", "-c", "5", "-w", "2", "--skew-compute",
                                "0,20"]),
        ]
    if "spipe" in mods:
        runs += [("spipe-pingpong", [exe, "-x", "spipe"] + YIELD + ["-p", "pingpong", "-s", "1,64K", "-c", "5"]),
                 ("spipe-fresh", [exe, "-x", "spipe"] + YIELD + ["--spipe-fresh", "--spipe-c0", "16K", "--spipe-q",
                                                                 "2", "-p", "bw", "-s", "64K", "-c", "5"])]
    if "rdma" in mods:
        runs += [("rdma-bibw", [exe, "-x", "rdma"] + YIELD + ["-p", "bibw"] + SMALL)]
    if have_mpi(exe, mods):
        mpi = ["mpiexec", "-n", "2", exe]
        runs += [
            ("mpi-pingpong", mpi + ["-x", "mpi", "--timer", "mpi", "-p", "pingpong"] + SMALL),
            ("mpi-alltoall", mpi + ["-x", "mpi", "-p", "alltoall"] + SMALL),
            ("mpi-coll", mpi + ["-x", "mpi", "-p", "coll", "-s", "8,4K", "-c", "3", "-w", "1"]),
        ]
        if "mpirma" in mods:
            runs += [("mpirma-rma", mpi + ["-x", "mpirma", "-p", "rma", "-s", "8", "-c", "5", "-w", "2"])]
    return runs


def write_fresh(exe, tmp, mods):
    """Runs fresh_runs; the files written."""
    files = []
    for name, cmd in fresh_runs(exe, mods):
        out = os.path.join(tmp, name + ".json")
        if run_ngauge(cmd + ["-o", out], out, name):
            files.append(out)
    return files


def write_partial(exe, tmp):
    """A checkpoint of a run in progress (no "finished") and the file an interrupted run leaves; their paths."""
    out = os.path.join(tmp, "partial.json")
    cp = os.path.join(tmp, "partial-checkpoint.json")
    p = subprocess.Popen([exe, "-x", "tcp", "-p", "pingpong", "-s", "1-1M", "-c", "3000", "-w", "10", "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    copied = False
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and p.poll() is None:
            try:
                with open(out, encoding="utf-8") as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                doc = None
            if doc and doc.get("results") and not doc.get("complete") and "finished" not in doc:
                with open(cp, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
                copied = True
                break
            time.sleep(0.05)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    files = []
    if copied:
        files.append(cp)
    else:
        fail("partial: no checkpoint with rows was seen while the run went on")
    try:
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        if p.returncode == 130 and doc["complete"] is False and "finished" in doc:
            files.append(out)
        else:
            fail("partial: interrupted run exited %d, complete %r: %s" % (p.returncode, doc.get("complete"), err))
    except (OSError, ValueError) as e:
        fail("partial: no file after the interruption: %s" % e)
    return files


# ---- parts ------------------------------------------------------------------------------------------------

def part_files(exe, tmp):
    for name in sorted(os.listdir(FIXTURES)):
        if not name.endswith(".json"):
            continue
        lines = validate.file_problems(os.path.join(FIXTURES, name))
        if name in NOT_THE_FORMAT:
            if lines:
                ok("fixture %s is rejected, as it should be: %s" % (name, lines[0].split(": ", 1)[1]))
            else:
                fail("fixture %s matches the schema but is not the format on purpose" % name)
        elif lines:
            fail("fixture %s:\n  %s" % (name, "\n  ".join(lines[:20])))
        else:
            ok("fixture %s" % name)
    mods, _ = listing(exe)
    files = write_fresh(exe, tmp, mods) + write_partial(exe, tmp)
    seen_patterns, seen = set(), set()
    for path in files:
        lines = validate.file_problems(path)
        name = os.path.basename(path)
        if lines:
            fail("%s:\n  %s" % (name, "\n  ".join(lines[:30])))
            continue
        doc = validate.load(path)
        seen_patterns.add(doc["pattern"])
        seen.update(k for k in doc if k not in ("results",))
        seen.update("row:" + k for r in doc["results"] for k in r)
        ok("%s (%s over %s, %d rows, complete %s)" % (name, doc["pattern"], doc["module"], len(doc["results"]),
                                                       doc["complete"]))
    missing = set(PATTERNS) - seen_patterns
    if missing:
        fail("no valid fresh file of pattern(s) %s" % ", ".join(sorted(missing)))
    want = {"spipe", "timer_check", "row:raw", "row:pairs", "row:predicted_us", "finished"}
    if "spipe" not in mods:
        want -= {"spipe", "row:predicted_us"}
    if want - seen:
        fail("the fresh files never had %s" % ", ".join(sorted(want - seen)))


def mutate(doc, path, value):
    """Sets PATH (a list of keys) of DOC to VALUE; DELETE removes it; RENAME(new) renames the last key."""
    node = doc
    for k in path[:-1]:
        node = node[k]
    if value is DELETE:
        del node[path[-1]]
    elif isinstance(value, Rename):
        node[value.new] = node.pop(path[-1])
    else:
        node[path[-1]] = value


DELETE = object()


class Rename:
    def __init__(self, new):
        self.new = new


def part_broken(exe, tmp):
    base = os.path.join(tmp, "pp.json")
    bwf = os.path.join(tmp, "bw.json")
    if not (run_ngauge([exe, "-x", "tcp", "-p", "pingpong", "-o", base] + SMALL, base, "pingpong")
            and run_ngauge([exe, "-x", "tcp", "-p", "bw", "-o", bwf] + SMALL, bwf, "bw")):
        return
    tool = [sys.executable, os.path.join(HERE, "validate.py")]
    p = subprocess.run(tool + [base, bwf], capture_output=True, text=True)
    if p.returncode != 0 or p.stdout:
        fail("fresh files: exit %d: %s" % (p.returncode, p.stdout))
        return
    ok("fresh pingpong and bw files: exit 0, nothing printed")
    # (what, file, [(path, value)], {the paths the messages must name: a word each message must have})
    cases = [
        ("removed required key", base, [(["results", 1, "latency_us"], DELETE)],
         {"results[1].latency_us": "required key missing"}),
        ("mistyped key", base, [(["results", 0, "latency_us"], Rename("latency_uss"))],
         {"results[0].latency_uss": "unknown key", "results[0].latency_us": "required key missing"}),
        ("wrong type", base, [(["env", "cores"], "2")], {"env.cores": "is not of type 'integer'"}),
        ("wrong type in STATS", base, [(["results", 0, "bandwidth_MBps", "median"], "fast")],
         {"results[0].bandwidth_MBps.median": "is not of type"}),
        ("removed top-level key", base, [(["env"], DELETE)], {"env": "required key missing"}),
        ("removed parameter", base, [(["parameters", "count"], DELETE)],
         {"parameters.count": "required key missing"}),
        ("mistyped parameter", base, [(["parameters", "pp-echo"], Rename("pp_echo"))],
         {"parameters.pp_echo": "unknown key", "parameters.pp-echo": "required key missing"}),
        ("another module's option", base, [(["parameters", "ib-dev"], "mlx5_0")],
         {"parameters.ib-dev": "not a key of this file's module or pattern"}),
        ("unknown word", base, [(["timer", "name"], "rdtsc")], {"timer.name": "is not one of"}),
        ("removed key of a STATS", base, [(["results", 0, "bandwidth_MBps", "ci95"], DELETE)],
         {"results[0].bandwidth_MBps.ci95": "required key missing"}),
        ("another pattern's row key", base, [(["results", 0, "algorithm"], "bruck")],
         {"results[0].algorithm": "unknown key"}),
        ("another pattern's block", base, [(["loggp"], {"n": 16})], {"loggp": "the block of pattern loggp"}),
        ("another module's block", base, [(["spipe"], {})], {"spipe": "the block of module spipe"}),
        ("pairs with 2 ranks", base, [(["results", 0, "aggregate_bandwidth_MBps"], 1.0)],
         {"results[0].aggregate_bandwidth_MBps": "only with more than 2 ranks"}),
        ("complete without finished", base, [(["finished"], DELETE)], {"finished": "required key missing"}),
        ("mistyped block key", bwf, [(["bw", "window"], Rename("windw"))],
         {"bw.windw": "unknown key", "bw.window": "required key missing"}),
        ("removed block", bwf, [(["bw"], DELETE)], {"bw": "required key missing"}),
        ("wrong type in a row", bwf, [(["results", 1, "messages"], "many")],
         {"results[1].messages": "is not of type 'integer'"}),
        ("fraction in a count", bwf, [(["results", 1, "count"], 2.5)], {"results[1].count": "is not of type"}),
        ("negative size", bwf, [(["results", 0, "size"], -1)], {"results[0].size": "minimum"}),
    ]
    for what, src, muts, want in cases:
        doc = validate.load(src)
        for path, value in muts:
            mutate(doc, path, value)
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        p = subprocess.run(tool + [bad], capture_output=True, text=True)
        lines = [ln[len(bad) + 2:] for ln in p.stdout.splitlines() if ln.startswith(bad + ": ")]
        named = {ln.split(": ", 1)[0]: ln for ln in lines}
        problems = []
        if p.returncode != 1:
            problems.append("exit %d, expected 1" % p.returncode)
        for path, word in want.items():
            if path not in named:
                problems.append("no line names %s" % path)
            elif word not in named[path]:
                problems.append("the line of %s does not say %r: %s" % (path, word, named[path]))
        extra = [ln for ln in lines if ln.split(": ", 1)[0] not in want]
        if extra or len(lines) != len(p.stdout.splitlines()):
            problems.append("lines about other keys: %s" % (extra or p.stdout))
        if problems:
            fail("%s: %s\n  output: %s" % (what, "; ".join(problems), p.stdout.strip()))
        else:
            ok("%s: %s" % (what, " | ".join(lines)))
    # not JSON as ngauge writes it
    for what, text in (("NaN", '{"schema": NaN}'), ("repeated key", '{"schema": 1, "schema": 2}'),
                       ("cut file", '{"schema": "ngauge-result/1", ')):
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(text)
        p = subprocess.run(tool + [bad], capture_output=True, text=True)
        if p.returncode == 1 and "not a readable JSON document" in p.stdout:
            ok("%s: %s" % (what, p.stdout.strip()))
        else:
            fail("%s: exit %d: %s" % (what, p.returncode, p.stdout))
    p = subprocess.run(tool, capture_output=True, text=True)
    if p.returncode == 2:
        ok("no file: usage, exit 2")
    else:
        fail("no file: exit %d" % p.returncode)


def schema_names(schema):
    """(keys, names, words): every property name, every name a propertyNames enum allows, every enum word."""
    keys, names, words = set(), set(), set()

    def walk(x, in_params=False):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "properties" and isinstance(v, dict):
                    keys.update(v)
                if k == "propertyNames" and isinstance(v, dict):
                    names.update(v.get("enum", []))
                elif k == "enum":
                    words.update(w for w in v if isinstance(w, str))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(schema)
    return keys, names, words


def part_doc(exe, tmp):
    with open(validate.SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    keys, names, words = schema_names(schema)
    quoted = set(re.findall(r'"([^"\s]+)"', doc))
    as_key = set(re.findall(r'"([^"\s<>]+)"\s*:', doc))
    marked = set(re.findall(r'[`"]([^`"\s]+)[`"]', doc))
    undocumented = sorted(keys - quoted)
    if undocumented:
        fail("keys of the schema not in doc/result-format.md (as \"key\"): %s" % ", ".join(undocumented))
    else:
        ok("every one of the schema's %d keys is in doc/result-format.md" % len(keys))
    unknown = sorted(as_key - keys - names)
    if unknown:
        fail("keys doc/result-format.md writes (\"key\":) that the schema has not: %s" % ", ".join(unknown))
    else:
        ok("every one of the %d keys doc/result-format.md writes as \"key\": is in the schema" % len(as_key))
    unsaid = sorted(words - marked)
    if unsaid:
        fail("known words of the schema not in doc/result-format.md (`word` or \"word\"): %s" % ", ".join(unsaid))
    else:
        ok("every one of the schema's %d known words is in doc/result-format.md" % len(words))
    # the schema says what each key means: a description for every property (the conditions under allOf
    # only add constraints to keys described elsewhere)
    bare = []

    def walk(x, where):
        if isinstance(x, dict):
            for k, v in x.get("properties", {}).items():
                if isinstance(v, dict) and "description" not in v and "$ref" not in v:
                    bare.append(where + k)
            for k, v in x.items():
                if k not in ("allOf", "if", "then", "else"):
                    walk(v, where + k + "/")
        elif isinstance(x, list):
            for v in x:
                walk(v, where)
    walk(schema, "")
    if bare:
        fail("properties without a description: %s" % ", ".join(sorted(bare)[:40]))
    else:
        ok("every property of the schema has a description (or is a $ref to a definition that has)")


def part_options(exe, tmp):
    with open(validate.SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    params = schema["properties"]["parameters"]
    help_text = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30).stdout
    run_opts = re.findall(r"^  (?:-\w, |    )--([a-z0-9-]+)", help_text, re.M)
    dropped = {"list", "help", "version", "timer-info", "module", "pattern", "man",
               "completion"}  # driver switches (core/driver.c)
    run_opts = [o for o in run_opts if o not in dropped]
    mods, pats = listing(exe)
    mod_opts = set(o for v in mods.values() for o in v)
    pat_opts = set(o for v in pats.values() for o in v)
    if not run_opts or not mods or not pats:
        fail("could not read the options from ngauge --help and --list")
        return
    # run options added after files were written: allowed, not required (their description says so)
    required_opts = [o for o in run_opts if o not in ADDED_LATER or o in params["required"]]
    for o in ADDED_LATER:
        if o not in params["properties"] or "absent in files written before" not in params["properties"][o].get(
                "description", ""):
            fail("parameters: %s, added later, is not in the schema as an optional key" % o)
    if sorted(params["required"]) != sorted(required_opts):
        fail("parameters: the schema requires %s, ngauge --help lists %s" % (sorted(params["required"]),
                                                                             sorted(required_opts)))
    else:
        ok("parameters: the run's %d options are required" % len(run_opts))
    everything = set(run_opts) | mod_opts | pat_opts
    named = set(params["properties"])
    # modules built without their library (MPI, verbs, libfabric) are not listed: their options may be extra
    if everything - named:
        fail("options the schema does not name (add them to parameters): %s" % ", ".join(sorted(everything - named)))
    extra = named - everything
    if extra and len(mods) == len(schema["properties"]["module"]["enum"]):
        fail("parameters the schema names that are no option of ngauge: %s" % ", ".join(sorted(extra)))
    else:
        ok("parameters: the schema names every option of ngauge (%d)" % len(named))
    branches = {}
    for a in schema["allOf"]:
        cond = a.get("if", {}).get("properties", {})
        par = a.get("then", {}).get("properties", {}).get("parameters")
        if par is None:
            continue
        for kind in ("module", "pattern"):
            if set(cond) == {kind}:
                branches[(kind, cond[kind]["const"])] = par
    all_mod = set(o for (k, _), b in branches.items() if k == "module"
                  for o in b["required"] + b["propertyNames"]["not"]["enum"])
    for kind, table, names in (("module", mods, schema["properties"]["module"]["enum"]),
                               ("pattern", pats, schema["properties"]["pattern"]["enum"])):
        listed = set(table)
        if not listed <= set(names) or (kind == "pattern" and listed != set(names)):
            fail("%ss: ngauge lists %s, the schema knows %s" % (kind, sorted(listed), names))
        every = mod_opts if kind == "module" else pat_opts
        if kind == "module":
            every = every | (all_mod - mod_opts)
        for name in names:
            b = branches.get((kind, name))
            if b is None:
                fail("%s %s: no parameters branch in the schema" % (kind, name))
                continue
            if name not in table:
                continue
            mine = set(table[name]) | (READ_NOT_RECORDED.get(name, set()) if kind == "pattern" else set())
            req, forbidden = set(b["required"]), set(b["propertyNames"]["not"]["enum"])
            problems = []
            if not req <= mine:
                problems.append("requires %s, which --list does not show" % sorted(req - mine))
            if forbidden != every - mine:
                problems.append("forbids %s, should forbid %s" % (sorted(forbidden), sorted(every - mine)))
            if problems:
                fail("%s %s: %s" % (kind, name, "; ".join(problems)))
            else:
                ok("%s %s: requires %s, allows %s" % (kind, name, sorted(req), sorted(mine - req) or "no more"))


def shape(line):
    """'results[3].window: ...' -> 'results[].window'."""
    return re.sub(r"\[\d+\]", "[]", line.split(": ", 1)[0])


def part_integers(exe, tmp):
    mods, _ = listing(exe)
    files = write_fresh(exe, tmp, mods)
    found = set()
    for path in files:
        doc = validate.load(path)
        plain = set(validate.problems(doc))
        if plain:
            fail("%s does not match the schema: %s" % (os.path.basename(path), sorted(plain)[:5]))
            continue
        for line in validate.problems(doc, strict_integers=True):
            where = doc["module"] if line.startswith(doc["module"] + ".") else doc["pattern"]
            if "is not of type 'integer'" not in line:
                fail("%s: %s" % (os.path.basename(path), line))
            found.add((where, shape(line)))
    ran = {validate.load(f)["pattern"] for f in files} | {validate.load(f)["module"] for f in files}
    known = {k for k in KNOWN_FLOAT_COUNTS if k[0] in ran}
    new = sorted(found - KNOWN_FLOAT_COUNTS)
    fixed = sorted(known - found)
    for k in sorted(found & KNOWN_FLOAT_COUNTS):
        print("expected failure (writer fix pending): %s %s written as a real" % k)
    if new:
        fail("counts written as reals that are not known: %s (write them as integers)" % new)
    if fixed:
        fail("known float counts now written as integers: remove %s from KNOWN_FLOAT_COUNTS" % fixed)
    if not new and not fixed:
        ok("counts written as reals: exactly the %d known writer sites, nothing else" % len(found))


PARTS = {"files": part_files, "broken": part_broken, "doc": part_doc, "options": part_options,
         "integers": part_integers}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in PARTS or not os.access(sys.argv[1], os.X_OK):
        print("usage: test_schema.py NGAUGE %s" % "|".join(PARTS), file=sys.stderr)
        return 1
    if not validate.available():
        print("SKIP: python3-jsonschema is not installed (Debian package python3-jsonschema)")
        return 77
    with tempfile.TemporaryDirectory(prefix="ngauge-schema-") as tmp:
        PARTS[sys.argv[2]](os.path.abspath(sys.argv[1]), tmp)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
