#!/bin/bash
# doc/architecture.md's "Add a pattern", followed to the letter: a copy of the tree gets the section's C file
# as patterns/sendack.c and its one registration line in patterns/meson.build, and nothing else (checked by
# diffing the copy against the tree); the copy configures and builds (the ngauge executable only), lists the
# pattern, and runs it over tcp with two local ranks three ways, its result file checked:
# - by count: two sizes, -c rows of time_us with sane statistics;
# - by --time: the row stopped by time ("stop": "time") after about 0.3 s, with more than 100 rounds;
# - by --ci-target: the row says why it stopped ("ci", "count" or "time") and how long ("elapsed_s").
# The published schema knows the built-in patterns only (a new one adds itself there, step 4 of the section),
# so these result files are checked here without it.  Skipped (77) without meson or ninja.
. "$NGAUGE_SRC/tests/integration/lib.sh"
DOC=$NGAUGE_SRC/doc/architecture.md
command -v meson >/dev/null && command -v ninja >/dev/null || { echo "skipped: meson or ninja not found"; exit 77; }

# The section's ```c block and its ```meson line, as a reader would copy them (the doc indents them by 3).
python3 - "$DOC" "$T" <<'PY' || { fail "no C block and meson line in the doc's 'Add a pattern'"; finish; }
import re, sys
doc, out = open(sys.argv[1]).read(), sys.argv[2]
sec = doc[doc.index("## Add a pattern"):doc.index("## Add a figure")]
blocks = re.findall(r"\n( *)```(c|meson)\n(.*?)\n\1```", sec, re.S)
code = {lang: "\n".join(l[len(ind):] for l in body.split("\n")) + "\n" for ind, lang, body in blocks}
open(out + "/sendack.c", "w").write(code["c"])
open(out + "/line", "w").write(code["meson"])
PY

# A copy of the tree without build directories or git, then the two edits.
mkdir "$T/src"
tar -C "$NGAUGE_SRC" --exclude=./.git --exclude='./build*' --exclude=./subprojects/packagecache -cf - . |
	tar -C "$T/src" -xf -
cp "$T/sendack.c" "$T/src/patterns/sendack.c"
python3 - "$T/src/patterns/meson.build" "$T/line" <<'PY'
import sys
p, line = sys.argv[1], open(sys.argv[2]).read()
s = open(p).read()
anchor = "ng_pattern_list = [\n"
assert anchor in s, "patterns/meson.build has no ng_pattern_list"
open(p, "w").write(s.replace(anchor, anchor + line, 1))
PY
changed=$(diff -rq "$NGAUGE_SRC" "$T/src" -x .git -x 'build*' -x packagecache 2>&1 | sort)
expect=$(printf 'Files %s/patterns/meson.build and %s/src/patterns/meson.build differ\nOnly in %s/src/patterns: sendack.c' \
	"$NGAUGE_SRC" "$T" "$T")
added=$(diff "$NGAUGE_SRC/patterns/meson.build" "$T/src/patterns/meson.build" | grep -c '^>')
[ "$changed" = "$expect" ] && [ "$added" = 1 ] &&
	pass "the copy differs by the new file and one line of patterns/meson.build" ||
	fail "the copy differs by more: $changed (lines added to meson.build: $added)"

# Configure and build the executable only; what the tree's build found missing stays off in the copy too.
opts=()
for f in mpi pmi2 pmix verbs libfabric; do opts+=("-D$f=disabled"); done
if ! meson setup "$T/b" "$T/src" "${opts[@]}" >"$T/setup.log" 2>&1; then
	fail "meson setup of the copy: $(tail -5 "$T/setup.log")"; rm -rf "$T/src" "$T/b"; finish
fi
if ! nice ninja -C "$T/b" ngauge >"$T/build.log" 2>&1; then
	fail "the copy with the doc's pattern does not build: $(grep -m5 -E 'error|warning' "$T/build.log")"
	rm -rf "$T/src" "$T/b"; finish
fi
pass "the copy builds with the doc's pattern"
NG=$T/b/ngauge
# rcheck FILE WHAT CODE: as pycheck, without the schema (above).
rcheck() {
	if python3 - "$1" <<<"import json, sys
r = json.load(open(sys.argv[1]))
$3"; then pass "$2"; else fail "$2"; fi
}
run 0 "$NG" --list && grep -q "^  sendack " "$T/out" && pass "--list shows sendack" ||
	fail "--list: $(grep -c . "$T/out") lines, no sendack"

run 0 "$NG" -x tcp -p sendack --np 2 -s 1,1K -c 200 -o "$T/count.json" &&
	rcheck "$T/count.json" "by count: 2 sizes, 200 rounds each, time_us" '
assert r["pattern"] == "sendack" and r["complete"] and [x["size"] for x in r["results"]] == [1, 1024]
for x in r["results"]:
    t = x["time_us"]
    assert x["count"] == 200 and 0 < t["min"] <= t["median"] <= t["max"], x
'
run 0 "$NG" -x tcp -p sendack --np 2 -s 64 --time 0.3 -o "$T/time.json" &&
	rcheck "$T/time.json" "by --time 0.3: the row ran by time" '
x = r["results"][0]
assert r["complete"] and x["size"] == 64 and x["stop"] == "time" and x["elapsed_s"] >= 0.25 and x["iterations"] >= x["count"] > 100, x
'
run 0 "$NG" -x tcp -p sendack --np 2 -s 64 -c 50 --ci-target 0.2 --max-time 2 -o "$T/ci.json" &&
	rcheck "$T/ci.json" "by --ci-target 0.2: the row says why it stopped" '
x = r["results"][0]
assert r["complete"] and x["stop"] in ("ci", "count", "time") and x["count"] >= 50 and x["elapsed_s"] > 0, x
'
# The copy, its build and these results are no result files of the tree's format.
rm -rf "$T/src" "$T/b" "$T"/*.json
finish
