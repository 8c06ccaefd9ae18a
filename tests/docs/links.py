#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The documentation's links and names hold: README.md and every page of doc/.

Checks, for README.md and doc/**/*.md:
  1. every Markdown link and image ([text](target), ![alt](target)) outside code
     resolves: the file exists (relative to the page), and a #fragment names a
     heading of that page (GitHub's anchors: lower case, punctuation dropped,
     spaces to hyphens, -1, -2 ... for repeats);
  2. every page of doc/ is linked from README.md, and every image in
     doc/figures/ is shown on some page;
  3. every repository path a page names in code (`core/module.h`,
     `patterns/engine/sampler.{c,h}`, `modules/rdmalayer/`, `main.c`) exists, unless it is
     listed in tests/docs/pending-paths.txt: paths of a layout under way, which
     the tree does not have yet.  A listed path that exists fails too (remove
     its line), so the list only ever shrinks;
  4. every C code block of a page (```c) compiles (cc -fsyntax-only, warnings
     as errors) against the tree's headers, as the file of patterns/ that the
     page's example is; a block that includes a header still listed in the
     pending paths waits for it.

Before that it plants one defect of each kind in a copy of the pages and checks
that each is found (a checker that finds nothing would pass anything).

Usage: links.py [SRC]   (SRC defaults to $NGAUGE_SRC, else the tree holding this
file).  Exit 0 when everything holds, 1 with one line per finding.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# First components of repository paths as pages name them in code.
TOP = {"base", "core", "modules", "patterns", "plots", "timers", "analysis", "tests", "bench", "scripts", "doc", ".ci"}
TOP_FILES = {"main.c", "meson.build", "meson_options.txt", "README.md"}
# Words that stand for a name in a path (`patterns/NAME.c`): such a path is a pattern, not a file.
PLACEHOLDER = re.compile(r"(NAME|FAMILY|BACKEND|MODE|DESIGN|SCHED|TEST|PATTERN|MODULE|SUITE|[*<>])")
PENDING = os.path.join("tests", "docs", "pending-paths.txt")

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
C_BLOCK = re.compile(r"^( *)```c\n(.*?)^\1```", re.S | re.M)
# Where an example's includes resolve: a file of patterns/ (the page's examples are patterns), then Meson's
# include directories ('.', 'core', 'base') and the build directory (config.h).
C_DIRS = ["patterns", ".", "core", "base"]
CFLAGS = ["-fsyntax-only", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter",
          "-Wmissing-prototypes", "-Werror"]
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")


def pages(root):
    """README.md and doc/**/*.md, as paths relative to @root."""
    out = ["README.md"]
    for d, _, files in os.walk(os.path.join(root, "doc")):
        for f in sorted(files):
            if f.endswith(".md"):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(set(out))


def prose_lines(text):
    """The page's lines outside fenced and indented code blocks: (number, line)."""
    fenced = False
    indented = False
    prev_blank = True
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        blank = not line.strip()
        # An indented code block: 4 spaces or a tab after a blank line, up to the next line indented less.
        if line.startswith(("    ", "\t")) and (prev_blank or indented):
            indented = True
            prev_blank = blank
            continue
        if not blank:
            indented = False
        prev_blank = blank
        yield n, line


def slug(heading):
    """GitHub's anchor of a heading's text."""
    h = CODE_SPAN.sub(lambda m: m.group(2), heading)
    h = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", h)  # links: their text
    h = re.sub(r"[*_]{1,3}([^*_]+)[*_]{1,3}", r"\1", h)  # emphasis
    h = h.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path, cache):
    if path not in cache:
        seen = {}
        out = set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            if s in seen:
                seen[s] += 1
                s = "%s-%d" % (s, seen[s])
            else:
                seen[s] = 0
            out.add(s)
        cache[path] = out
    return cache[path]


def expand(path):
    """patterns/engine/sampler.{c,h} -> patterns/engine/sampler.c, patterns/engine/sampler.h"""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand(path[: m.start()] + alt + path[m.end():])
    return out


def code_paths(text):
    """Repository paths named in the page's code spans: (line number, path)."""
    for n, line in prose_lines(text):
        for m in CODE_SPAN.finditer(line):
            for tok in m.group(2).split():
                tok = tok.strip(",;:()")
                if tok.startswith("./"):
                    tok = tok[2:]
                if PLACEHOLDER.search(tok) or "=" in tok or "$" in tok:
                    continue
                first = tok.split("/", 1)[0]
                if ("/" in tok and first in TOP) or tok in TOP_FILES:
                    for p in expand(tok):
                        yield n, p


def check(root, tree, pending):
    """Findings (strings) for the pages under @root; code paths resolve in @tree."""
    bad = []
    cache = {}
    linked_from_readme = set()
    shown = set()
    named_pending = set()
    for page in pages(root):
        full = os.path.join(root, page)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        base = os.path.dirname(full)
        for n, line in prose_lines(text):
            plain = CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), line)
            for m in LINK.finditer(plain):
                target = m.group(2)
                where = "%s:%d" % (page, n)
                if not target:
                    bad.append("%s: an empty link" % where)
                    continue
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                file_part, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(base, file_part)) if file_part else full
                if not os.path.exists(dest):
                    bad.append("%s: link to %s: no such file" % (where, target))
                    continue
                rel = os.path.relpath(dest, root)
                if page == "README.md":
                    linked_from_readme.add(rel)
                if m.group(0).startswith("!"):
                    shown.add(rel)
                if frag:
                    if not dest.endswith(".md"):
                        bad.append("%s: link to %s: a fragment of a file that is not a page" % (where, target))
                    elif frag not in anchors(dest, cache):
                        bad.append("%s: link to %s: %s has no heading with that anchor" % (where, target, rel))
        for n, p in code_paths(text):
            exists = os.path.exists(os.path.join(tree, p.rstrip("/")))
            if p.endswith("/") and exists:
                exists = os.path.isdir(os.path.join(tree, p.rstrip("/")))
            if p.rstrip("/") in pending:
                named_pending.add(p.rstrip("/"))
                continue
            if not exists:
                bad.append("%s:%d: `%s` names no file of the tree (a path of a layout under way goes in %s)"
                           % (page, n, p, PENDING))
    for page in pages(root):
        if page != "README.md" and page not in linked_from_readme:
            bad.append("%s: not linked from README.md" % page)
    figdir = os.path.join(root, "doc", "figures")
    if os.path.isdir(figdir):
        for f in sorted(os.listdir(figdir)):
            rel = os.path.join("doc", "figures", f)
            if f.endswith((".png", ".svg", ".jpg")) and rel not in shown:
                bad.append("%s: shown on no page" % rel)
    for p in sorted(pending):
        if os.path.exists(os.path.join(tree, p)):
            bad.append("%s: `%s` exists now: remove its line" % (PENDING, p))
        elif p not in named_pending:
            bad.append("%s: `%s` is named by no page: remove its line" % (PENDING, p))
    return bad


def c_blocks(text):
    """The C code blocks of a page: (line number, code without the block's indentation)."""
    for m in C_BLOCK.finditer(text):
        ind = m.group(1)
        code = "\n".join(l[len(ind):] if l.startswith(ind) else l for l in m.group(2).split("\n"))
        yield text.count("\n", 0, m.start()) + 1, code


def mpi_cflags():
    """The compiler flags of the MPI the system has (pkg-config's mpich or ompi), or None."""
    for pkg in ("mpich", "ompi-c", "ompi"):
        try:
            r = subprocess.run(["pkg-config", "--cflags", pkg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
        except OSError:
            return None
        if r.returncode == 0:
            return r.stdout.split()
    return None


def compile_blocks(root, tree, pending, waiting):
    """Findings for the C code blocks of the pages under @root; headers resolve in @tree.  Blocks that
    include a pending header are appended to @waiting instead."""
    bad = []
    build = os.environ.get("NGAUGE_BUILD")
    incs = [os.path.join(tree, d) for d in C_DIRS] + ([build] if build else [])
    cc = os.environ.get("CC", "cc")
    for page in pages(root):
        with open(os.path.join(root, page), encoding="utf-8") as f:
            text = f.read()
        for n, code in c_blocks(text):
            where = "%s:%d" % (page, n)
            wait = [p for inc in re.findall(r'#include "([^"]+)"', code) for p in pending
                    if p.endswith("/" + inc) or p == inc]
            if wait:
                waiting.append("%s (%s)" % (where, ", ".join(sorted(set(wait)))))
                continue
            extra = []
            if re.search(r"#include <mpi\.h>", code):
                extra = mpi_cflags()
                if extra is None:
                    waiting.append("%s (an MPI library's mpi.h)" % where)
                    continue
            tmp = tempfile.mkdtemp(prefix="ngauge-doc-c.")
            try:
                path = os.path.join(tmp, "example.c")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(code)
                args = [cc] + CFLAGS + ["-I" + d for d in incs] + extra + [path]
                try:
                    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                except OSError as e:
                    bad.append("%s: the C block cannot be compiled: %s: %s" % (where, cc, e))
                    continue
                if r.returncode != 0:
                    first = [l for l in r.stdout.split("\n") if "error" in l][:3]
                    bad.append("%s: the C block does not compile: %s"
                               % (where, " | ".join(l.replace(path, "example.c") for l in first)))
            finally:
                shutil.rmtree(tmp)
    return bad


def read_pending(root):
    path = os.path.join(root, PENDING)
    out = set()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    out.add(line.rstrip("/"))
    return out


def selftest(src, pending):
    """Plants one defect of each kind in a copy of the pages; each must be found."""
    plants = [
        ("a missing file", "README.md", "\nSee [nothing](doc/no-such-page.md).\n", "no such file"),
        ("a missing anchor", "README.md", "\nSee [x](doc/testing.md#no-such-heading).\n", "no heading with that anchor"),
        ("a missing anchor on the same page", "doc/testing.md", "\nSee [x](#nowhere).\n", "no heading with that anchor"),
        ("an unlinked page", "doc/orphan-page.md", "# Orphan\n", "not linked from README.md"),
        ("a missing code path", "doc/testing.md", "\nThe file `core/no_such_file.c`.\n", "names no file of the tree"),
        ("a missing braced path", "doc/testing.md", "\nThe pair `core/module.{h,zz}`.\n", "core/module.zz"),
        ("a C block that does not compile", "doc/testing.md",
         "\n```c\n#include \"module.h\"\n\nint ng_doc_example(void);\nint ng_doc_example(void)\n{\n\treturn NG_CAP_NOSUCH;\n}\n```\n",
         "does not compile"),
    ]
    bad = []
    for what, page, add, expect in plants:
        tmp = tempfile.mkdtemp(prefix="ngauge-links.")
        try:
            shutil.copy(os.path.join(src, "README.md"), tmp)
            shutil.copytree(os.path.join(src, "doc"), os.path.join(tmp, "doc"))
            os.makedirs(os.path.join(tmp, "tests", "rxe"), exist_ok=True)
            shutil.copy(os.path.join(src, "tests", "rxe", "README.md"), os.path.join(tmp, "tests", "rxe"))
            with open(os.path.join(tmp, page), "a", encoding="utf-8") as f:
                f.write(add)
            found = check(tmp, src, pending)
            if "compile" in what:
                found += compile_blocks(tmp, src, pending, [])
            if not any(expect in line for line in found):
                bad.append("self-test: %s planted in %s was not found" % (what, page))
        finally:
            shutil.rmtree(tmp)
    return bad


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NGAUGE_SRC")
    if not src:
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(src, "README.md")):
        print("links.py: no README.md in %s" % src)
        return 2
    pending = read_pending(src)
    waiting = []
    bad = selftest(src, pending) + check(src, src, pending) + compile_blocks(src, src, pending, waiting)
    for line in bad:
        print("FAIL: " + line)
    if bad:
        return 1
    print("ok: %d pages, every link resolves, every page is linked from the README, every named path exists"
          " (%d of a layout under way listed in %s), every C block compiles" % (len(pages(src)), len(pending), PENDING))
    for w in waiting:
        print("note: a C block waits for a header of the layout under way: " + w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
