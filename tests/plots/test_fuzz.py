#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Result files are untrusted input: a fuzz test of `plot` and `report`.

Every fixture in data/ is mutated, one field at a time: every string (at any
depth) set to quotes, newlines, gnuplot commands, shell substitutions, HTML
and script tags and very long text; numbers set to NaN, Infinity, huge and
negative values; keys removed; values of the wrong type.  Each mutated file
goes through `ngauge plot` and `ngauge report`, and:

- no command runs: the gnuplot `system` and shell payloads would create a
  canary file, which must never exist;
- nothing crashes (no signal), the status is 0 (drawn, the text quoted) or
  1 or 2 with exactly one line on stderr, starting "ngauge: ";
- a report holds no markup of the file's: no "<script", no "<img".

The mutations are chosen by a fixed seed (same run, same files), every string
field (each shape of path once, over all fixtures) is hit by the injection
payloads and quotes, and the other kinds are sampled.  Needs gnuplot (77 without it).
"""
import json
import os
import random
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

# {C} is the canary's path
STRINGS = [
    "pscw\nsystem 'touch {C}'\n#",
    "x'; system \"touch {C}\"; print '",
    "`touch {C}`",
    "$(touch {C})",
    "'",
    "\"",
    "\n",
    "a\\'\nset output '{C}'\nplot 1\n#",
    "<script>alert(1)</script>",
    "</td></tr></table><img src=x onerror=alert(1)>",
    "%s%n%x",
    "\\",
    "",
    "x" * 20000,
]
NUMBERS = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, -1, 2 ** 64, -(2 ** 63) - 1, 0]
WRONG = [[], {}, "text", None, True, [1, 2, 3]]


def paths(doc, prefix=()):
    """Every (path, value) of the document, depth first."""
    yield prefix, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, prefix + (i,))


def setting(doc, path, value):
    """A copy of @doc with @path set to @value (or removed when value is DELETE)."""
    out = json.loads(json.dumps(doc))
    node = out
    for k in path[:-1]:
        node = node[k]
    if value is DELETE:
        if isinstance(node, dict):
            del node[path[-1]]
        else:
            node.pop(path[-1])
    else:
        node[path[-1]] = value
    return out


DELETE = object()


def shape(path):
    """A path with list indices as "*" (results.3.sync -> results.*.sync)."""
    return tuple("*" if isinstance(k, int) else k for k in path)


def mutations(doc, rng, canary, seen):
    """(description, document) pairs for one fixture.

    Every string field of a shape not yet seen (in any fixture) gets the
    injections and quotes; the other strings, numbers, removed keys and wrong
    types are sampled."""
    all_paths = [p for p, _ in paths(doc) if p]
    strings = []
    for p, v in paths(doc):
        if p and isinstance(v, str) and shape(p) not in seen:
            seen.add(shape(p))
            strings.append(p)
    numbers = [p for p, v in paths(doc) if p and isinstance(v, (int, float)) and not isinstance(v, bool)]
    out = []
    for p in strings:
        for s in STRINGS[:5]:
            out.append(("%s = %r" % (p, s[:24]), setting(doc, p, s.replace("{C}", canary))))
    for p in rng.sample(strings, min(len(strings), 3)):
        for s in STRINGS[5:]:
            out.append(("%s = %r" % (p, s[:24]), setting(doc, p, s.replace("{C}", canary))))
    for p in rng.sample(numbers, min(len(numbers), 4)):
        out.append(("%s = number" % (p,), setting(doc, p, rng.choice(NUMBERS))))
    # keys removed: a sample of the top level's and of the first row's
    top = list(doc.keys())
    for k in rng.sample(top, min(len(top), 4)):
        out.append(("remove %s" % k, setting(doc, (k,), DELETE)))
    if doc.get("results") and isinstance(doc["results"][0], dict):
        first = list(doc["results"][0].keys())
        for k in rng.sample(first, min(len(first), 3)):
            out.append(("remove results[0].%s" % k, setting(doc, ("results", 0, k), DELETE)))
    for p in rng.sample(all_paths, min(len(all_paths), 4)):
        out.append(("%s wrong type" % (p,), setting(doc, p, rng.choice(WRONG))))
    return out


def check(exe, tmp, canary, job):
    idx, fixture, what, doc = job
    src = os.path.join(tmp, "f%d.json" % idx)
    with open(src, "w", encoding="utf-8") as f:
        # Python writes NaN/Infinity, which JSON has not: those files are invalid on purpose
        json.dump(doc, f)
    fails = []
    for cmd, ext in (("plot", "png"), ("report", "html")):
        out = os.path.join(tmp, "o%d-%s.%s" % (idx, cmd, ext))
        rc, _, err = pc.run([exe, cmd, src, "-o", out], cwd=tmp)
        tag = "%s %s %s" % (cmd, fixture, what)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if rc < 0:
            fails.append("%s: killed by signal %d" % (tag, -rc))
        elif rc not in (0, 1, 2):
            fails.append("%s: exit %d" % (tag, rc))
        elif rc != 0 and (len(lines) != 1 or not lines[0].startswith("ngauge: ")):
            fails.append("%s: exit %d with %d lines on stderr: %r" % (tag, rc, len(lines), err[:400]))
        if cmd == "report" and rc == 0 and os.path.exists(out):
            with open(out, encoding="utf-8", errors="replace") as f:
                html = f.read()
            for bad in ("<script", "<img src=x", "</td></tr></table><img"):
                if bad in html:
                    fails.append("%s: the report holds %r" % (tag, bad))
    if os.path.exists(canary):
        fails.append("%s %s: a command ran (the canary exists)" % (fixture, what))
    return fails


def body(exe, tmp):
    canary = os.path.join(tmp, "CANARY")
    rng = random.Random(19)
    jobs = []
    seen = set()
    for name in sorted(set(list(pc.FIXTURES) + pc.RMA_FIXTURES + pc.COLL_FIXTURES)):
        doc = pc.load(name)
        for what, mutated in mutations(doc, rng, canary, seen):
            jobs.append((len(jobs), name, what, mutated))
    fails = []
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as ex:
        for f in ex.map(lambda j: check(exe, tmp, canary, j), jobs):
            fails.extend(f)
            if os.path.exists(canary):
                break
    if fails:
        raise pc.Failed("%d of %d mutated files:\n  %s" % (len(fails), len(jobs), "\n  ".join(fails[:20])))
    print("%d mutated result files through plot and report: no command ran, no crash, one line each" %
          len(jobs))


def main():
    exe = pc.ngauge()
    pc.need_gnuplot()
    with tempfile.TemporaryDirectory(prefix="ngauge-fuzz-") as tmp:
        try:
            body(exe, tmp)
        except pc.Failed as e:
            print("FAIL: %s" % e)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
