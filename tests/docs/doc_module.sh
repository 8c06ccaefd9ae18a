#!/bin/bash
# doc/architecture.md's "Add a module", followed to the letter: a copy of the tree gets the section's C file as
# modules/tally/tally.c, its first meson block as modules/tally/meson.build and its registration line (the
# second) in modules/meson.build's ng_module_list, and nothing else (checked by diffing the copy against the
# tree); the copy configures (the plugins' libraries off, so that the list's missing modules are generated too)
# and builds the ngauge executable, lists the module, and runs the ping-pong over it with two local ranks, its
# result file checked: the sizes' rows with sane times, and the module's own block, whose counts must match
# what the ping-pong moved.  Skipped (77) without meson or ninja.
. "$NGAUGE_SRC/tests/integration/lib.sh"
. "$NGAUGE_SRC/tests/docs/doclib.sh"
command -v meson >/dev/null && command -v ninja >/dev/null || { echo "skipped: meson or ninja not found"; exit 77; }

# The section's ```c block and its two ```meson blocks, as a reader would copy them; a copy of the tree with
# the three edits.
doc_blocks "## Add a module"$'\n' "**A module in a plugin.**" c=tally.c meson=meson.build meson=line ||
	{ fail "no C block and two meson blocks in the doc's 'Add a module'"; finish; }
doc_copy
mkdir "$T/src/modules/tally"
cp "$T/tally.c" "$T/meson.build" "$T/src/modules/tally/"
doc_register modules/meson.build ng_module_list "$T/line"
doc_changed modules/meson.build modules/tally
files=$(ls "$T/src/modules/tally" | tr '\n' ' ')
[ "$files" = "meson.build tally.c " ] && pass "the module's folder holds tally.c and meson.build" ||
	fail "the module's folder holds $files"

# Configure and build the executable only, without the plugins' libraries.
opts=()
for f in mpi pmi2 pmix verbs libfabric ucx; do opts+=("-D$f=disabled"); done
if ! meson setup "$T/b" "$T/src" "${opts[@]}" >"$T/setup.log" 2>&1; then
	fail "meson setup of the copy: $(tail -5 "$T/setup.log")"; rm -rf "$T/src" "$T/b"; finish
fi
if ! nice ninja -C "$T/b" ngauge >"$T/build.log" 2>&1; then
	fail "the copy with the doc's module does not build: $(grep -m5 -E 'error|warning' "$T/build.log")"
	rm -rf "$T/src" "$T/b"; finish
fi
grep -E -m5 'warning' "$T/build.log" && fail "the copy builds with warnings" || pass "the copy builds with the doc's module, no warning"
NG=$T/b/ngauge
run 0 "$NG" --list && grep -q "^  tally " "$T/out" && pass "--list shows tally" ||
	fail "--list: $(grep -c . "$T/out") lines, no tally"
# The modules the copy's build left out are still listed, with what to install.
run 0 "$NG" --list && grep -q "mpi.*built without MPI" "$T/out" && pass "--list names the modules left out" ||
	fail "--list: no line for the mpi module left out"

run 0 "$NG" -x tally -p pingpong --np 2 -s 1,1K -c 200 --warmup 10 -o "$T/tally.json" &&
	rcheck "$T/tally.json" "pingpong over tally: 2 sizes, 200 rounds each, sane times, the counts of what moved" '
assert r["pattern"] == "pingpong" and r["module"] == "tally" and r["complete"], (r["pattern"], r["module"])
assert [x["size"] for x in r["results"]] == [1, 1024], r["results"]
for x in r["results"]:
    t = x["latency_us"]
    assert x["count"] == 200 and 0 < t["min"] <= t["median"] <= t["max"] and t["median"] < 1e5, x
c = r["tally"]
# rank 0 (the reporting rank) sends one message of the size and receives its answer per round, the 10
# warm-up rounds and the 200 timed ones of each size
assert c["sent"] == c["received"] == 2 * 210, c
assert c["sent_bytes"] == c["received_bytes"] == 210 * (1 + 1024), c
assert "tally over" in json.dumps(r["env"]), r["env"]
'
run 2 "$NG" -x tally --tally-base tally -p pingpong --np 2 -s 1 -c 10 &&
	grep -q "tally: --tally-base names no other module" "$T/err" && pass "--tally-base tally refused in one line" ||
	fail "--tally-base tally: $(head -3 "$T/err")"
# The copy, its build and these results are no result files of the tree's format.
rm -rf "$T/src" "$T/b" "$T"/*.json
finish
