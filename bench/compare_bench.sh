#!/bin/bash
# `ngauge compare` as a regression gate (doc/compare.md#how-it-is-checked), the recommended way: each pair is
# `ngauge ab --rounds R` (R runs of each side, alternately, each a new launch), compared at --threshold 5.
#   false alarms  REPS (20) pairs of identical configurations of real transports: tcp pingpong at 1 B, 4 KiB and
#                 64 KiB, and the mpi module under mpiexec -n 2; a pair is a false alarm when it exits 3. The
#                 same pairs' first runs alone (a-1.json against b-1.json) give the figures of one run per side,
#                 printed beside it: with --single-run, and with --calibrate (a --repeat 5 run of the command made
#                 before the pairs).
#   detection     REPS pairs (DROUNDS runs a side) of emu over tcp without and with a planted slowdown that adds at every size
#                 (--emu-add ADD us + --emu-add-G G us per byte before every send, about 10% of each size's half
#                 round trip here); a pair detects when every size is "slower", and its intervals hold the true
#                 ratio 1 + (ADD + late + size G) / A's median at every size, late what the spins really ran past
#                 their aim (emu's "add_late_us", B's runs' mean).
# The ground truth asks for at most 1 false alarm in 20 per transport and detection in at least 19 of 20.
# Prints one line per pair and the totals; exit 1 when a figure misses.  About 7 minutes on 2 cores.
#   NGAUGE=build/ngauge bash bench/compare_bench.sh [REPS]     (ROUNDS=5 DROUNDS=8 ADD=0.34 ADDG=0.00002 by default;
#   PARTS="tcp mpi detection" by default, any of them)
. "$(dirname "$0")/lib.sh" compare
REPS=${1:-20}
ROUNDS=${ROUNDS:-5}
DROUNDS=${DROUNDS:-8}
ADD=${ADD:-0.34}
ADDG=${ADDG:-0.00002}
pp=(-p pingpong -s 1,4K,64K -c 2000 --pin 0,1)
fail=0

# pair ARGS_A -- ARGS_B: one ab run of $ROUNDS rounds; its exit status in $rc, the comparison in $T/c.json, the runs in $T/k
pair() {
	rm -rf "$T/k" "$T/c.json"
	nice "$NGAUGE" ab --rounds "$ROUNDS" --keep "$T/k" -o "$T/c.json" -- "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# worst |ratio - 1| and the rows' verdicts of the comparison in $T/c.json
summary() {
	python3 - "$T/c.json" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["comparisons"][0]["rows"]
print("ratios %s, verdicts %s" % (" ".join("%.4f" % r["ratio"] for r in rows), " ".join(r["verdict"] for r in rows)))
EOF
}

false_alarms() {
	local name=$1 alarms=0 single=0 cal=0 i
	shift
	nice "$NGAUGE" --repeat 5 "$@" -o "$T/cal.json" >/dev/null 2>&1 || { echo "$name: the --repeat 5 run failed"; fail=1; }
	for i in $(seq "$REPS"); do
		pair "$@" -- "$@"
		if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
			echo "$name pair $i: ab exited $rc: $(tail -1 "$T/err")"
			fail=1
			continue
		fi
		[ "$rc" = 3 ] && alarms=$((alarms + 1))
		"$NGAUGE" compare "$T/k/a-1.json" "$T/k/b-1.json" --single-run >/dev/null 2>&1
		s=$?
		[ "$s" = 3 ] && single=$((single + 1))
		"$NGAUGE" compare "$T/k/a-1.json" "$T/k/b-1.json" --calibrate "$T/cal.json" >"$T/cal.out" 2>&1
		c=$?
		[ "$c" = 3 ] && cal=$((cal + 1))
		echo "$name pair $i: exit $rc, $(summary); first runs alone: --single-run exit $s, --calibrate exit $c" \
			"($(grep -o 'factor [^)]*' "$T/cal.out"))"
	done
	echo "compare: $name: $alarms of $REPS identical pairs exit 3 with $ROUNDS runs a side (ngauge ab);" \
		"$single of $REPS with one run a side (--single-run), $cal of $REPS with one run a side widened by" \
		"--calibrate (a --repeat 5 run); ground truth: at most 1"
	[ "$alarms" -le 1 ] || fail=1
}

detection() {
	local found=0 held=0 i
	for i in $(seq "$REPS"); do
		ROUNDS=$DROUNDS pair -x emu "${pp[@]}" -- -x emu --emu-add "$ADD" --emu-add-G "$ADDG" "${pp[@]}"
		verdict=$(python3 - "$T/c.json" "$ADD" "$ADDG" "$T"/k/b-*.json <<'EOF'
import json, sys
add, g = float(sys.argv[2]), float(sys.argv[3])
rows = json.load(open(sys.argv[1]))["comparisons"][0]["rows"]
# what the spins really added: the aim, and how late past it they ended on average (emu's "add_late_us",
# one loop's lateness; over B's runs)
late = [json.load(open(f)).get("emu", {}).get("add_late_us") for f in sys.argv[4:]]
late = [x for x in late if x is not None]
add += sum(late) / len(late) if late else 0.0
truth = [1.0 + (add + r["size"] * g) / r["a_median"] for r in rows]
slower = all(r["verdict"] == "slower" for r in rows)
holds = all(r["ci95"][0] <= t <= r["ci95"][1] for r, t in zip(rows, truth))
print("%d %d %s" % (slower, holds, " ".join("%g:%.4f[%.4f,%.4f]truth %.4f" % (r["size"], r["ratio"], r["ci95"][0],
                                                                               r["ci95"][1], t)
                                                for r, t in zip(rows, truth))))
EOF
)
		set -- $verdict
		[ "$1" = 1 ] && found=$((found + 1))
		[ "$2" = 1 ] && held=$((held + 1))
		shift 2
		echo "detection pair $i: exit $rc, $*"
	done
	echo "compare: planted slowdown (emu --emu-add $ADD --emu-add-G $ADDG, $DROUNDS runs a side): $found of $REPS pairs slower at" \
		"every size, $held of $REPS with every interval holding the true ratio; ground truth: at least 19"
	[ "$found" -ge $((REPS - REPS / 20)) ] && [ "$held" -ge $((REPS - REPS / 20)) ] || fail=1
}

case " ${PARTS:-tcp mpi detection} " in *" tcp "*) false_alarms tcp -x tcp "${pp[@]}" ;; esac
case " ${PARTS:-tcp mpi detection} " in *" mpi "*)
	if command -v mpiexec >/dev/null && "$NGAUGE" --list | grep -q "^  mpi "; then
		false_alarms mpi -x mpi "${pp[@]}"
	else
		echo "compare: mpi: no mpiexec or no mpi module: not measured"
	fi ;;
esac
case " ${PARTS:-tcp mpi detection} " in *" detection "*) detection ;; esac
exit $fail
