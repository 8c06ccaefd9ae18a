#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tree is the architecture: this test keeps it so.

It reads every C source and header of the tree (tests/ and build directories
excepted) and fails on
  1. an include circle: files that include each other, directly or not;
  2. a call circle: files whose functions call (or take the address of)
     functions defined in each other, directly or not;
  3. a pattern including a transport: a module's header or a network
     library's (MPI, verbs, RDMA CM, libfabric);
  4. a lower floor including a higher one, or calling a function defined
     on a higher one (FLOORS below); inside core/ and patterns/ the same
     between their sub-floors (SUBFLOORS), and between two files of a
     sub-floor whose files stand apart (APART: one pattern never uses
     another);
  5. a file over MAX_LINES lines;
  6. a source file that no floor (or, in a floor cut into sub-floors, no
     sub-floor) claims, a floor's or sub-floor's glob that claims no file
     (a path that moved), and an exception below that no longer applies (so
     that the lists only ever shrink).

Usage: layering.py [SRC]   (SRC defaults to $NGAUGE_SRC).  Exit 0 when the tree
is clean, 1 with one line per finding otherwise, 2 on a usage error.

How the graphs are made (no compiler involved, so that the test runs where
the tree builds and on a bare copy of it):
  - includes: every #include line, "..." and <...>, resolved like the
    compiler does: the including file's folder, then Meson's include
    directories (INCLUDE_DIRS).  Whatever resolves to no file of the tree
    (system headers, the generated config.h) is no edge.
  - calls: comments, strings and preprocessor lines other than #define are
    blanked; a function definition is a name followed by a parameter list and
    a body at file scope; a reference is any later use of that name that is
    not a member (after . or ->) and not a prototype.  A file refers to a
    function of another file when it uses a name that the other file defines
    with external linkage (or any function a header defines, static inline).
    Calls through operations tables are no edges: the table is the contract.
