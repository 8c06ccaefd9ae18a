#!/bin/bash
# overlap and skew over the mpi and mpirma modules (mpiexec -n 2): the skew
# slopes of the MPI library's two-sided messages and of its one-sided epochs
# are printed, and rows and blocks follow the result format; with --verify at
# odd sizes.  (What the slopes are depends on the library: MPICH sends 64 KiB
# by rendezvous on one host, so its origin waits for the target's receive,
# and its one-sided operations between processes of one host go through its
# active-message path, which needs the target inside MPI: slopes near 1.)
. "$NGAUGE_SRC/tests/integration/lib.sh"
command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }

run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p skew --skew-compute 0-200/5 -c 30 -w 5 -o "$T/sk.json" &&
	grep "^# skew" "$T/out" && pycheck "$T/sk.json" "skew over mpi: rows, slope with its CI" '
import math
assert r["launch"] == "mpi" and r["complete"] and r["skew"]["mode"] == "two-sided"
rows = r["results"]
assert [x["skew_us"] for x in rows] == [0, 50, 100, 150, 200], rows
for x in rows: assert stats_ok(x["time_us"]), x
e = r["skew"]["sizes"][0]
lo, hi = e["slope"]["ci95"]
assert math.isfinite(e["slope"]["value"]) and lo <= e["slope"]["value"] <= hi, e
print("mpi skew slope %.3f [%.3f, %.3f]" % (e["slope"]["value"], lo, hi))
'
run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p overlap --overlap-side both --verify -s 1000,65537 --overlap-compute 0,30 \
	-c 5 -w 2 -o "$T/ov.json" && pycheck "$T/ov.json" "overlap over mpi, both sides, --verify at odd sizes" '
rows = r["results"]
assert r["complete"] and [(x["size"], x["side"], x["compute_us"]) for x in rows] == \
    [(s, side, x) for s in (1000, 65537) for side in ("sender", "receiver") for x in (0, 30)], rows
for x in rows:
    assert stats_ok(x["time_us"]) and 0 <= x["overlap_ratio"] <= 1, x
'
if "$NGAUGE" --list | grep -q "^  mpirma "; then
	run 0 mpiexec -n 2 "$NGAUGE" -x mpirma -p skew --skew-rma --skew-compute 0-200/5 -c 30 -w 5 -o "$T/skr.json" &&
		grep "^# skew" "$T/out" && pycheck "$T/skr.json" "skew --skew-rma over mpirma: rows, slope with its CI" '
import math
assert r["module"] == "mpirma" and r["complete"] and r["skew"]["mode"] == "one-sided" and r["skew"]["burst"] == 16
for x in r["results"]: assert stats_ok(x["time_us"]), x
e = r["skew"]["sizes"][0]
lo, hi = e["slope"]["ci95"]
assert math.isfinite(e["slope"]["value"]) and lo <= e["slope"]["value"] <= hi, e
print("mpirma skew slope %.3f [%.3f, %.3f]" % (e["slope"]["value"], lo, hi))
'
	run 0 mpiexec -n 2 "$NGAUGE" -x mpirma -p overlap --overlap-rma --overlap-side both --verify -s 1000,65537 \
		--overlap-compute 0,30 -c 5 -w 2 -o "$T/ovr.json" && pycheck "$T/ovr.json" \
		"overlap --overlap-rma over mpirma, both sides, --verify at odd sizes" '
assert r["complete"] and r["overlap"]["mode"] == "one-sided" and len(r["results"]) == 8
for x in r["results"]: assert stats_ok(x["time_us"]) and 0 <= x["overlap_ratio"] <= 1, x
'
else
	echo "no mpirma module in this build: its skew and overlap not run"
fi
finish
