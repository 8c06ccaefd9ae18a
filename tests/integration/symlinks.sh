#!/bin/bash
# Files are created safely, and plugins are loaded from trusted places only (base/safefile.h,
# core/plugin.h).
#  1. In a fresh directory, a symbolic link to a victim file of its own is planted at every name ngauge wrote
#     to, or through, before it wrote through a temporary of random name beside the target: the outputs
#     (x.json, x.csv, figures, gnuplot's scripts and data, the report, the comparison) and their old
#     temporaries (OUT.tmp).  A run with -o (json, csv), plot (svg, two files, cairolatex), report and
#     compare (-o and --plot) write there; every victim must keep its content, every output must be a real
#     file with the right content, and no temporary may be left.
#  2. The "redo" line of a script is a shell command: for an output named with a quote and a space it
#     redoes the figure as written.
#  3. Output names with a control character are refused: one line, exit 2, nothing written.
#  4. NGAUGE_PLUGIN_DIR: relative, a directory or library writable by others (or, as root, owned by
#     another user) is refused in one line, exit 2; the same files with safe modes load.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "python3 is needed to check the outputs"; exit 77; }
D="$T/dir"
V="$T/victims"
mkdir -p "$D" "$V"
HAVE_GNUPLOT=1
[ -n "${NGAUGE_GNUPLOT:-}" ] || command -v gnuplot >/dev/null || HAVE_GNUPLOT=0

# Every name planted: stems with every suffix ngauge uses for an output, a script, data, a temporary.
NAMES=()
for stem in x y f g h c cf r; do
	for sfx in .json .csv .svg .pdf .tex .png .gp .dat -1.dat -2.dat .html; do
		NAMES+=("$stem$sfx" "$stem$sfx.tmp")
	done
done
i=0
for n in "${NAMES[@]}"; do
	i=$((i + 1))
	echo "victim $i: $n" >"$V/v$i"
	ln -s "$V/v$i" "$D/$n"
done
victims_intact() {
	local i=0 n bad=0
	for n in "${NAMES[@]}"; do
		i=$((i + 1))
		[ "$(cat "$V/v$i")" = "victim $i: $n" ] || { echo "  victim of $n changed: $(head -c 80 "$V/v$i")" >&2; bad=1; }
	done
	return $bad
}
# real FILE...: each is a regular file, not a link
real() {
	local f
	for f in "$@"; do
		[ -f "$f" ] && [ ! -L "$f" ] || { echo "  $f: not a regular file" >&2; return 1; }
	done
}

# 1. runs
for x in x y; do
	if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,8 -c 20 -o "$D/$x.json"; then
		real "$D/$x.json" && pycheck "$D/$x.json" "-o $x.json over a planted link: a real file with sizes 1 and 8" \
			'assert [x["size"] for x in r["results"]] == [1, 8] and r["complete"], r["results"]'
	fi
done
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,8 -c 20 -o "$D/x.csv"; then
	real "$D/x.csv" && python3 - "$D/x.csv" <<'EOF' && pass "-o x.csv over a planted link: a real CSV with sizes 1 and 8" || fail "x.csv: $(head -3 "$D/x.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(float(r["size"])) for r in rows] == [1, 8], rows
EOF
fi
victims_intact && pass "no victim changed by the runs" || fail "a run wrote through a planted link"

# plot, report, compare
if [ $HAVE_GNUPLOT = 1 ]; then
	run 0 "$NGAUGE" plot "$D/x.json" -o "$D/f.svg" && real "$D/f.svg" "$D/f.gp" "$D/f.dat" &&
		grep -q '<svg' "$D/f.svg" && grep -q "^set output 'f.svg'" "$D/f.gp" &&
		grep -q '^# ngauge plot data from' "$D/f.dat" && pass "plot -o f.svg: real figure, script, data" ||
		fail "plot -o f.svg: $(cat "$T/err")"
	run 0 "$NGAUGE" plot "$D/x.json" "$D/y.json" -o "$D/g.svg" &&
		real "$D/g.svg" "$D/g.gp" "$D/g-1.dat" "$D/g-2.dat" && grep -q '<svg' "$D/g.svg" &&
		pass "plot of two files -o g.svg: real figure, script, data" || fail "plot -o g.svg: $(cat "$T/err")"
	run 0 "$NGAUGE" plot "$D/x.json" -o "$D/h.tex" && real "$D/h.tex" "$D/h.pdf" "$D/h.gp" "$D/h.dat" &&
		grep -q 'includegraphics.*{h}' "$D/h.tex" && [ "$(head -c 5 "$D/h.pdf")" = "%PDF-" ] &&
		pass "plot -o h.tex: real LaTeX and PDF, the LaTeX including h" ||
		fail "plot -o h.tex: $(cat "$T/err") $(grep includegraphics "$D/h.tex" | tail -1)"