"""

import fnmatch
import os
import re
import sys

# No file (tests excepted) is longer than MAX_LINES.
MAX_LINES = 1000

# Meson's include directories (meson.build: include_directories(...)).
INCLUDE_DIRS = [".", "core", "base"]

# Folders that are not the program's sources.
SKIP_DIRS = {"tests", "subprojects"}

# The floors, from the bottom: a file includes only its own floor or lower
# ones, and calls only functions defined there.  Each entry: (floor, its name,
# path globs).  The first entry whose glob matches a file's path decides its
# floor, so a layer's folder is named before modules/*, the floor of the
# modules (one folder per module family, named as -x names it).  A glob that
# claims no file is a finding (a folder renamed or gone: the list follows).
FLOORS = [
    (0, "base", ["base/*"]),
    (1, "timers, analysis", ["timers/*", "analysis/*"]),
    (2, "core", ["core/*"]),
    # The poll-loop watchdog every busy-polling module floor uses, the verbs
    # core first: below all of them.
    (3, "modules/watch", ["modules/watch/*"]),
    # The verbs core, the RDMA layer (and its backends and ngauge-ofi.so's
    # entry), the channel: the layers the modules stand on, none a module.
    (4, "modules/verbs", ["modules/verbs/*"]),
    (5, "modules/rdmalayer", ["modules/rdmalayer/*"]),
    (6, "modules/chan", ["modules/chan/*"]),
    (7, "modules", ["modules/*"]),
    (8, "patterns", ["patterns/*"]),
    (9, "plots", ["plots/*"]),
    # The program's entry, and the reference programs the benchmarks compare
    # with (bench/: stand-alone, they include nothing of ngauge).
    (10, "main", ["main.c", "bench/*"]),
]

# The sub-floors of a floor, from the bottom, by the floor's name: inside the
# floor the same rule again (a file includes only its own sub-floor or lower
# ones, and calls only functions defined there).  Each entry: (sub-floor, its
# name, path globs); the first glob that matches decides, and a file of the
# floor that no sub-floor claims is a finding: a new file of core/ is placed
# here by whoever adds it.  A source and its header stand on one sub-floor
# (a finding otherwise).
SUBFLOORS = {
    "core": [
        # What a value may be: options (the getters options.h declares are
        # args.c's, a sub-floor up), sizes, --allow's networks, --auth's key.
        (0, "core: values", ["core/options.[ch]", "core/sizes.[ch]", "core/allow.[ch]", "core/auth.[ch]"]),
        # A run's parts, each one object that knows no module or pattern:
        # the values given (args), the ranks (the bootstrap's collectives),
        # the result sink (which draws the progress line), the manifest's
        # data and its warnings (manifest.c, which gathers, is a service).
        (1, "core: a run's parts", ["core/args.[ch]", "core/bootstrap.[ch]", "core/results.[ch]",
                                    "core/results_priv.h", "core/results_text.[ch]", "core/manifest_warn.[ch]"]),
        # The interfaces modules and patterns are written against (pattern.h
        # calls down into the sink for its progress line).
        (2, "core: interfaces", ["core/module.[ch]", "core/caps.c", "core/pattern.h"]),
        # What a run gathers and looks up on top of them: the env block, the
        # manifest, the global clock, plugins, the registry and who reads
        # which option.
        (3, "core: services", ["core/env.[ch]", "core/manifest.[ch]", "core/clocksync.[ch]", "core/plugin.[ch]", "core/watchdog.[ch]",
                               "core/registry.[ch]", "core/readers.[ch]"]),
        # How a process becomes a rank: the launches' constructors
        # (launch.h), the bootstraps behind them, the --server loop.
        (4, "core: launches", ["core/launch.h", "core/boot_*.c", "core/server.c"]),
        # The driver: its command line, --man and the completions,
        # --server/--client pairing, the run.
        (5, "core: driver", ["core/pair.[ch]", "core/docgen.[ch]", "core/cmdline.[ch]", "core/driver*.[ch]",
                             "core/stages.h"]),
    ],
    "patterns": [
        # Helpers with no measurement of their own: roles, buffers, payloads
        # and statistics of figures, the calibrated computation, node
        # membership, the rma pattern's --verify contents.
        (0, "patterns: helpers", ["patterns/engine/common.[ch]", "patterns/engine/compute.[ch]",
                                  "patterns/engine/nodes.[ch]", "patterns/engine/rma_check.[ch]",
                                  "patterns/engine/cells.[ch]"]),
        # The measuring skeleton: samples (sampler), the global clock's
        # windows (gclock), the offered load's checks and verdict (offered).
        (1, "patterns: measuring", ["patterns/engine/sampler.[ch]", "patterns/engine/gclock.[ch]",
                                    "patterns/engine/offered.[ch]"]),
        # The engines a pattern runs on: the measurement session, the
        # parameter assessments (loggp, plogp), the progress engine
        # (overlap, skew), the rma epochs, the alltoall algorithms.
        (2, "patterns: engines", ["patterns/engine/session.[ch]", "patterns/engine/assess.[ch]",
                                  "patterns/engine/progress.[ch]", "patterns/engine/rma_epochs.[ch]",
                                  "patterns/engine/alltoall_algos.[ch]", "patterns/engine/coll_algos.[ch]",
                                  "patterns/engine/coll_model.[ch]"]),
        # The patterns, one file each (a new file of patterns/ is one).
        (3, "patterns: the patterns", ["patterns/*"]),
    ],
}
# Sub-floors whose files stand apart: a file includes or calls nothing of
# another file of its sub-floor (its own header, x.h of x.c, excepted).  What
# two patterns share is an engine's.
APART = {"patterns: the patterns"}

# Floors that may not see a transport (item 3).
NO_TRANSPORT = {"patterns"}
# A network library's header, or a module's.
TRANSPORT = re.compile(r"^((mpi|mpio)\.h$|infiniband/|rdma/|rdma_|fabric|ofi|(\.\./)*modules/)")

# Circles between files of one module family that its layout change removes,
# each entry (kind, {files}): kind "include" or "call", the files as the
# finding names them (x.[ch] for a source and its header in call circles).
# The test fails on an entry that is no longer a circle.  None today.
KNOWN_CIRCLES = []

KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "alignof", "_Alignof", "do", "else", "case",
    "defined", "__attribute__", "_Static_assert", "static_assert", "_Generic", "__typeof__", "typeof",
    "offsetof", "__builtin_offsetof", "va_arg",
}

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
TOKEN_RE = re.compile(r"[A-Za-z_]\w*|->|[(){};,.=\[\]]|\S")


def claim(path, table):
    """(number, name) of the first entry of @table whose glob matches @path."""
    for number, name, globs in table:
        for g in globs:
            if fnmatch.fnmatchcase(path, g):
                return number, name
    return None


def floor_of(path):
    return claim(path, FLOORS)


def place_of(path):
    """Where @path stands: (floor, sub-floor, floor's name, sub-floor's
    name), the sub-floor 0 and its name the floor's in a floor not cut into
    sub-floors; a string saying what does not claim it otherwise."""
    fl = floor_of(path)
    if fl is None:
        return "no floor claims this file (add its folder to FLOORS in tests/style/layering.py)"
    if fl[1] not in SUBFLOORS:
        return fl[0], 0, fl[1], fl[1]
    sub = claim(path, SUBFLOORS[fl[1]])
    if sub is None:
        return f"no sub-floor of {fl[1]} claims this file (add it to SUBFLOORS in tests/style/layering.py)"
    return fl[0], sub[0], fl[1], sub[1]


def above(f, here, g, there):
    """What is wrong with @f (standing at @here) using @g (at @there), or None."""
    if there[0] > here[0]:
        return f"a higher floor ({there[2]} above {here[2]})"
    if there[0] == here[0] and there[1] > here[1]:
        return f"a higher sub-floor ({there[3]} above {here[3]})"
    if there[:2] == here[:2] and here[3] in APART and f[:-2] != g[:-2]:
        return f"another file of {here[3]}, which use none of each other"
    return None


def is_build_dir(d):
    return os.path.exists(os.path.join(d, "build.ninja")) or os.path.isdir(os.path.join(d, "meson-private"))


def collect(src):
    """Relative paths of the C sources and headers of the tree, sorted."""
    files = []
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d.startswith(".") or (rel == "." and d in SKIP_DIRS) or is_build_dir(full):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            if f.endswith((".c", ".h")):
                files.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(files)


def resolve(src, files, path, kind, name):
    """The tree file an #include names, or None."""
    cands = [] if kind == "<" else [os.path.join(os.path.dirname(path), name)]
    cands += [os.path.join(d, name) for d in INCLUDE_DIRS]
    for c in cands:
        c = os.path.normpath(c)
        if c in files:
            return c
    return None


