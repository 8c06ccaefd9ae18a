#!/bin/bash
# Time of a complete LogGP report with default settings: sizes 1 B to 1 MiB,
# mpiexec -n 2 ngauge -x mpi -p loggp (and, for comparison, the same over tcp
# on two local ranks).  Each is run BENCH_ROUNDS times (default 3); printed
# per run: wall time, the time of a launch that measures one message (the
# same launcher, MPI init and connection setup, measured in the same round),
# and what the LogGP run took beyond it.
#
# Requirement checked: the median wall time over mpi is below 30 s, and every
# run's report is complete (a "loggp" block with segments covering 1 B to
# 1 MiB).  Exit 1 otherwise.
set -u
. "$(dirname "$0")/lib.sh" loggp
bench_need_mpi
rounds=${BENCH_ROUNDS:-3}
target=30
status=0

for how in mpi tcp; do
	if [ "$how" = mpi ]; then
		launch=(mpiexec -n 2 "$NGAUGE" -x mpi)
	else
		launch=("$NGAUGE" -x tcp)
	fi
	times=()
	for ((i = 1; i <= rounds; i++)); do
		ref=$(secs "${launch[@]}" -p pingpong -s 1 -c 1 -w 0) || {
			echo "$how: the one-message launch failed:" >&2
			tail -3 "$T/err" >&2
			status=1
			continue
		}
		t=$(secs "${launch[@]}" -p loggp -o "$T/l.json") || {
			echo "$how: loggp failed:" >&2
			tail -3 "$T/err" >&2
			status=1
			continue
		}
		python3 - "$T/l.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
b = r["loggp"]
ok = (r["complete"] is True and b["segments"] and b["segments"][0]["from"] == 1
      and b["segments"][-1]["to"] == 1 << 20 and len(r["results"]) == len(b["sizes"]))
if not ok:
    print("incomplete LogGP report: %d sizes, segments %s" % (len(r["results"]), [(s["from"], s["to"]) for s in b["segments"]]))
sys.exit(0 if ok else 1)
PY
		printf '%s round %d: loggp %6.2f s, one-message launch %5.2f s, loggp beyond it %6.2f s (%d sizes)\n' \
			"$how" "$i" "$t" "$ref" "$(python3 -c "print($t - $ref)")" \
			"$(python3 -c "import json; print(len(json.load(open('$T/l.json'))['results']))")"
		times+=("$t")
	done
	[ "${#times[@]}" -gt 0 ] || continue
	med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
	if [ "$how" = mpi ]; then
		verdict=$(python3 -c "print('ok' if $med < $target else 'FAIL')")
		printf 'mpi: median %.2f s = %.2f x the %d s target: %s\n' "$med" "$(python3 -c "print($med / $target)")" \
			"$target" "$verdict"
		[ "$verdict" = ok ] || status=1
	else
		printf 'tcp: median %.2f s (no target; for comparison)\n' "$med"
	fi
done
exit $status
