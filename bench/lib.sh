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
