#!/bin/bash
# doc/architecture.md's "A module in a plugin", followed to the letter: a copy of the tree gets the part's two
# C files as modules/psend/psend_desc.c (the descriptor, in the executable) and modules/psend/psend.c (the
# operations, in ngauge-mpi.so), its first meson block as modules/psend/meson.build and its registration line
# in modules/meson.build's ng_module_list, and nothing else (checked by diffing the copy against the tree); the
# copy configures with MPI (the other plugins' libraries off) and builds the executable and the MPI plugin; the
# executable links no MPI, lists the module, and runs the ping-pong over it under mpiexec with two ranks, its
# result file checked (rows, sane times, the module's device). Skipped (77) without meson, ninja, mpiexec or
# an MPI the tree's build found.
. "$NGAUGE_SRC/tests/integration/lib.sh"
. "$NGAUGE_SRC/tests/docs/doclib.sh"
command -v meson >/dev/null && command -v ninja >/dev/null || { echo "skipped: meson or ninja not found"; exit 77; }
command -v mpiexec >/dev/null || { echo "skipped: mpiexec not installed"; exit 77; }
"$NGAUGE" --list | grep -q "^  mpi " || { echo "skipped: built without MPI"; exit 77; }

# The part's two ```c blocks and two ```meson blocks, as a reader would copy them; a copy of the tree with the
# edits.
doc_blocks "**A module in a plugin.**" "A new plugin, for a library" c=psend_desc.c c=psend.c meson=meson.build \
	meson=line || { fail "no two C blocks and two meson blocks in the doc's 'A module in a plugin'"; finish; }
doc_copy
mkdir "$T/src/modules/psend"
cp "$T/psend_desc.c" "$T/psend.c" "$T/meson.build" "$T/src/modules/psend/"
doc_register modules/meson.build ng_module_list "$T/line"
doc_changed modules/meson.build modules/psend
files=$(ls "$T/src/modules/psend" | tr '\n' ' ')
[ "$files" = "meson.build psend.c psend_desc.c " ] && pass "the module's folder holds its two C files and meson.build" ||
	fail "the module's folder holds $files"

# Configure with MPI and build the executable and the MPI plugin.
opts=()
for f in pmi2 pmix verbs libfabric ucx; do opts+=("-D$f=disabled"); done
if ! meson setup "$T/b" "$T/src" -Dmpi=enabled "${opts[@]}" >"$T/setup.log" 2>&1; then
	fail "meson setup of the copy: $(tail -5 "$T/setup.log")"; rm -rf "$T/src" "$T/b"; finish
fi
if ! nice ninja -C "$T/b" ngauge ngauge-mpi.so >"$T/build.log" 2>&1; then
	fail "the copy with the doc's plugin module does not build: $(grep -m5 -E 'error|warning' "$T/build.log")"
	rm -rf "$T/src" "$T/b"; finish
fi
grep -E -m5 'warning' "$T/build.log" && fail "the copy builds with warnings" ||
	pass "the copy builds with the doc's plugin module, no warning"
NG=$T/b/ngauge
ldd "$NG" | grep -q -i "libmpi" && fail "the executable links MPI" || pass "the executable links no MPI"
nm -D --defined-only "$T/b/ngauge-mpi.so" | grep -q " ng_plugin_mpi$" && nm "$T/b/ngauge-mpi.so" |
	grep -q "ng_module_ops_psend" && pass "ngauge-mpi.so holds psend's operations" ||
	fail "ngauge-mpi.so: no ng_module_ops_psend"
run 0 "$NG" --list && grep -q "^  psend " "$T/out" && pass "--list shows psend" ||
	fail "--list: $(grep -c . "$T/out") lines, no psend"

if run 0 mpiexec -n 2 "$NG" -x psend -p pingpong -s 1,4K -c 200 --warmup 10 --verify -o "$T/psend.json"; then
	rcheck "$T/psend.json" "pingpong over psend under mpiexec: 2 sizes, 200 rounds each verified, sane times" '
assert r["pattern"] == "pingpong" and r["module"] == "psend" and r["complete"] and r["launch"] == "mpi", r["module"]
assert [x["size"] for x in r["results"]] == [1, 4096], r["results"]
for x in r["results"]:
    t = x["latency_us"]
    assert x["count"] == 200 and 0 < t["min"] <= t["median"] <= t["max"] and t["median"] < 1e5, x
assert "MPI_COMM_WORLD" in json.dumps(r["env"]), r["env"]
'
fi
# The copy, its build and these results are no result files of the tree's format.
rm -rf "$T/src" "$T/b" "$T"/*.json
finish
