# Sourced by the benchmark scripts (bench/*_bench.sh): checks NGAUGE, makes
# $T, a private temporary directory removed at exit, and offers
# bench_need_mpi, which skips (exit 77) without mpiexec or an MPI build, and
# secs, which times a command (its output in $T/out and $T/err).
# Usage: . bench/lib.sh NAME   (NAME names the temporary directory)
: "${NGAUGE:?NGAUGE must point to the ngauge binary}"
T=$(mktemp -d "/tmp/ngauge-$1-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

bench_need_mpi() {
	command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
	"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }
}

# secs CMD...: runs CMD quietly, prints its wall time in seconds; fails with it.
secs() {
	local start=$EPOCHREALTIME rc
	timeout -k 5 120 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$EPOCHREALTIME"
	return $rc
}

# osu_build KIND PROG...: builds the OSU Micro-Benchmarks programs PROG (osu_latency, osu_bcast, ...) into $T from
# the source tree OSU_DIR points to, with OSU_MPICC (default mpicc; $mpicc after the call); KIND is pt2pt or
# collective (7.x: c/mpi/pt2pt/standard, c/mpi/collective/blocking, c/util; older: mpi/pt2pt[/standard],
# mpi/collective[/blocking], util). Four decimals instead of two (print precision only: at 1 B, 0.01 us is 2.5%).
# Skips (exit 77) without OSU_DIR or the compiler; exits 1 when the tree lacks the sources or a build fails.
# Prints OSU's version and the compiler's.
osu_build() {
	local kind=$1 src='' util='' d f prog utils=()
	shift
	[ -n "${OSU_DIR:-}" ] || { echo "OSU_DIR is not set (an OSU Micro-Benchmarks source tree): skipped"; exit 77; }
	mpicc=${OSU_MPICC:-mpicc}
	for d in "$OSU_DIR/c/mpi/$kind/standard" "$OSU_DIR/c/mpi/$kind/blocking" "$OSU_DIR/mpi/$kind/standard" \
		"$OSU_DIR/mpi/$kind/blocking" "$OSU_DIR/mpi/$kind"; do
		[ -f "$d/$1.c" ] && { src=$d; break; }
	done
	for d in "$OSU_DIR/c/util" "$OSU_DIR/util"; do
		[ -f "$d/osu_util.c" ] && { util=$d; break; }
	done
	[ -n "$src" ] && [ -n "$util" ] || { echo "OSU_DIR=$OSU_DIR holds no $1.c and osu_util.c"; exit 1; }
	command -v "$mpicc" >/dev/null || { echo "$mpicc not found (set OSU_MPICC): skipped"; exit 77; }
	for f in osu_util.c osu_util_mpi.c osu_util_graph.c osu_util_papi.c osu_util_validation.c; do
		[ -f "$util/$f" ] && utils+=("$util/$f")
	done
	for prog in "$@"; do
		"$mpicc" -O2 -DFLOAT_PRECISION=4 -I"$util" -o "$T/$prog" "$src/$prog.c" "${utils[@]}" -lm 2>"$T/$prog.cc" ||
			{ echo "building $prog failed:"; tail -5 "$T/$prog.cc"; exit 1; }
	done
	echo "OSU Micro-Benchmarks $(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$OSU_DIR/configure.ac" \
		2>/dev/null) from $OSU_DIR, built with $("$mpicc" -v 2>&1 | head -n 1)"
}
