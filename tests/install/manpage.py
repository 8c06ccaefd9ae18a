#!/usr/bin/env python3
"""The man page and the completions say what the program says (issue 22 item 4).

ngauge --man and ngauge --completion bash|zsh are generated from the option tables of --help and --list
(core/docgen.h); meson builds them into data/ (ngauge.1, ngauge, _ngauge) and installs them.  Checks:
  - every option --help and --list show is in the man page (the roff source, and the page as man(1)
    renders it), and every module and pattern --list shows has a section of its own;
  - groff reads the page without a warning;
  - the built files are what the binary prints now (nothing stale);
  - bash: the script parses, offers every option, and completes the modules, the patterns and a choice
    option's words; zsh: the script parses (where zsh is installed), every option is in it.
Exit 0, or 1 with one line per difference.
"""
import os
import re
import shutil
import subprocess
import sys

NGAUGE = os.environ["NGAUGE"]
BUILD = os.environ["NGAUGE_BUILD"]
fails = []


def out(*args):
    return subprocess.run([NGAUGE, *args], check=True, capture_output=True, text=True).stdout


help_text, list_text = out("--help"), out("--list")
options = sorted(set(re.findall(r"(?:^|\s)--([a-z][a-z0-9-]*[a-z0-9])(?![a-z0-9-])", help_text + list_text, re.M)))
modules = re.findall(r"^  ([a-z0-9]+) +\S", list_text.split("\npatterns:")[0], re.M)
patterns = re.findall(r"^  ([a-z0-9]+) +\S", list_text.split("\npatterns:")[1], re.M)
modules = [m for m in modules if m != "modules"]
if len(options) < 40 or "rdma-backend" not in options or "tcp" not in modules or "pingpong" not in patterns:
    fails.append("could not read the options, modules and patterns from --help/--list")

man = out("--man")
with open(os.path.join(BUILD, "data", "ngauge.1")) as f:
    if f.read() != man:
        fails.append("data/ngauge.1 is not what ngauge --man prints (stale build)")
for o in options:
    if "\\fB\\-\\-%s\\fR" % o.replace("-", "\\-") not in man:
        fails.append("man page: --%s (shown by --help/--list) has no entry" % o)
for name in modules + patterns:
    if "\n.SS %s\n" % name not in man:
        fails.append("man page: no section for '%s'" % name)

if shutil.which("groff"):
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=man, capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        fails.append("groff warns: " + r.stderr.strip().replace("\n", " | ")[:300])
    env = dict(os.environ, MANWIDTH="1000", MAN_KEEP_FORMATTING="0")
    if shutil.which("man"):
        text = subprocess.run(["man", "-l", os.path.join(BUILD, "data", "ngauge.1")], env=env,
                              capture_output=True, text=True).stdout
        text = re.sub(".\b", "", text)
        for o in options:
            if "--" + o not in text:
                fails.append("man -l build/data/ngauge.1: --%s is not in the rendered page" % o)

for shell, path in (("bash", "ngauge"), ("zsh", "_ngauge")):
    script = out("--completion", shell)
    with open(os.path.join(BUILD, "data", path)) as f:
        if f.read() != script:
            fails.append("data/%s is not what ngauge --completion %s prints" % (path, shell))
    for o in options:
        if "--%s" % o not in script:
            fails.append("%s completion: --%s missing" % (shell, o))
    exe = shutil.which(shell)
    if exe:
        r = subprocess.run([exe, "-n"], input=script, capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("%s -n: %s" % (shell, r.stderr.strip()[:200]))


def bash_complete(*words):
    """The words bash's completion offers for the command line ngauge WORDS (the last one being typed)."""
    line = "ngauge " + " ".join(words)
    prog = ('source %s; COMP_WORDS=(ngauge %s); COMP_CWORD=%d; _ngauge; printf "%%s\\n" "${COMPREPLY[@]}"'
            % (os.path.join(BUILD, "data", "ngauge"), " ".join("'%s'" % w for w in words), len(words)))
    return subprocess.run(["bash", "-c", prog], capture_output=True, text=True).stdout.split(), line


got, line = bash_complete("-x", "")
if sorted(got) != sorted(modules):
    fails.append("bash: '%s' offers %s, --list has %s" % (line, got, modules))
got, line = bash_complete("--pattern", "")
if sorted(got) != sorted(patterns):
    fails.append("bash: '%s' offers %s, --list has %s" % (line, got, patterns))
got, line = bash_complete("--rdma-backend", "")
want = re.search(r"^ +--rdma-backend ([a-z|]+)", list_text, re.M).group(1).split("|")
if sorted(got) != sorted(want):
    fails.append("bash: '%s' offers %s, --list says %s" % (line, got, want))
got, line = bash_complete("--rdma-b")
if got != ["--rdma-backend"]:
    fails.append("bash: '%s' offers %s" % (line, got))
got, line = bash_complete("")
if "plot" not in got or "report" not in got:
    fails.append("bash: '%s' does not offer the subcommands" % line)

for f in fails:
    print("FAIL: " + f)
print("%d options, %d modules, %d patterns: %s" % (len(options), len(modules), len(patterns),
                                                   "ok" if not fails else "%d difference(s)" % len(fails)))
sys.exit(1 if fails else 0)
