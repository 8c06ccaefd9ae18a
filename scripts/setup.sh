#!/bin/sh
# Installs the Debian packages ngauge needs (only those missing), then
# configures and builds it in ./build (or $1).  Run as root on Debian 12.
# MPICH and Open MPI are both installed; MPICH is the default (-Dmpi_impl).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
if [ $# -gt 0 ]; then shift; fi

PKGS="meson ninja-build pkg-config gcc libc6-dev python3 libgsl-dev libjansson-dev gnuplot-nox chromium libpng-dev
      mpich libmpich-dev libibverbs-dev librdmacm-dev ibverbs-providers rdma-core ibverbs-utils perftest
      libfabric-dev libucx-dev ucx-utils iproute2 netpipe-tcp netpipe-mpich2 clang-format python3-jsonschema
      qemu-system-x86 linux-image-amd64 busybox-static cpio kmod
      slurm-wlm slurmctld slurmd slurm-client munge libpmi2-0-dev libpmix-dev openmpi-bin libopenmpi-dev
      libsodium-dev clang libclang-rt-14-dev gdb"
# packaging/: building and checking the Debian package (packaging/build-deb.sh).
PKGS="$PKGS debhelper devscripts lintian"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	# Open MPI beside MPICH: Debian's alternatives would make Open MPI's the plain mpiexec and mpicc; MPICH
	# stays the default (a build with -Dmpi_impl=ompi uses mpiexec.openmpi by its name).
	for alt in mpirun:/usr/bin/mpirun.mpich mpi:/usr/bin/mpicc.mpich; do
		if [ -e "${alt#*:}" ]; then update-alternatives --set "${alt%%:*}" "${alt#*:}" >/dev/null; fi
	done
fi
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" "$@" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
echo "setup: built $BUILD/ngauge"
