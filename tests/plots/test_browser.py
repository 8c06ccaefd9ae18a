#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The report as a reader sees it: laid out and printed by headless Chromium.

The gallery: every fixture drawn as SVG (each family, each rma test, the edge
cases), the figures side by side in one page that Chromium lays out; a script
measures every text with the browser's own fonts: none reaches beyond its
figure, and a screenshot of the gallery has the window's size.

A report of every fixture (the edge cases too) is opened in Chromium at the
width of an A4 page less its print margins (703 CSS pixels), with a script
(in a copy of the page: the report itself has none) that writes the layout
into the page, which Chromium then dumps:

- no horizontal scrollbar: the page is no wider than the window;
- no table wider than the page's content box (its right edge inside it);
- every figure as wide as the content box (full width);

and a screenshot at that width has the window's size and nothing drawn on
its right edge.  `ngauge report -o r.pdf` prints the page with Chromium: a
PDF of at least one page per file, letter or A4 wide.

Usage: test_browser.py NGAUGE [PNG_MARGINS].  Skipped (77) without gnuplot
or without Chromium ($NGAUGE_CHROMIUM, else chromium from PATH).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotcheck as pc  # noqa: E402

PAGE_W = 703  # A4 (210 mm) less two print margins of 12 mm, in CSS pixels (96 per inch)

PROBE = """<script>
window.addEventListener('load', function () {
  var body = document.body, cs = getComputedStyle(body), r = body.getBoundingClientRect();
  var left = r.left + parseFloat(cs.paddingLeft), right = r.right - parseFloat(cs.paddingRight);
  var out = {window: window.innerWidth, doc: document.documentElement.clientWidth,
             scroll: document.documentElement.scrollWidth, left: left, right: right, tables: [], figures: []};
  document.querySelectorAll('table').forEach(function (t) {
    var b = t.getBoundingClientRect();
    out.tables.push({left: b.left, right: b.right, head: t.rows.length ? t.rows[0].textContent.slice(0, 80) : ''});
  });
  document.querySelectorAll('figure svg').forEach(function (s) {
    var b = s.getBoundingClientRect();
    out.figures.push({left: b.left, right: b.right});
  });
  var pre = document.createElement('pre');
  pre.id = 'ng-layout';
  pre.textContent = JSON.stringify(out);
  body.appendChild(pre);
});
</script>
"""


GALLERY_PROBE = """<script>
window.addEventListener('load', function () {
  var out = {figures: 0, texts: 0, outside: []};
  document.querySelectorAll('div.fig').forEach(function (d) {
    var svg = d.querySelector('svg'), r = svg.getBoundingClientRect();
    out.figures++;
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      out.texts++;
      if (b.width && (b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 ||
                      b.bottom > r.bottom + 0.5))
        out.outside.push([d.id, t.textContent, Math.round(b.left - r.left), Math.round(r.right - b.right),
                          Math.round(b.top - r.top), Math.round(r.bottom - b.bottom)]);
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'ng-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def layout(dom):
    m = re.search(r'<pre id="ng-layout">(.*?)</pre>', dom, re.S)
    if not m:
        return None
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def gallery(exe, tmp, browser):
    """Every fixture's figures as SVG in one page; every text inside its figure, measured by Chromium."""
    fixtures = list(pc.FIXTURES) + pc.RMA_FIXTURES + pc.COLL_FIXTURES + list(pc.EDGE_FIXTURES)
    parts = []
    for name in fixtures:
        out = os.path.join(tmp, "g-" + name.replace(".json", ".svg"))
        stdout, _ = pc.expect_run([exe, "plot", pc.fixture(name), "-o", out], 0)
        for k, fig in enumerate(stdout.split()):
            with open(fig, encoding="utf-8") as f:
                svg = f.read()
            parts.append('<div class="fig" id="%s-%d">%s</div>' % (name[:-5], k, svg[svg.index("<svg"):]))
    page = os.path.join(tmp, "gallery.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:8px}"
                "div.fig{display:inline-block;margin:4px;vertical-align:top}</style></head><body>\n")
        f.write("\n".join(parts))
        f.write(GALLERY_PROBE + "</body></html>\n")
    rc, dom, err = run_chromium(browser, ["--window-size=1280,1000", "--run-all-compositor-stages-before-draw",
                                          "--virtual-time-budget=5000", "--dump-dom", "file://" + page], tmp)
    lay = layout(dom)
    pc.expect(rc == 0 and lay, "chromium --dump-dom on the gallery: exit %d: %s" % (rc, err[-500:]))
    pc.expect(lay["figures"] == len(parts) and lay["texts"] > 10 * len(parts),
              "the gallery: %d figures, %d texts measured" % (lay["figures"], lay["texts"]))
    pc.expect(not lay["outside"], "%d texts beyond their figure (figure, text, room left, right, top, bottom): %r"
              % (len(lay["outside"]), lay["outside"][:5]))
    shot = os.path.join(tmp, "gallery.png")
    rc, _, err = run_chromium(browser, ["--window-size=1280,4000", "--hide-scrollbars", "--screenshot=" + shot,
                                        "file://" + page], tmp)
    pc.expect(rc == 0 and png_size(shot) == (1280, 4000), "the gallery's screenshot: exit %d, %r: %s"
              % (rc, os.path.isfile(shot) and png_size(shot), err[-300:]))
    print("gallery: %d figures of %d fixtures, %d texts, each within its figure" % (lay["figures"], len(fixtures),
                                                                                 lay["texts"]))


