#!/bin/bash
# coll over tcp: 8 local ranks, every operation with every algorithm, 8 B to 1 MiB, the default count (-c 1000,
# -w 100) unless BENCH_COUNT is set (then -w BENCH_COUNT / 10).  Prints the run's wall time and the summary
# tables (median time and busbw per algorithm and size).
#
# Requirement checked (issue 38): the run finishes in under 2 minutes (exit 1 otherwise).
set -u
. "$(dirname "$0")/lib.sh" coll
count=${BENCH_COUNT:-}
args=()
[ -n "$count" ] && args=(-c "$count" -w $((count / 10)))
start=$EPOCHREALTIME
if ! timeout -k 5 1500 nice "$NGAUGE" --np 8 -x tcp -p coll --coll-op all --coll-algo all -s 8-1M "${args[@]}" \
	-o "$T/coll.json" >"$T/out" 2>"$T/err"; then
	echo "ngauge --np 8 -x tcp -p coll failed:" >&2
	tail -5 "$T/err" >&2
	exit 1
fi
secs=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$EPOCHREALTIME")
grep -E "^# coll|^ +[0-9]+[KM]? " "$T/out" | grep -v "^#  *size  *count"
python3 - "$T/coll.json" "$secs" "$(nproc)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
secs, cores = float(sys.argv[2]), int(sys.argv[3])
rows = r["results"]
late = sum(x["late"] for x in rows)
reps = sum(x["count"] for x in rows)
print("\n## coll, tcp, %d ranks on %d cores, %d variants, %d rows, -c %d -w %d" % (
    r["ranks"], cores, len(r["coll"]["variants"]), len(rows), r["parameters"]["count"], r["parameters"]["warmup"]))
print("late repetitions (window timing): %d of %d (%.1f%%)" % (late, reps, 100.0 * late / max(reps, 1)))
ok = secs < 120.0
print("requirement, 8 ranks, all operations and algorithms, 8 B - 1 MiB: %.1f s %s 120 s: %s"
      % (secs, "<" if ok else ">=", "met" if ok else "NOT met"))
sys.exit(0 if ok else 1)
PY
