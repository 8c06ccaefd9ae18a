#!/bin/bash
# The mpirma module from the command line and its watchdog:
#  - ngauge --list shows it, one-sided and needing an MPI launch;
#  - its two-sided channel (the mpi module's operations) carries a verified
#    ping-pong under mpiexec, and ngauge relaunches itself under mpiexec;
#  - an access epoch whose target never posts: MPI_Win_start cannot return,
#    so the watchdog ends the run after --timeout (2 s) with exit status 1
#    and one line naming MPI_Win_start and rank 1; nothing hangs.
# Usage: mpirma.sh TEST_RMA_CONFORM (the conformance test's program).
. "$NGAUGE_SRC/tests/integration/lib.sh"
CONFORM=${1:?usage: mpirma.sh TEST_RMA_CONFORM}
command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
"$NGAUGE" --list | grep -q "^  mpirma " || { echo "built without MPI: skipped"; exit 77; }

"$NGAUGE" --list | grep -A1 "^  mpirma " | grep -q "one-sided operations, MPI launch" &&
	pass "--list: mpirma, one-sided, MPI launch" || fail "--list does not show mpirma's capabilities"

if run 0 mpiexec -n 2 "$NGAUGE" -x mpirma -p pingpong --verify -s 1,7,65537 -c 20 -w 2 -o "$T/pp.json"; then
	pycheck "$T/pp.json" "mpiexec -n 2 mpirma pingpong --verify: the mpi module's channel" "
assert r['complete'] and r['module'] == 'mpirma' and r['launch'] == 'mpi' and r['ranks'] == 2
assert r['parameters']['verify'] is True
assert [x['size'] for x in r['results']] == [1, 7, 65537]
assert all(stats_ok(x['latency_us']) for x in r['results'])
assert r['env']['device'].startswith('MPICH') or 'MPI' in r['env']['device']
"
fi
run 0 "$NGAUGE" -x mpirma -p pingpong -s 8 -c 20 -w 2 && grep -q "module mpirma" "$T/out" &&
	pass "ngauge -x mpirma without mpiexec relaunches itself" || fail "relaunch of mpirma"

# Start without a post: bounded by the watchdog.
t0=$(date +%s%N)
run 1 mpiexec -n 2 "$CONFORM" mpirma start-timeout
ms=$((($(date +%s%N) - t0) / 1000000))
lines=$(grep -c "mpirma:" "$T/err")
if grep -q "rank 0: mpirma: MPI_Win_start to rank 1 has not returned within 2 s: no matching post" "$T/err" &&
	[ "$lines" -eq 1 ] && ! grep -q "returned (" "$T/err" && [ "$ms" -ge 2000 ] && [ "$ms" -lt 20000 ]; then
	pass "start without a post: one line naming MPI_Win_start and rank 1, exit 1 after $ms ms"
else
	fail "start without a post ($lines line(s), $ms ms)"
	sed 's/^/  stderr: /' "$T/err" >&2
fi
finish