def strip_code(text):
    """Comments, string and character literals blanked (newlines kept), and
    preprocessor lines other than #define (with their continuations)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    lines = "".join(out).split("\n")
    cont = define = False
    for k, line in enumerate(lines):
        if cont:
            keep = define
        elif line.lstrip().startswith("#"):
            define = keep = re.match(r"\s*#\s*define\b", line) is not None
            # The macro's own name is no reference.
            line = re.sub(r"#\s*define\s+\w+", " ", line, count=1)
        else:
            continue
        cont = line.rstrip().endswith("\\")
        lines[k] = line if keep else ""
    return "\n".join(lines)


def scan_functions(text):
    """(defined, static_names, refs): the functions a file defines with a body
    at file scope, those of them that are static, and every identifier it
    uses that could name a function (not a member, not a prototype)."""
    toks = TOKEN_RE.findall(strip_code(text))
    defined, static, refs = set(), set(), set()
    depth = 0
    decl_start = 0  # index of the first token of the current file-scope declaration
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t == "{":
            depth += 1
        elif t == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                decl_start = i + 1
        elif t == ";" and depth == 0:
            decl_start = i + 1
        elif re.match(r"[A-Za-z_]", t) and t not in KEYWORDS:
            prev = toks[i - 1] if i else ""
            nxt = toks[i + 1] if i + 1 < n else ""
            if depth == 0 and nxt == "(" and prev not in ("=", ",", "(", "return"):
                # A declarator: a prototype, or a definition when a body follows.
                j, level = i + 1, 0
                while j < n:
                    if toks[j] == "(":
                        level += 1
                    elif toks[j] == ")":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                if j + 1 < n and toks[j + 1] == "{":
                    defined.add(t)
                    if "static" in toks[decl_start:i]:
                        static.add(t)
                # Parameter names and types are no references either.
                i = j + 1
                continue
            if prev not in (".", "->"):
                refs.add(t)
        i += 1
    return defined, static, refs


def tarjan(nodes, edges):
    """Strongly connected components with more than one node (or a self loop)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def one_cycle(comp, edges):
    """A shortest path around the circle through the component's first file."""
    start, members = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp + [start]


