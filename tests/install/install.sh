#!/bin/bash
# `meson install --destdir`: the binary, the plugins in <libdir>/ngauge, the man page, the bash and zsh
# completions and the documentation land where meson's options say (doc/install.md); the installed binary
# runs (--version, --list), finds its plugins through NGAUGE_PLUGIN_DIR (the destdir is not the prefix it
# was built for), and names the installed plugin directory when they are missing.
. "$(dirname "$0")/../integration/lib.sh"
: "${NGAUGE_BUILD:?}"

# Outside $T: finish() checks every *.json under $T as a result file, and the documentation installs the
# schema.
D=$(mktemp -d /tmp/ngauge-install.XXXXXX)
trap 'rm -rf "$T" "$D"' EXIT
if ! meson install -C "$NGAUGE_BUILD" --destdir "$D" --no-rebuild --quiet >"$T/install.out" 2>&1; then
	fail "meson install --destdir failed: $(tail -3 "$T/install.out")"
	finish
fi
# Meson's own paths: prefix, bindir, libdir, mandir, datadir.
eval "$(meson introspect "$NGAUGE_BUILD" --buildoptions | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("prefix", "bindir", "libdir", "mandir", "datadir", "zsh_completions"):
    print("%s=%s" % (k, json.dumps(o[k])))
')"
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
bin="$D$(abs "$bindir")/ngauge"
plugdir="$(abs "$libdir")/ngauge"
zdir=${zsh_completions:-$(abs "$datadir")/zsh/site-functions}
want=("$bin" "$D$(abs "$mandir")/man1/ngauge.1" "$D$(abs "$datadir")/bash-completion/completions/ngauge"
	"$D$(abs "$zdir")/_ngauge" "$D$(abs "$datadir")/doc/ngauge/README.md"
	"$D$(abs "$datadir")/doc/ngauge/install.md" "$D$(abs "$datadir")/doc/ngauge/schema/ngauge-result-1.schema.json")
for p in mpi verbs ofi; do
	[ -e "$NGAUGE_BUILD/ngauge-$p.so" ] && want+=("$D$plugdir/ngauge-$p.so")
done
for f in "${want[@]}"; do
	[ -s "$f" ] && pass "installed ${f#"$D"}" || fail "not installed: ${f#"$D"}"
done
n=$(find "$D$plugdir" -name 'ngauge-*.so' | wc -l)
[ "$n" -ge 1 ] && pass "$n plugin(s) in ${plugdir}" || fail "no plugin in $plugdir"
readelf -d "$bin" | grep NEEDED | grep -Eq 'mpi|fabric|ibverbs' && fail "the installed ngauge links a plugin's library" ||
	pass "the installed ngauge links none of MPI, libfabric, libibverbs"

# The installed binary.
if run 0 "$bin" --version && grep -q "^ngauge $("$NGAUGE" --version | cut -d' ' -f2)\$" "$T/out"; then
	pass "installed ngauge --version: $(cat "$T/out")"
else
	fail "installed ngauge --version: $(cat "$T/out" "$T/err")"
fi
run 0 "$bin" --list && grep -q "^  pingpong" "$T/out" && pass "installed ngauge --list" || fail "installed --list"
MANWIDTH=200 man -l "$D$(abs "$mandir")/man1/ngauge.1" 2>/dev/null | grep -q -- "--rdma-backend" &&
	pass "man -l of the installed page" || fail "man -l of the installed page"
run 0 env NGAUGE_PLUGIN_DIR="$D$plugdir" "$bin" -x tcp -p pingpong -s 8 -c 10 && pass "installed ngauge runs (tcp)" ||
	fail "installed ngauge does not run"
if [ -e "$D$plugdir/ngauge-mpi.so" ] && command -v mpiexec >/dev/null; then
	run 0 env NGAUGE_PLUGIN_DIR="$D$plugdir" "$bin" -x mpi -p pingpong -s 8 -c 10 &&
		pass "installed ngauge loads its mpi plugin from NGAUGE_PLUGIN_DIR" || fail "installed -x mpi"
	if [ ! -e "$plugdir/ngauge-mpi.so" ]; then
		run 2 "$bin" -x mpi -p pingpong -s 8 -c 10 && grep -q "needs ngauge-mpi.so, not found in $plugdir" "$T/err" &&
			pass "installed ngauge looks in $plugdir" || fail "installed ngauge, no plugin: $(cat "$T/err")"
	fi
fi
finish
