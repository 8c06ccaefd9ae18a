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
. "$NGAUGE_SRC/tests/docs/doclib.sh"
command -v meson >/dev/null && command -v ninja >/dev/null || { echo "skipped: meson or ninja not found"; exit 77; }

# The section's ```c block and its ```meson line, as a reader would copy them; a copy of the tree with the two
# edits.
doc_blocks "## Add a pattern" "## Add a figure" c=sendack.c meson=line ||
	{ fail "no C block and meson line in the doc's 'Add a pattern'"; finish; }
doc_copy
cp "$T/sendack.c" "$T/src/patterns/sendack.c"
doc_register patterns/meson.build ng_pattern_list "$T/line"
doc_changed patterns/meson.build patterns/sendack.c

# Configure and build the executable only; what the tree's build found missing stays off in the copy too.
opts=()
for f in mpi pmi2 pmix verbs libfabric ucx; do opts+=("-D$f=disabled"); done
if ! meson setup "$T/b" "$T/src" "${opts[@]}" >"$T/setup.log" 2>&1; then
	fail "meson setup of the copy: $(tail -5 "$T/setup.log")"; rm -rf "$T/src" "$T/b"; finish
fi
if ! nice ninja -C "$T/b" ngauge >"$T/build.log" 2>&1; then
	fail "the copy with the doc's pattern does not build: $(grep -m5 -E 'error|warning' "$T/build.log")"
	rm -rf "$T/src" "$T/b"; finish
fi
pass "the copy builds with the doc's pattern"
NG=$T/b/ngauge
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
