# Sourced by the tests that follow doc/architecture.md to the letter (doc_pattern.sh, doc_module.sh,
# doc_module_plugin.sh), after tests/integration/lib.sh ($T, pass, fail, finish).
#
# doc_blocks FROM TO LANG=FILE...: the ``` blocks of the doc between the lines starting FROM and TO, as a
#   reader would copy them (without the doc's indentation), in order, each of the language given written to
#   $T/FILE; fails (1) when the blocks are not exactly those languages in that order.
# doc_copy: a copy of the tree, without build directories or git, in $T/src.
# doc_register MESON LIST LINEFILE: LINEFILE's line added at the top of LIST (e.g. ng_module_list) in the
#   copy's MESON (e.g. modules/meson.build).
# doc_changed MESON NEW: passes when the copy differs from the tree by exactly the new file or folder NEW
#   (a path under the tree) and one line added to MESON, fails saying how it differs otherwise.
# rcheck FILE WHAT CODE: a result file checked by CODE (Python, the file as r) without the published schema,
#   which knows the built-in modules and patterns only.
DOC=$NGAUGE_SRC/doc/architecture.md

doc_blocks() {
	python3 - "$DOC" "$T" "$@" <<'PY'
import re, sys
doc, out, start, end, want = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
sec = doc[doc.index(start):doc.index(end)]
blocks = re.findall(r"\n( *)```(c|meson)\n(.*?)\n\1```", sec, re.S)
langs = [w.split("=")[0] for w in want]
assert [lang for _, lang, _ in blocks] == langs, ([lang for _, lang, _ in blocks], langs)
for (ind, _, body), w in zip(blocks, want):
    open(out + "/" + w.split("=")[1], "w").write("\n".join(l[len(ind):] for l in body.split("\n")) + "\n")
PY
}

doc_copy() {
	mkdir "$T/src"
	tar -C "$NGAUGE_SRC" --exclude=./.git --exclude='./build*' --exclude=./subprojects/packagecache -cf - . |
		tar -C "$T/src" -xf -
}

doc_register() {
	python3 - "$T/src/$1" "$2" "$3" <<'PY'
import sys
p, lst, line = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
s = open(p).read()
anchor = lst + " = [\n"
assert anchor in s, "%s has no %s" % (p, lst)
open(p, "w").write(s.replace(anchor, anchor + line, 1))
PY
}

doc_changed() {
	local meson=$1 new=$2 changed expect added
	changed=$(diff -rq "$NGAUGE_SRC" "$T/src" -x .git -x 'build*' -x packagecache 2>&1 | sort)
	expect=$(printf 'Files %s/%s and %s/src/%s differ\nOnly in %s/src/%s: %s' "$NGAUGE_SRC" "$meson" "$T" "$meson" \
		"$T" "$(dirname "$new")" "$(basename "$new")")
	added=$(diff "$NGAUGE_SRC/$meson" "$T/src/$meson" | grep -c '^>')
	[ "$changed" = "$expect" ] && [ "$added" = 1 ] &&
		pass "the copy differs by $new and one line of $meson" ||
		fail "the copy differs by more: $changed (lines added to $meson: $added)"
}

rcheck() {
	if python3 - "$1" <<<"import json, sys
r = json.load(open(sys.argv[1]))
$3"; then pass "$2"; else fail "$2"; fi
}
