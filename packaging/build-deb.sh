#!/bin/sh
# Builds the Debian package of this tree and checks it (doc/install.md):
#   1. a copy of the tracked files (as they are in the work tree) plus packaging/debian as debian/, in
#      OUT/ngauge-VERSION (OUT: $1, default $TMPDIR/ngauge-deb: outside the
#      repository, whose git would otherwise name the version);
#   2. dpkg-buildpackage -us -uc there (source and binary package; the unit and install suites run in the
#      build unless DEB_BUILD_OPTIONS has nocheck);
#   3. lintian on the .changes: no error (warnings are shown);
#   4. the package: dpkg's dependency check (dpkg --dry-run -i), its contents (binary, plugins, man page,
#      completions), and the packaged ngauge --version, run from the unpacked package;
#   5. the package installed for real and purged again in a private root (packaging/install-deb.sh: an
#      overlay over / in a mount namespace of its own, so this machine's installation is untouched): the
#      installed ngauge --version, its plugins, a tcp and an mpi run, man ngauge.  Skipped, with the reason,
#      where the machine forbids namespaces or the caller is not root.
# Needs debhelper, devscripts and lintian (scripts/setup.sh installs them).  Exit 0 when all holds.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-${TMPDIR:-/tmp}/ngauge-deb}" && cd "${1:-${TMPDIR:-/tmp}/ngauge-deb}" && pwd)
VERSION=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -1)
DEBVER=$(dpkg-parsechangelog -l "$SRC/packaging/debian/changelog" -S Version)
[ "$VERSION" = "$DEBVER" ] || { echo "build-deb: meson.build says $VERSION, debian/changelog $DEBVER" >&2; exit 1; }
TREE="$OUT/ngauge-$VERSION"
rm -rf "$OUT"/ngauge*
mkdir -p "$TREE"
(cd "$SRC" && git ls-files -z | grep -zv '^packaging/debian/' | xargs -0 cp --parents -t "$TREE")
cp -r "$SRC/packaging/debian" "$TREE/debian"

echo "build-deb: dpkg-buildpackage -us -uc in $TREE"
(cd "$TREE" && dpkg-buildpackage -us -uc) >"$OUT/build.log" 2>&1 || {
	tail -40 "$OUT/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log: $OUT/build.log)" >&2
	exit 1
}
CHANGES=$(ls "$OUT"/ngauge_"$VERSION"_*.changes)
DEB=$(ls "$OUT"/ngauge_"$VERSION"_*.deb)
echo "build-deb: built $(basename "$DEB")"

echo "build-deb: lintian"
lintian --fail-on error --tag-display-limit 0 "$CHANGES" | tee "$OUT/lintian.log"
echo "build-deb: lintian: no error ($(grep -c '^W:' "$OUT/lintian.log" || true) warning(s))"

dpkg --dry-run -i "$DEB" >/dev/null
echo "build-deb: dpkg -i --dry-run: installable"
X="$OUT/unpacked"
rm -rf "$X"
dpkg-deb -x "$DEB" "$X"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in usr/bin/ngauge "usr/lib/$MA/ngauge/ngauge-mpi.so" "usr/lib/$MA/ngauge/ngauge-verbs.so" \
	"usr/lib/$MA/ngauge/ngauge-ofi.so" "usr/lib/$MA/ngauge/ngauge-ucx.so" "usr/lib/$MA/ngauge/ngauge-pmi2.so" "usr/lib/$MA/ngauge/ngauge-pmix.so" \
	usr/share/man/man1/ngauge.1.gz usr/share/bash-completion/completions/ngauge \
	usr/share/zsh/vendor-completions/_ngauge usr/share/doc/ngauge/copyright usr/share/doc/ngauge/install.md; do
	# dh_compress gzips pages over 4 KiB
	[ -s "$X/$f" ] || [ -s "$X/$f.gz" ] || { echo "build-deb: the package lacks /$f" >&2; exit 1; }
done
echo "build-deb: the package holds the binary, the plugins, the man page, the completions, the documentation"
V=$(NGAUGE_PLUGIN_DIR="$X/usr/lib/$MA/ngauge" "$X/usr/bin/ngauge" --version)
[ "$V" = "ngauge $VERSION" ] || { echo "build-deb: packaged ngauge --version says '$V'" >&2; exit 1; }
echo "build-deb: packaged $V"

echo "build-deb: dpkg -i in a private root (packaging/install-deb.sh)"
rc=0
"$SRC/packaging/install-deb.sh" "$DEB" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 77 ] || exit "$rc"
