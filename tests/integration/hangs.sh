#!/bin/bash
# A hang planted at every layer ends within --timeout + 5 s (doc/validation.md, "A run never hangs"): a rank
# stopped with SIGSTOP in the middle of a run, after its first rows; the rank(s) still running end with exit 1,
# each with its line (the module's "lost" line or the run's watchdog's "no progress" line naming where it
# stood), and the result file keeps the rows measured with "complete": false and the reason in "stopped".
#   hangs.sh local   tcp (sleeping and spinning), the RDMA layer over shm (rdma), rma over libfabric (shm)
#   hangs.sh mpi     the mpi module under this build's mpiexec (MPICH, or Open MPI in the build for it),
#                    pingpong and the library's own alltoall
# The verbs modules are planted in the guest (tests/rxe/spipe-suite.sh, "stopped for good").
. "$(dirname "$0")/lib.sh"
what=${1:-local}
TMO=3

# rank_of PID: the MPI rank of a process of an MPI launch (its environment), or "" .
rank_of() {
	tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^\(PMI_RANK\|OMPI_COMM_WORLD_RANK\)=//p' | head -1
}

# plant NAME NRANKS FILE CMD...: runs CMD (NRANKS ranks, which write FILE) in a session of its own, stops
# rank 1 with SIGSTOP once FILE holds a row, and checks how the run ends: every other rank's line, the exit
# status (1 from the local launch; an MPI launcher's is its own, MPICH's the signal it ended the stopped rank
# with: the ranks themselves exit 1), the partial result.
plant() {
	local name=$1 nranks=$2 file=$3 pid victim="" start rc took p r
	shift 3
	rm -f "$file"
	setsid "$@" >"$T/$name.out" 2>"$T/$name.err" &
	pid=$!
	if ! wait_rows "$file"; then
		fail "$name: no row was measured: $(tail -3 "$T/$name.err")"; kill -9 -- -$pid 2>/dev/null; wait $pid
		return
	fi
	# rank 1: the process whose environment says so (an MPI launch), else the local launch's second child
	for p in $(pgrep -f -- "$file"); do
		[ "$(rank_of "$p")" = 1 ] && victim=$p
	done
	if [ -z "$victim" ]; then
		local kids=($(pgrep -P $pid))
		victim=${kids[1]:-}
	fi
	[ -n "$victim" ] || { fail "$name: no rank 1 to stop"; kill -9 -- -$pid; wait $pid; return; }
	kill -STOP "$victim"
	start=$EPOCHREALTIME
	for _ in $(seq $(((TMO + 15) * 10))); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	took=$(python3 -c "print(round($EPOCHREALTIME - $start, 1))")
	if kill -0 $pid 2>/dev/null; then
		fail "$name: still running $took s after the stop (--timeout $TMO)"
		sed 's/^/  stderr: /' "$T/$name.err" | tail -5 >&2
	fi
	kill -CONT "$victim" 2>/dev/null
	kill -9 -- -$pid 2>/dev/null
	wait $pid; rc=$?
	python3 -c "import sys; sys.exit(0 if $took <= $TMO + 5 else 1)" &&
		pass "$name: ended $took s after the stop (--timeout $TMO)" || fail "$name: ended after $took s"
	case $name in
	mpi*) [ "$rc" != 0 ] && pass "$name: exit $rc (the launcher's)" || fail "$name: exit 0" ;;
	*) [ "$rc" = 1 ] && pass "$name: exit 1" || fail "$name: exit $rc" ;;
	esac
	for ((r = 0; r < nranks; r++)); do
		[ $r = 1 ] && continue
		grep -Eq "rank $r: .*(no progress for [0-9.]+ s .*waiting in|rank 1|lost|within)" "$T/$name.err" &&
			pass "$name: rank $r says where it stood: $(grep -m1 "rank $r: " "$T/$name.err" | cut -c1-200)" ||
			fail "$name: no line of rank $r saying why: $(tail -3 "$T/$name.err")"
	done
	pycheck "$file" "$name: the rows measured kept, complete: false, the reason" '
assert r["complete"] is False and len(r["results"]) >= 1, (r["complete"], len(r["results"]))
assert r["stopped"], r.get("stopped")
for row in r["results"]: assert stats_ok(row[[k for k in row if isinstance(row[k], dict) and "median" in row[k]][0]])
'
}

# Short sizes, many of them: the first row comes soon, and the run lasts past the stop.
PP=(-p pingpong -s 1-8K:+8 -c 2000 -w 10 --timeout $TMO)
case $what in
local)
	for mode in sleep spin; do
		plant "tcp-$mode" 2 "$T/tcp-$mode.json" "$NGAUGE" -x tcp --tcp-poll $mode "${PP[@]}" -o "$T/tcp-$mode.json"
	done
	plant rdma-shm 2 "$T/rdma.json" "$NGAUGE" -x rdma --rdma-backend shm --rdma-poll yield "${PP[@]}" -o "$T/rdma.json"
	if "$NGAUGE" -x rma --rdma-backend ofi --ofi-provider shm -p rma -s 8 -c 2 -w 1 >/dev/null 2>&1; then
		plant rma-ofi 2 "$T/rma.json" "$NGAUGE" -x rma --rdma-backend ofi --ofi-provider shm --rdma-poll yield \
			-p rma -s 1-16K:+1 -c 200 -w 2 --timeout $TMO -o "$T/rma.json"
	else
		echo "note: libfabric's shm provider does not open here: rma over ofi not planted"
	fi
	;;
mpi)
	command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
	plant mpi-pingpong 2 "$T/mpi.json" mpiexec -n 2 "$NGAUGE" -x mpi "${PP[@]}" -o "$T/mpi.json"
	plant mpi-alltoall 3 "$T/a2a.json" mpiexec -n 3 "$NGAUGE" -x mpi -p alltoall --a2a-algo mpi \
		-s 8-8K:+8 -c 300 -w 5 --timeout $TMO -o "$T/a2a.json"
	;;
*) echo "hangs.sh: local or mpi" >&2; exit 2 ;;
esac
finish
