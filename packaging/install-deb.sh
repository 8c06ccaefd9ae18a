#!/bin/sh
# Installs a built Debian package of ngauge for real, uses it and purges it, without touching this
# machine's own installation (doc/install.md): in a mount namespace of its own, an overlay over / whose
# writes go to a tmpfs (dropped with the namespace) is the root of a chroot, with /proc, /sys and /dev bound
# in.  Inside it:
#   1. dpkg -i DEB (dpkg's dependency check against this machine's packages);
#   2. the installed ngauge --version, from /usr/bin, with no NGAUGE_PLUGIN_DIR;
#   3. the package's plugins (mpi, verbs, ofi, pmi2, pmix) in /usr/lib/<triplet>/ngauge, and ngauge --list
#      names the modules of the plugins, and a run over tcp (two local ranks) and one over the mpi
#      plugin under mpiexec (where mpiexec is installed) complete;
#   4. man finds the installed page (man -w ngauge) and the page as man renders it holds every option
#      --help and --list show; the bash completion offers the modules;
#   5. dpkg --purge ngauge: the package is gone with its files.
# Afterwards this machine's own dpkg database and /usr/bin/ngauge are checked to be as they were.
# Needs root, unshare(1) and overlayfs: exit 77 (skipped) where the machine forbids them.
#   packaging/install-deb.sh DEB     (packaging/build-deb.sh runs it on the package it built)
set -eu
DEB=$(cd "$(dirname "${1:?usage: install-deb.sh DEB}")" && pwd)/$(basename "$1")
[ -s "$DEB" ] || { echo "install-deb: no package $1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "install-deb: needs root (dpkg -i in a private root): skipped"; exit 77; }
command -v unshare >/dev/null || { echo "install-deb: no unshare(1): skipped"; exit 77; }
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	{ echo "install-deb: no overlayfs: skipped"; exit 77; }
unshare --mount true 2>/dev/null || { echo "install-deb: mount namespaces forbidden here: skipped"; exit 77; }

host_state() {
	printf '%s; %s' "$(dpkg-query -W -f '${Status} ${Version}' ngauge 2>/dev/null || echo "ngauge not known to dpkg")" \
		"$(if [ -e /usr/bin/ngauge ]; then ls -l /usr/bin/ngauge; else echo "no /usr/bin/ngauge"; fi)"
}
before=$(host_state)
W=$(mktemp -d /tmp/ngauge-install-deb.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$DEB" "$W/ngauge.deb"
mkdir "$W/ovl"

# The inside: runs in the chroot (sh -s with the package at /tmp/ngauge.deb).
cat >"$W/inside.sh" <<'EOF'
set -eu
fail() { echo "install-deb: $*" >&2; exit 1; }
export LC_ALL=C.UTF-8 HOME=/root
unset NGAUGE_PLUGIN_DIR
dpkg -i /tmp/ngauge.deb >/tmp/dpkg.log 2>&1 || { tail -20 /tmp/dpkg.log >&2; fail "dpkg -i failed"; }
echo "install-deb: dpkg -i: $(dpkg-query -W -f '${Package} ${Version} ${Status}' ngauge)"
[ "$(command -v ngauge)" = /usr/bin/ngauge ] || fail "ngauge is not /usr/bin/ngauge after the install"
V=$(ngauge --version) || fail "the installed ngauge --version failed"
[ "$V" = "ngauge $(dpkg-query -W -f '${Version}' ngauge)" ] || fail "ngauge --version says '$V'"
echo "install-deb: installed $V"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
list=$(ngauge --list) || fail "ngauge --list failed"
for p in mpi verbs ofi pmi2 pmix; do
	so=/usr/lib/$MA/ngauge/ngauge-$p.so
	[ -f "$so" ] || fail "the package lacks $so"
	dpkg -S "$so" >/dev/null || fail "$so is not the package's (dpkg -S)"
done
for m in tcp mpi ibrc rdma; do
	echo "$list" | grep -q "^  $m " || fail "ngauge --list does not name the module $m"
done
ngauge -x tcp -p pingpong -s 8 -c 200 -w 10 -o /tmp/tcp.json >/tmp/tcp.out 2>&1 ||
	{ cat /tmp/tcp.out >&2; fail "ngauge -x tcp -p pingpong failed"; }
echo "install-deb: a tcp ping-pong of two local ranks ran"
if command -v mpiexec >/dev/null; then
	mpiexec -n 2 ngauge -x mpi -p pingpong -s 8 -c 200 -w 10 -o /tmp/mpi.json >/tmp/mpi.out 2>&1 ||
		{ cat /tmp/mpi.out >&2; fail "mpiexec -n 2 ngauge -x mpi failed (the mpi plugin from /usr/lib/$MA/ngauge)"; }
	echo "install-deb: mpiexec -n 2 ngauge -x mpi ran (the installed mpi plugin)"
fi
page=$(man -w ngauge) || fail "man -w ngauge finds no page"
case $page in /usr/share/man/man1/ngauge.1*) ;; *) fail "man -w ngauge: $page, not the package's" ;; esac
MANWIDTH=1000 man -P cat ngauge 2>/dev/null | sed 's/.\x08//g' >/tmp/man.txt
[ -s /tmp/man.txt ] || fail "man ngauge rendered nothing"
n=0
# the options as tests/install/manpage.py reads them: a word of --help or --list that starts with --
for o in $( (ngauge --help; echo "$list") | grep -oE -- '(^|[[:space:]])--[a-z][a-z0-9-]*[a-z0-9]' | tr -d ' \t' | sort -u); do
	grep -q -- "$o" /tmp/man.txt || fail "man ngauge (installed) lacks $o"
	n=$((n + 1))
