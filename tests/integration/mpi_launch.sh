#!/bin/bash
# MPI launch: the mpi module, and tcp with MPI as bootstrap only.
. "$(dirname "$0")/lib.sh"
command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }

if run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p pingpong -s 1-1M -c 100 -o "$T/m2.json"; then
	pycheck "$T/m2.json" "mpiexec -n 2 mpi pingpong: 21 rows, MPI launch recorded" '
assert r["complete"] and r["module"] == "mpi" and r["ranks"] == 2 and r["launch"] == "mpi"
assert [row["size"] for row in r["results"]] == [2**i for i in range(21)]
assert r["env"]["mpi"] and "MPICH" in r["env"]["mpi"] or "MPI" in r["env"]["mpi"]
for row in r["results"]: assert stats_ok(row["latency_us"])
'
fi
if run 0 mpiexec -n 4 "$NGAUGE" -x mpi -p pingpong -s 1,64K -c 50 -o "$T/m4.json"; then
	pycheck "$T/m4.json" "mpiexec -n 4 mpi pingpong: pairs" '
assert r["ranks"] == 4 and all(len(row["pairs"]) == 2 for row in r["results"])
'
fi
for n in 2 4; do
	if run 0 mpiexec -n $n "$NGAUGE" -x tcp -p pingpong -s 1,4K -c 50 --verify -o "$T/t$n.json"; then
		pycheck "$T/t$n.json" "mpiexec -n $n tcp pingpong (MPI bootstrap only)" '
assert r["module"] == "tcp" and r["launch"] == "mpi" and len(r["results"]) == 2
'
	fi
done
if run 0 mpiexec -n 4 "$NGAUGE" -x mpi -p n1 -s 1,64K -c 20 --verify -o "$T/n1.json"; then
	pycheck "$T/n1.json" "mpiexec -n 4 mpi n1" '
assert all(row["clients"] == 3 and len(row["per_client"]) == 3 for row in r["results"])
'
fi
run 0 mpiexec -n 3 "$NGAUGE" -x tcp -p 1n -s 1,4K -c 20 --verify && pass "mpiexec -n 3 tcp 1n verify"
# Without mpiexec, the mpi module re-runs itself under mpiexec.
if run 0 "$NGAUGE" -x mpi -p pingpong -s 1,8 -c 20 -o "$T/re.json"; then
	pycheck "$T/re.json" "plain 'ngauge -x mpi' launches itself under mpiexec" '
assert r["launch"] == "mpi" and r["ranks"] == 2
'
fi
# Oversubscription: MPI ranks busy-poll; 3 of them on this host's 2 cores (--pin 0,1 where it has more)
# are flagged, with one warning; 2 are not.
pin=(); [ "$(nproc)" -gt 2 ] && pin=(--pin 0,1)
if [ "$(nproc)" -ge 2 ]; then
	run 0 mpiexec -n 3 "$NGAUGE" -x mpi -p n1 "${pin[@]}" -s 1 -c 20 -w 2 -o "$T/os3.json" &&
		oversub "$T/os3.json" "mpiexec -n 3 mpi on 2 cores" 3 2
	run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p pingpong "${pin[@]}" -s 1 -c 20 -w 2 -o "$T/os2.json" &&
		oversub "$T/os2.json" "mpiexec -n 2 mpi on 2 cores" 0 0
else
	echo "one core: oversubscription checks left out"
fi
expect_odd() {
	run 2 mpiexec -n 3 "$NGAUGE" -x mpi -p pingpong -s 1 && grep -q "even number" "$T/err" &&
		pass "odd rank count under mpiexec refused" || fail "odd rank count"
}
expect_odd
finish
