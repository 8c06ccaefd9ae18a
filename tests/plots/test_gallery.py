#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The gallery: every figure kind, drawn from the fixtures, fits its image.

Every fixture (each family, the rma suite's tests, and the edge cases: size 0,
rows without origins) with every --kind and every terminal (pdf, svg, png,
tex):

- a kind with no panel for the pattern is a usage error (exit 2, one line);
  else exit 0, the figures listed on stdout, every line on stderr a warning
  that names the file and says what was left out;
- PNG: 1200 pixels wide per panel (at least 1200), and nothing drawn on the
  image's border (png_margins, argv[2], measures the blank margins; without
  it the PNG is decoded here, slowly);
- SVG: every text's extent (its anchor, its length at 0.6 em a character, its
  rotation) inside the picture, the title and key texts short enough to fit;
- PDF: a PDF at least 5 inches wide; TeX: the picture and its PDF.

Usage: test_gallery.py NGAUGE [PNG_MARGINS].  Skipped (77) without gnuplot.
"""
import os
import re
import struct
import subprocess
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

KINDS = ("auto", "latency", "bandwidth", "overhead")
# the distribution of any pattern, drawn for the fixtures with samples (pc.DIST_FIXTURES)
DIST_KINDS = ("cdf", "hist")
# the panels each --kind keeps, per pattern (plots/plot.h)
PANELS = {
    "pingpong": {"latency", "bandwidth"}, "n1": {"latency", "bandwidth"}, "1n": {"latency", "bandwidth"},
    "loggp": {"latency", "overhead"}, "plogp": {"latency"}, "alltoall": {"latency", "bandwidth"},
    "bw": {"bandwidth"}, "bibw": {"bandwidth"}, "custom": {"latency"}, "overlap": {"latency"},
    "skew": {"latency"}, "rma": {"latency", "bandwidth"}, "matrix": {"latency", "bandwidth"},
    "ebb": {"bandwidth"}, "noise": {"latency"},
    "congestion": {"latency"}, "coll": {"latency", "bandwidth"},
}
PANEL_PX = 1200   # a PNG panel is 5 inches at 240 pixels per inch
MIN_MARGIN = 2    # blank pixels at least between the drawing and each edge
CHAR_EM = 0.6     # a character's width in em, generous for sans-serif


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    pc.expect(head[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def png_margins_py(path):
    """(w, h, left, top, right, bottom) as png_margins.c, decoded here (8-bit RGB or RGBA only)."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat.append(body)
    pc.expect(depth == 8 and ctype in (2, 6), "%s: PNG of depth %d, colour type %d" % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    left = top = right = bottom = -1
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc_ = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc_ else b if pb <= pc_ else c)) & 255
        for x in range(w):
            px = line[x * bpp:x * bpp + 3]
            if min(px) >= 250:
                continue
            left = x if left < 0 or x < left else left
            right = w - 1 - x if right < 0 or w - 1 - x < right else right
            top = y if top < 0 else top
            bottom = h - 1 - y
        prev = line
    return w, h, left, top, right, bottom