def main(argv):
    src = argv[1] if len(argv) > 1 else os.environ.get("NGAUGE_SRC")
    if not src or not os.path.isdir(src):
        print("usage: layering.py SRC (or NGAUGE_SRC=SRC)", file=sys.stderr)
        return 2
    files = collect(src)
    fileset = set(files)
    if not files:
        print(f"FAIL: no C sources under {src}")
        return 1
    bad = []
    texts = {}
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
            texts[f] = fh.read()

    # Floors and sub-floors, sizes.
    floors = {}
    for f in files:
        pl = place_of(f)
        if isinstance(pl, str):
            bad.append(f"{f}: {pl}")
        else:
            floors[f] = pl
    for table in [FLOORS] + list(SUBFLOORS.values()):
        for _, name, globs in table:
            for g in globs:
                if not any(fnmatch.fnmatchcase(f, g) for f in files):
                    bad.append(f"{g}: a glob of {name} that claims no file: fix it in tests/style/layering.py")
    for f in files:
        h = f[:-2] + ".h"
        if f.endswith(".c") and h in floors and f in floors and floors[f][:2] != floors[h][:2]:
            bad.append(f"{f}: stands on {floors[f][3]}, its header {h} on {floors[h][3]}: one place for both")
    for f in files:
        n = texts[f].count("\n")
        if n > MAX_LINES:
            bad.append(f"{f}: {n} lines, more than {MAX_LINES}")

    # Includes: transports in patterns, floors, the graph.
    inc = {f: set() for f in files}
    for f in files:
        text = texts[f]
        for m in INCLUDE_RE.finditer(text):
            kind, name = m.group(1), m.group(2).strip()
            line = text.count("\n", 0, m.start()) + 1
            target = resolve(src, fileset, f, kind, name)
            here = floors.get(f)
            if here and here[2] in NO_TRANSPORT and (
                    TRANSPORT.match(name) or (target and target.startswith("modules/"))):
                bad.append(f"{f}:{line}: a pattern includes a transport's header ({kind}{name})")
            if target is None or target == f:
                if target == f:
                    inc[f].add(f)
                continue
            inc[f].add(target)
            there = floors.get(target)
            wrong = here and there and above(f, here, target, there)
            if wrong:
                bad.append(f"{f}:{line}: includes {target}, {wrong}")

    # Calls.
    scans = {f: scan_functions(texts[f]) for f in files}
    owners = {}
    for f, (defined, static, _) in scans.items():
        for name in defined:
            if f.endswith(".h") or name not in static:
                owners.setdefault(name, set()).add(f)
    # A header and the source of the same name are one unit for calls: the
    # header's inline functions are that source's contract.
    def unit(f):
        stem = f[:-2]
        return stem + ".[ch]" if stem + ".c" in fileset and stem + ".h" in fileset else f

    units = sorted({unit(f) for f in files})
    calls = {u: set() for u in units}
    for f, (defined, _, refs) in sorted(scans.items()):
        used = {}
        for name in refs - defined:
            for g in owners.get(name, ()):
                if unit(g) != unit(f):
                    calls[unit(f)].add(unit(g))
                if g != f:
                    used.setdefault(g, set()).add(name)
        # Floors: a file calls down or level, never up.
        for g, names in sorted(used.items()):
            here, there = floors.get(f), floors.get(g)
            wrong = here and there and above(f, here, g, there)
            if wrong:
                names = sorted(names)
                shown = ", ".join(names[:3]) + (f" (and {len(names) - 3} more)" if len(names) > 3 else "")
                bad.append(f"{f}: calls {shown} of {g}, {wrong}")

    known = [(kind, frozenset(fs)) for kind, fs in KNOWN_CIRCLES]
    seen_known = set()
    for kind, nodes, edges in (("include", files, inc), ("call", units, calls)):
        for comp in tarjan(nodes, edges):
            key = (kind, frozenset(comp))
            if key in known:
                seen_known.add(key)
                continue
            cyc = " -> ".join(one_cycle(comp, edges))
            verb = "include each other" if kind == "include" else "call each other"
            bad.append(f"{kind} circle: {', '.join(comp)} {verb}: {cyc}")
    for key in known:
        if key not in seen_known:
            bad.append(f"KNOWN_CIRCLES lists a {key[0]} circle of {', '.join(sorted(key[1]))} that is gone: "
                       "remove it from the list")

    for b in bad:
        print(f"FAIL: {b}")
    if bad:
        print(f"{len(bad)} finding(s) in {len(files)} files")
        return 1
    nedges = sum(len(v) for v in inc.values()), sum(len(v) for v in calls.values())
    print(f"ok: {len(files)} files, {nedges[0]} include and {nedges[1]} call edges between them, no circle; "
          f"floors and the sub-floors of {', '.join(sorted(SUBFLOORS))} kept; patterns include no transport; "
          f"no file over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
