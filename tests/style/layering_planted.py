#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The test of the layering test: layering.py is shown failing on defects
planted in a copy of the tree, one defect per copy, and passing on the copy
as it is (so that each failure is the planted defect's).

Usage: layering_planted.py [SRC]   (SRC defaults to $NGAUGE_SRC).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import layering  # noqa: E402  (the file list is the checker's own)

CHECKER = os.path.join(HERE, "layering.py")


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def insert_after_includes(path, line):
    """Puts @line after the last #include of @path."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    last = max(i for i, l in enumerate(lines) if re.match(r"\s*#\s*include", l))
    lines.insert(last + 1, line)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# Each defect: (what, how to plant it in the copy at root, what the failure must say).
PLANTS = [
    ("include circle (module.h already includes bootstrap.h)",
     lambda r: insert_after_includes(os.path.join(r, "core/bootstrap.h"), '#include "module.h"'),
     r"include circle: core/bootstrap\.h, core/module\.h include each other"),
    ("include circle between two new headers of one floor",
     lambda r: (write(os.path.join(r, "core/planted_a.h"), '#include "planted_b.h"\n'),
                write(os.path.join(r, "core/planted_b.h"), '#include "planted_a.h"\n')),
     r"include circle: core/planted_a\.h, core/planted_b\.h include each other"),
    ("call circle (bootstrap.c already calls ng_error in status.c)",
     lambda r: append(os.path.join(r, "base/status.c"),
                      "\nint ng_boot_bcast(void *, int, void *, unsigned long);\n"
                      "void ng_planted(void);\nvoid ng_planted(void)\n{\n\tng_boot_bcast(0, 0, 0, 0);\n}\n"),
     r"call circle: base/status\.\[ch\], core/bootstrap\.\[ch\] call each other"),
    ("transport include in a pattern: a network library",
     lambda r: insert_after_includes(os.path.join(r, "patterns/pingpong.c"), "#include <mpi.h>"),
     r"patterns/pingpong\.c:\d+: a pattern includes a transport's header \(<mpi\.h\)"),
    ("transport include in a pattern: a module's header (a lower floor: only the transport rule sees it)",
     lambda r: insert_after_includes(os.path.join(r, "patterns/pingpong.c"), '#include "modules/rdmalayer/rdma.h"'),
     r"patterns/pingpong\.c:\d+: a pattern includes a transport's header \(\"modules/rdmalayer/rdma\.h\)"),
    ("a lower floor including a higher one",
     lambda r: insert_after_includes(os.path.join(r, "base/payload.h"), '#include "sizes.h"'),
     r"base/payload\.h:\d+: includes core/sizes\.h, a higher floor \(core above base\)"),
    ("a lower sub-floor of core including a higher one (the result sink including the pattern interface)",
     lambda r: insert_after_includes(os.path.join(r, "core/results.c"), '#include "pattern.h"'),
     r"core/results\.c:\d+: includes core/pattern\.h, a higher sub-floor "
     r"\(core: interfaces above core: a run's parts\)"),
    ("a lower sub-floor of core calling a higher one (a value parser asks the launcher)",
     lambda r: append(os.path.join(r, "core/sizes.c"),
                      "\nint ng_planted(void);\nint ng_planted(void)\n{\n\treturn ng_launcher_rank();\n}\n"),
     r"core/sizes\.c: calls ng_launcher_rank of core/bootstrap\.c, a higher sub-floor "
     r"\(core: a run's parts above core: values\)"),
    ("a file of core that no sub-floor claims",
     lambda r: write(os.path.join(r, "core/planted.c"), "int ng_planted_x;\n"),
     r"core/planted\.c: no sub-floor of core claims this file"),
    ("a lower sub-floor of patterns including a higher one (a helper including the sampler)",
     lambda r: insert_after_includes(os.path.join(r, "patterns/engine/nodes.c"), '#include "sampler.h"'),
     r"patterns/engine/nodes\.c:\d+: includes patterns/engine/sampler\.h, a higher sub-floor "
     r"\(patterns: measuring above patterns: helpers\)"),
    ("a pattern including another pattern's header",
     lambda r: (write(os.path.join(r, "patterns/bw.h"), "int ng_bw_planted(void);\n"),
                insert_after_includes(os.path.join(r, "patterns/onen.c"), '#include "bw.h"')),
     r"patterns/onen\.c:\d+: includes patterns/bw\.h, another file of patterns: the patterns"),
    ("a file over the line limit",
     lambda r: append(os.path.join(r, "core/sizes.c"), "/* planted */\n" * layering.MAX_LINES),
     r"core/sizes\.c: \d+ lines, more than " + str(layering.MAX_LINES)),
    ("a floor's glob that claims no file (its file moved away)",
     lambda r: os.remove(os.path.join(r, "core/launch.h")),
     r"core/launch\.h: a glob of core: launches that claims no file"),
    ("a source file no floor claims",
     lambda r: write(os.path.join(r, "planted/x.c"), "int ng_planted_x;\n"),
     r"planted/x\.c: no floor claims this file"),
]

def copy_tree(src, dst):
    for f in layering.collect(src):
        os.makedirs(os.path.join(dst, os.path.dirname(f)), exist_ok=True)
        shutil.copy(os.path.join(src, f), os.path.join(dst, f))


def check(root):
    p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main(argv):
    src = argv[1] if len(argv) > 1 else os.environ.get("NGAUGE_SRC")
    if not src or not os.path.isdir(src):
        print("usage: layering_planted.py SRC (or NGAUGE_SRC=SRC)", file=sys.stderr)
        return 2
    bad = 0
    with tempfile.TemporaryDirectory(prefix="ngauge-layering-") as tmp:
        clean = os.path.join(tmp, "clean")
        copy_tree(src, clean)
        rc, out = check(clean)
        if rc != 0:
            print(f"FAIL: the unchanged copy does not pass (exit {rc}):\n{out}")
            return 1
        print("ok: the unchanged copy passes")
        for i, (what, plant, want) in enumerate(PLANTS):
            root = os.path.join(tmp, f"plant{i}")
            shutil.copytree(clean, root)
            plant(root)
            rc, out = check(root)
            if rc == 1 and re.search(want, out):
                print(f"ok: fails on {what}")
            else:
                print(f"FAIL: {what}: exit {rc}, output does not match /{want}/:\n{out}")
                bad += 1
            shutil.rmtree(root)
    if bad:
        print(f"{bad} of {len(PLANTS)} planted defects not caught")
        return 1
    print(f"ok: all {len(PLANTS)} planted defects caught")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