def chromium():
    env = os.environ.get("NGAUGE_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(exe, args, tmp):
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
    flags = ["--headless", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-extensions", "--user-data-dir=" + profile]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")
    p = subprocess.run([exe] + flags + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    pc.expect(head[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def body(exe, tmp):
    browser = chromium()
    gallery(exe, tmp, browser)
    names = list(pc.FIXTURES) + pc.RMA_FIXTURES + pc.COLL_FIXTURES + list(pc.EDGE_FIXTURES)
    page = os.path.join(tmp, "r.html")
    env = pc.clean_env(TMPDIR=tmp)
    pc.expect_run([exe, "report"] + [pc.fixture(n) for n in names] + ["-o", page], 0, env=env)

    # the layout at the width of a printed A4 page
    with open(page, encoding="utf-8") as f:
        html = f.read()
    probe = os.path.join(tmp, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(html.replace("</body>", PROBE + "</body>"))
    rc, dom, err = run_chromium(browser, ["--window-size=%d,1200" % PAGE_W, "--run-all-compositor-stages-before-draw",
                                          "--virtual-time-budget=5000", "--dump-dom", "file://" + probe], tmp)
    lay = layout(dom)
    pc.expect(rc == 0 and lay, "chromium --dump-dom: exit %d, no layout in the page: %s" % (rc, err[-500:]))
    print("window %d, content box %.0f..%.0f, %d tables, %d figures"
          % (lay["window"], lay["left"], lay["right"], len(lay["tables"]), len(lay["figures"])))
    pc.expect(lay["window"] == PAGE_W, "the window is %d wide, not %d" % (lay["window"], PAGE_W))
    pc.expect(lay["scroll"] <= lay["doc"], "a horizontal scrollbar: the page is %d wide in a window of %d"
              % (lay["scroll"], lay["doc"]))
    wide = [t for t in lay["tables"] if t["right"] > lay["right"] + 0.5 or t["left"] < lay["left"] - 0.5]
    pc.expect(not wide, "%d tables wider than the page (%.0f px): %s"
              % (len(wide), lay["right"] - lay["left"],
                 "; ".join("%.0f px: %r" % (t["right"] - t["left"], t["head"]) for t in wide[:5])))
    pc.expect(len(lay["tables"]) > 3 * len(names), "only %d tables" % len(lay["tables"]))
    width = lay["right"] - lay["left"]
    narrow = [f for f in lay["figures"] if f["right"] - f["left"] < width - 1]
    pc.expect(lay["figures"] and not narrow, "%d of %d figures narrower than the page (%.0f px): %r"
              % (len(narrow), len(lay["figures"]), width, narrow[:2]))

    # a screenshot at that width: the window's size, nothing cut at its right edge
    shot = os.path.join(tmp, "shot.png")
    rc, _, err = run_chromium(browser, ["--window-size=%d,2400" % PAGE_W, "--hide-scrollbars",
                                        "--screenshot=" + shot, "file://" + page], tmp)
    pc.expect(rc == 0 and os.path.isfile(shot), "chromium --screenshot: exit %d: %s" % (rc, err[-500:]))
    pc.expect(png_size(shot) == (PAGE_W, 2400), "the screenshot is %r, not %dx2400" % (png_size(shot), PAGE_W))
    helper = sys.argv[2] if len(sys.argv) > 2 else None
    if helper:
        out = subprocess.run([helper, shot], stdout=subprocess.PIPE, text=True, timeout=60).stdout.split()
        pc.expect(len(out) == 6 and int(out[4]) >= 8, "the screenshot is drawn up to its right edge: margins %r" % out)
        print("screenshot %dx2400, right margin %s px" % (PAGE_W, out[4]))

    # the report as a PDF, printed by Chromium
    pdf = os.path.join(tmp, "r.pdf")
    env = pc.clean_env(TMPDIR=tmp, NGAUGE_CHROMIUM=browser)
    stdout, _ = pc.expect_run([exe, "report"] + [pc.fixture(n) for n in names[:4]] + ["-o", pdf], 0, env=env)
    pc.expect(stdout.strip() == pdf, "stdout %r" % stdout)
    with open(pdf, "rb") as f:
        data = f.read()
    pc.expect(data.startswith(b"%PDF-"), "%s is not a PDF" % pdf)
    pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)", data)
    pc.expect(pages >= 4, "the PDF has %d pages for 4 files" % pages)
    pc.expect(box and 590 <= float(box.group(1)) <= 613, "page size %r (A4 or letter)" % (box and box.group(0)))
    left = [f for f in os.listdir(tmp) if f.startswith("ngauge-report-")]
    pc.expect(not left, "temporary directories left: %r" % left)
    print("PDF: %d pages, %s" % (pages, box.group(0).decode()))


if __name__ == "__main__":
    pc.need_gnuplot()
    if not chromium():
        print("SKIP: Chromium is not installed (Debian package chromium)")
        sys.exit(pc.SKIP)
    pc.main(body)