done
echo "install-deb: man ngauge ($page) renders all $n options of --help and --list"
[ -f /usr/share/bash-completion/completions/ngauge ] || fail "no bash completion"
c=$(bash -c '. /usr/share/bash-completion/completions/ngauge; COMP_WORDS=(ngauge -x ""); COMP_CWORD=2;
	f=$(complete -p ngauge | sed "s/.*-F \([^ ]*\).*/\1/"); $f ngauge "" -x; echo "${COMPREPLY[*]}"')
echo " $c " | grep -q " tcp " || fail "the bash completion does not offer the module tcp after -x (offers: $c)"
echo "install-deb: the bash completion offers the modules"
dpkg --purge ngauge >/tmp/purge.log 2>&1 || { cat /tmp/purge.log >&2; fail "dpkg --purge ngauge failed"; }
dpkg-query -W ngauge >/dev/null 2>&1 && [ "$(dpkg-query -W -f '${Status}' ngauge)" != "unknown ok not-installed" ] &&
	fail "ngauge still known to dpkg after the purge: $(dpkg-query -W -f '${Status}' ngauge)"
for f in /usr/bin/ngauge /usr/lib/$MA/ngauge /usr/share/man/man1/ngauge.1.gz /usr/share/doc/ngauge; do
	[ ! -e "$f" ] || fail "$f is left after dpkg --purge"
done
echo "install-deb: dpkg --purge ngauge removed it"
EOF

unshare --mount --propagation private -- sh -eu -c '
W=$1
mount -t tmpfs tmpfs "$W/ovl"
mkdir "$W/ovl/upper" "$W/ovl/work" "$W/ovl/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$W/ovl/upper,workdir=$W/ovl/work" "$W/ovl/root"
R=$W/ovl/root
for d in proc sys dev; do mount --rbind "/$d" "$R/$d"; done
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
cp "$W/ngauge.deb" "$R/tmp/ngauge.deb"
chroot "$R" /bin/sh -s <"$W/inside.sh"
' sh "$W" || { echo "install-deb: FAILED inside the private root" >&2; exit 1; }

after=$(host_state)
[ "$before" = "$after" ] || { echo "install-deb: this machine's ngauge changed: '$before' -> '$after'" >&2; exit 1; }
echo "install-deb: this machine's own installation untouched ($before)"