else
	echo "note: no gnuplot: figures not checked"
fi
run 0 env TMPDIR="$D" "$NGAUGE" report "$D/x.json" -o "$D/r.html" && real "$D/r.html" &&
	head -1 "$D/r.html" | grep -q '<!DOCTYPE html>' && grep -q '</html>' "$D/r.html" &&
	pass "report -o r.html: a real, complete page" || fail "report -o r.html: $(cat "$T/err")"
cmp_args=("$D/x.json" "$D/y.json" --single-run -o "$D/c.json")
[ $HAVE_GNUPLOT = 1 ] && cmp_args+=(--plot "$D/cf.svg")
run_limited 120 "$NGAUGE" "$T/out" "$T/err" "$NGAUGE" compare "${cmp_args[@]}" >&2
rc=$?
if [ $rc = 0 ] || [ $rc = 3 ]; then
	real "$D/c.json" && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ngauge-compare/1" and [r["size"] for r in d["comparisons"][0]["rows"]] == [1, 8], d' "$D/c.json" &&
		pass "compare -o c.json: a real comparison of sizes 1 and 8" || fail "compare -o c.json"
	if [ $HAVE_GNUPLOT = 1 ]; then
		real "$D/cf.svg" "$D/cf.gp" "$D/cf.dat" && grep -q '<svg' "$D/cf.svg" &&
			pass "compare --plot cf.svg: real figure, script, data" || fail "compare --plot cf.svg"
	fi
else
	fail "compare exited $rc: $(cat "$T/err")"
fi
victims_intact && pass "no victim changed by plot, report, compare" || fail "plot, report or compare wrote through a planted link"
left=$(cd "$D" && ls -A | grep -E '^\.|\.tmp$' | while read -r n; do [ -L "$n" ] || echo "$n"; done)
[ -z "$left" ] && pass "no temporary left beside the outputs" || fail "temporaries left: $left"

rm -f "$D/c.json" # a comparison, not a result file (finish checks those against their schema)

# 2. the redo line is a shell command
if [ $HAVE_GNUPLOT = 1 ]; then
	q="it's a f"
	if run 0 "$NGAUGE" plot "$D/x.json" -o "$D/$q.svg"; then
		redo=$(sed -n 's/^# Redo the figure with: cd THIS_DIRECTORY && //p' "$D/$q.gp")
		rm -f "$D/$q.svg"
		[ "$redo" = "gnuplot 'it'\\''s a f.gp'" ] && (cd "$D" && eval "$redo") >/dev/null 2>&1 &&
			grep -q '<svg' "$D/$q.svg" && pass "the script's redo line is shell-quoted and redoes the figure" ||
			fail "redo line: $redo"
	fi
fi

# 3. control characters in output names
for bad in $'a\nb' $'a\tb' $'a\x7fb' $'a\x01b'; do
	shown=$(printf '%q' "$bad")
	run 2 "$NGAUGE" -x tcp -p pingpong -s 1 -c 5 -o "$D/$bad.json" && [ "$(wc -l <"$T/err")" = 1 ] &&
		grep -q 'control character' "$T/err" && pass "-o $shown.json refused in one line, exit 2" ||
		fail "-o $shown.json: $(cat "$T/err")"
	run 2 "$NGAUGE" plot "$D/x.json" -o "$D/$bad.svg" && [ "$(wc -l <"$T/err")" = 1 ] &&
		grep -q 'control character' "$T/err" && pass "plot -o $shown.svg refused in one line, exit 2" ||
		fail "plot -o $shown.svg: $(cat "$T/err")"
	run 2 "$NGAUGE" report "$D/x.json" -o "$D/$bad.html" && [ "$(wc -l <"$T/err")" = 1 ] &&
		grep -q 'control character' "$T/err" && pass "report -o $shown.html refused in one line, exit 2" ||
		fail "report -o $shown.html: $(cat "$T/err")"
	run 2 "$NGAUGE" compare "$D/x.json" "$D/y.json" --single-run -o "$D/$bad.json" && [ "$(wc -l <"$T/err")" = 1 ] &&
		grep -q 'control character' "$T/err" && pass "compare -o $shown.json refused in one line, exit 2" ||
		fail "compare -o $shown.json: $(cat "$T/err")"