def check_png(path, helper):
    w, h = png_size(path)
    pc.expect(w >= PANEL_PX and w % PANEL_PX == 0, "%s: %d pixels wide, expected %d per panel" % (path, w, PANEL_PX))
    pc.expect(h >= 700, "%s: %d pixels high" % (path, h))
    if helper:
        out = subprocess.run([helper, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        pc.expect(out.returncode == 0, "png_margins %s: %s" % (path, out.stderr))
        m = [int(x) for x in out.stdout.split()]
    else:
        m = list(png_margins_py(path))
    pc.expect(m[:2] == [w, h], "%s: png_margins reads %r" % (path, m))
    pc.expect(min(m[2:]) >= MIN_MARGIN, "%s: drawn up to the edge (margins left, top, right, bottom: %r)"
              % (path, m[2:]))
    return w // PANEL_PX


TEXT_RE = re.compile(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)(?: rotate\(([-\d.]+)\))?"[^>]*?'
                     r'font-size="([\d.]+)"[^>]*?text-anchor="(\w+)"[^>]*>\s*<text>(.*?)</text>', re.S)


def check_svg(path):
    with open(path, encoding="utf-8") as f:
        svg = f.read()
    m = re.search(r'<svg\s[^>]*width="(\d+)" height="(\d+)"', svg)
    pc.expect(m, "%s: no size" % path)
    w, h = int(m.group(1)), int(m.group(2))
    pc.expect(w >= 500 and w % 500 == 0, "%s: %d wide" % (path, w))
    texts = TEXT_RE.findall(svg)
    pc.expect(texts, "%s: no text found" % path)
    for x, y, rot, size, anchor, text in texts:
        x, y, size = float(x), float(y), float(size)
        text = re.sub(r"<[^>]*>", "", text)
        text = re.sub(r"&[a-z]+;|&#\d+;", "x", text)
        length = len(text) * size * CHAR_EM
        start = {"start": 0.0, "middle": -length / 2, "end": -length}[anchor]
        if rot and float(rot) % 180 == 90:  # runs up (or down) the page
            lo, hi = y - start - length, y - start
            span = (x - size * 0.8, x + size * 0.2)
            pc.expect(lo >= 0 and hi <= h and span[0] >= 0 and span[1] <= w,
                      "%s: text %r runs outside the %dx%d figure" % (path, text, w, h))
        else:
            lo, hi = x + start, x + start + length
            pc.expect(lo >= 0 and hi <= w and y - size * 0.8 >= 0 and y + size * 0.25 <= h,
                      "%s: text %r (%.0f..%.0f, baseline %.0f) outside the %dx%d figure" % (path, text, lo, hi, y, w, h))
    return w // 500


def check_pdf(path):
    with open(path, "rb") as f:
        data = f.read()
    pc.expect(data.startswith(b"%PDF-"), "%s is not a PDF" % path)
    box = re.search(rb"/MediaBox\s*\[\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", data)
    pc.expect(box and float(box.group(1)) >= 360, "%s: MediaBox %r" % (path, box and box.group(0)))


def check_tex(path):
    with open(path, encoding="utf-8") as f:
        pc.expect("\\begin{picture}" in f.read(), "%s is not a LaTeX picture" % path)
    check_pdf(path[:-4] + ".pdf")


def draw(exe, tmp, helper, name, pattern, kind, ext):
    """One plot call and the checks of its figures; returns a line for the log."""
    stem = "%s-%s-%s" % (name[:-5], kind, ext[1:])
    out = os.path.join(tmp, stem + ext)
    rc, stdout, stderr = pc.run([exe, "plot", "--kind", kind, pc.fixture(name), "-o", out])
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if kind not in ("auto",) + DIST_KINDS and kind not in PANELS[pattern]:
        pc.expect(rc == 2 and len(lines) == 1 and "has no panel" in lines[0],
                  "%s --kind %s: exit %d, %r (expected a usage error)" % (name, kind, rc, stderr))
        return "%s %s: no panel (usage error)" % (name, kind)
    pc.expect(rc == 0, "%s --kind %s -o %s: exit %d: %s" % (name, kind, ext, rc, stderr))
    for ln in lines:
        pc.expect(ln.startswith("ngauge: warning: plot: ") and pc.fixture(name) in ln and "left out" in ln
                  or "not drawn" in ln, "%s --kind %s: stray message %r" % (name, kind, ln))
    figs = stdout.split()
    pc.expect(figs, "%s --kind %s: no figure" % (name, kind))
    for fig in figs:
        pc.expect(os.path.getsize(fig) > 0, "%s is empty" % fig)
        if ext == ".png":
            check_png(fig, helper)
        elif ext == ".svg":
            check_svg(fig)
        elif ext == ".pdf":
            check_pdf(fig)
        else:
            check_tex(fig)
    return "%s %s %s: %d figure%s" % (name, kind, ext, len(figs), "" if len(figs) == 1 else "s")


def body(exe, tmp):
    helper = sys.argv[2] if len(sys.argv) > 2 else None
    if not helper:
        print("png_margins not built (libpng missing): PNGs are decoded here, slowly")
    fixtures = dict(pc.FIXTURES)
    fixtures.update({n: "rma" for n in pc.RMA_FIXTURES})
    fixtures.update({n: "coll" for n in pc.COLL_FIXTURES})
    fixtures.update(pc.EDGE_FIXTURES)
    jobs = []
    for name, pattern in fixtures.items():
        for kind in KINDS:
            for ext in (".pdf", ".svg", ".png", ".tex"):
                jobs.append((name, pattern, kind, ext))
    for name in pc.DIST_FIXTURES:
        for kind in DIST_KINDS:
            for ext in (".pdf", ".svg", ".png", ".tex"):
                jobs.append((name, fixtures[name], kind, ext))
    with ThreadPoolExecutor(max_workers=2) as ex:
        for line in ex.map(lambda j: draw(exe, tmp, helper, *j), jobs):
            print(line)
    print("%d plots of %d fixtures: every figure within its image" % (len(jobs), len(fixtures)))


if __name__ == "__main__":
    pc.need_gnuplot()
    pc.main(body)
