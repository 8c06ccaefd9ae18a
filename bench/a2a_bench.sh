#!/bin/bash
# Alltoall algorithms against MPI_Alltoall (mpi module, mpiexec), 2 and 4
# ranks, 8 B, 512 B and 64 KiB per block.  Prints every algorithm's median
# time per alltoall and, per size, the ratio best ngauge algorithm /
# MPI_Alltoall (and the best of those that use only the module's
# point-to-point operations: bruck, isend, pairwise).  At 4 ranks it also
# runs two virtual nodes of 2 ranks (--ranks-per-node 2), where leader, sa
# and rd send over the module too.
#
# Requirement checked: at 64 KiB with 4 ranks, best ngauge <= 1.25 x
# MPI_Alltoall (exit 1 otherwise).  BENCH_COUNT sets the repetitions.
set -u
. "$(dirname "$0")/lib.sh" a2a
bench_need_mpi
count=${BENCH_COUNT:-200}
cores=$(nproc)
status=0

for cfg in "2 0" "4 0" "4 2"; do
	set -- $cfg
	np=$1 k=$2
	c=$count
	# Oversubscribed ranks wait for time slices: fewer repetitions.
	[ "$np" -gt "$cores" ] && c=$((count / 4 > 20 ? count / 4 : 20))
	out="$T/a2a-$np-$k.json"
	if ! timeout -k 5 600 mpiexec -n "$np" "$NGAUGE" -x mpi -p alltoall --a2a-algo all --ranks-per-node "$k" \
		-s 8,512,64K -c "$c" -w $((c / 10 + 1)) -o "$out" >"$T/out" 2>"$T/err"; then
		echo "mpiexec -n $np ngauge -x mpi -p alltoall failed:" >&2
		tail -5 "$T/err" >&2
		status=1
		continue
	fi
	python3 - "$out" "$np" "$k" "$cores" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
np, k, cores = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
b = r["alltoall"]
algos = b["algorithms"]
med = {(x["algorithm"], x["size"]): x["time_us"]["median"] for x in r["results"]}
sizes = sorted({x["size"] for x in r["results"]})
where = "%d node%s of %s ranks" % (b["nodes"], "" if b["nodes"] == 1 else "s", b["node_sizes"])
note = " (oversubscribed: %d ranks on %d cores)" % (np, cores) if np > cores else ""
print("\n## alltoall, mpi module, %d ranks, %s%s, %d repetitions" % (np, where, note, r["parameters"]["count"]))
print("%8s" % "size" + "".join("%10s" % a for a in algos) + "   best/MPI  p2p-best/MPI")
failed = False
for s in sizes:
    ref = med[("mpi", s)]
    ours = {a: med[(a, s)] for a in algos if a != "mpi"}
    best = min(ours, key=ours.get)
    p2p = min((a for a in ours if a in ("bruck", "isend", "pairwise")), key=ours.get)
    ratio, pratio = ours[best] / ref, ours[p2p] / ref
    print("%8d" % s + "".join("%10.2f" % med[(a, s)] for a in algos) +
          "   %5.2f %-8s %5.2f %s" % (ratio, best, pratio, p2p))
    if np == 4 and k == 0 and s == 65536:
        ok = ratio <= 1.25
        print("requirement, 64 KiB, 4 ranks: best ngauge (%s) / MPI_Alltoall = %.3f %s 1.25: %s"
              % (best, ratio, "<=" if ok else ">", "met" if ok else "NOT met"))
        failed = not ok
sys.exit(1 if failed else 0)
PY
done
exit $status