done
left=$(cd "$D" && ls -A | grep -c '^a')
[ "$left" = 0 ] && pass "nothing written for a refused name" || fail "$left file(s) written for refused names"

# 4. plugins: the first module in a plugin that this build has
mod='' plugin=''
for m in mpi:mpi ibrc:verbs; do
	"$NGAUGE" --list | grep -q "^  ${m%%:*}  *not available" && continue
	[ -e "${NGAUGE_BUILD:-/nonexistent}/ngauge-${m#*:}.so" ] && { mod=${m%%:*}; plugin=${m#*:}; break; }
done
if [ -z "$mod" ]; then
	echo "note: no plugin built: NGAUGE_PLUGIN_DIR not checked"
else
	refused() { # WHAT DIR PATTERN
		if NGAUGE_PLUGIN_DIR="$2" run 2 "$NGAUGE" -x $mod -p pingpong -s 1 -c 1 -o "$T/plugin.json"; then
			[ "$(wc -l <"$T/err")" = 1 ] && grep -q "module $mod: refusing .*$3" "$T/err" &&
				[ ! -e "$T/plugin.json" ] && pass "$1: refused in one line, exit 2" || fail "$1: $(cat "$T/err")"
		else
			fail "$1: not refused"
		fi
	}
	run 2 env -C "$NGAUGE_BUILD" NGAUGE_PLUGIN_DIR=. "$NGAUGE" -x $mod -p pingpong -s 1 -c 1 &&
		[ "$(wc -l <"$T/err")" = 1 ] && grep -q "refusing NGAUGE_PLUGIN_DIR '.': not an absolute path" "$T/err" &&
		pass "NGAUGE_PLUGIN_DIR=. (where the plugins are) refused in one line, exit 2" ||
		fail "NGAUGE_PLUGIN_DIR=.: $(cat "$T/err")"
	P="$T/plugins"
	mkdir -p "$P"
	cp "$NGAUGE_BUILD/ngauge-$plugin.so" "$P/"
	chmod 0755 "$P" "$P/ngauge-$plugin.so"
	chmod 0777 "$P"
	refused "a plugin directory writable by every user" "$P" "plugin directory $P: writable by every user"
	chmod 0775 "$P"
	refused "a plugin directory writable by its group" "$P" "plugin directory $P: writable by its group"
	chmod 0755 "$P"
	chmod 0666 "$P/ngauge-$plugin.so"
	refused "a plugin writable by every user" "$P" "plugin $P/ngauge-$plugin.so: writable by every user"
	chmod 0755 "$P/ngauge-$plugin.so"
	U="$T/plugins-open" S="$T/plugins-link"
	mkdir -p "$U" "$S"
	cp "$NGAUGE_BUILD/ngauge-$plugin.so" "$U/"
	chmod 0755 "$S" "$U/ngauge-$plugin.so"
	chmod 0777 "$U"
	ln -s "$U/ngauge-$plugin.so" "$S/ngauge-$plugin.so"
	refused "a link to a plugin in a directory writable by every user" "$S" \
		"plugin directory .*/plugins-open: writable by every user"
	if [ "$(id -u)" = 0 ]; then
		chown 65534 "$P/ngauge-$plugin.so"
		refused "a plugin owned by another user" "$P" "plugin $P/ngauge-$plugin.so: owned by another user"
		chown 0 "$P/ngauge-$plugin.so"
	fi
	NGAUGE_PLUGIN_DIR="$P" run_limited 120 "$NGAUGE" "$T/out" "$T/err" "$NGAUGE" -x $mod -p pingpong -s 1 -c 1 >&2
	! grep -Eq 'refusing|not found' "$T/err" && pass "the same plugin with safe modes is loaded" ||
		fail "safe plugin: $(cat "$T/err")"
fi
finish
