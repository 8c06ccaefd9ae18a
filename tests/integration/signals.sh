#!/bin/bash
# Signals from the first instant, and the plugins (core/plugin.h, issue 19 item 5):
#  - the executable links none of MPI, libfabric, libibverbs, libpmi2, libpmix, and `ngauge --version` starts in milliseconds
#    (under 20 ms: the best of 5, so that a busy machine does not decide);
#  - SIGTERM sent 10 ms (and 0-50 ms) after the start of a run: exit 143, one line;
#  - SIGTERM during one-sided runs (rma module: overlap --overlap-rma, the rma pattern; spinning and
#    yielding ranks; shm, and libfabric's shm provider): exit 143, one line "interrupted (SIGTERM)", no fault the interruption caused (a key
#    not registered, memory freed, a rank lost);
#  - a missing plugin: one line naming it and the directory, exit 2, before anything runs.
. "$(dirname "$0")/lib.sh"

# 1. No heavy library in the executable.
needed=$(readelf -d "$NGAUGE" | grep NEEDED)
if echo "$needed" | grep -Eq 'mpi|fabric|ibverbs|psm|infinipath|pmi'; then
	fail "ngauge links a plugin's library: $(echo "$needed" | grep -E 'mpi|fabric|ibverbs|psm|infinipath|pmi')"
else
	pass "ngauge links none of MPI, libfabric, libibverbs, libpmi2, libpmix"
fi

# 2. --version under 20 ms (wall clock, as `time` shows it).
best=$(python3 - "$NGAUGE" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(5):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "--version"], stdout=subprocess.DEVNULL, check=True)
    best = min(best, time.perf_counter() - t)
print("%.4f" % best)
PY
)
python3 -c "import sys; sys.exit(0 if $best < 0.020 else 1)" && pass "--version in ${best} s" ||
	fail "--version takes $best s (over 20 ms)"
for args in "--help" "--list" "-x nosuch -p pingpong"; do
	t=$(python3 -c "
import subprocess, sys, time
t = time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print('%.4f' % (time.perf_counter() - t))" "$NGAUGE" $args)
	python3 -c "import sys; sys.exit(0 if $t < 0.1 else 1)" && pass "'$args' in $t s" || fail "'$args' takes $t s"
done

# sigterm_after DELAY ARGS...: starts ngauge ARGS, sends SIGTERM to it DELAY seconds later; exit status in
# $rc, stderr in $T/err.
sigterm_after() {
	local d=$1; shift
	"$NGAUGE" "$@" >"$T/out" 2>"$T/err" &
	local pid=$!
	sleep "$d"
	kill -TERM $pid
	wait $pid; rc=$?
}

# 3. SIGTERM 10 ms after the start (and 1-50 ms; below 10 ms, or below the measured --version time, a death
# before main() is only noted): the time
# from the exec (Python's Popen returns once the program is executing), the status the process exited with (not a death by the signal: 143 from a handler).
python3 - "$NGAUGE" "$best" <<'PY' >"$T/start.out"
import signal, subprocess, sys, time
# before main(): below 10 ms, or below the program's own measured --version time (a sanitizer build's start-up
# takes longer than 10 ms)
early = max(0.010, float(sys.argv[2]))
for d in (0.010, 0.001, 0.002, 0.005, 0.020, 0.050) * 2:
    p = subprocess.Popen([sys.argv[1], "-x", "tcp", "-p", "pingpong", "-s", "1-1M", "-c", "2000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(d)
    p.send_signal(signal.SIGTERM)
    # a size that ended before the signal may have been flagged as drifting (a loaded host): its note is
    # the measurement's, not the interruption's
    err = "".join(l for l in p.stderr.read().decode().splitlines(True) if "the measurement drifted" not in l)
    rc = p.wait()
    ok = rc == 143 and err.count("\n") == 1 and "interrupted (SIGTERM)" in err
    # Below 10 ms a loaded host may not have run the program's first instruction yet: a death by the
    # signal before main() (nothing printed) is reported, not failed; any other answer is judged.
    verdict = "ok" if ok else ("note" if d < early and rc == -signal.SIGTERM and not err else "FAIL")
    print("%s SIGTERM %.3f s after the start: %s, %d line(s) %s" % (verdict, d,
          "exit %d" % rc if rc >= 0 else "killed by signal %d" % -rc, err.count("\n"), err.replace("\n", "|")))
PY
while read -r verdict rest; do
	case $verdict in
	ok) pass "$rest" ;;
	note) echo "note: $rest (before main(): the program had not started yet)" ;;
	*) fail "$rest" ;;
	esac
done <"$T/start.out"

# 4. SIGTERM during one-sided runs.
faults='not registered|freed the memory|was lost|cannot map|connection to the launcher|rank [0-9]+: rma:'
cfgs=("--rdma-backend shm --rdma-poll yield" "")
# libfabric's providers take the stop signals while they start (core/plugin.h's guard keeps them ngauge's).
[ -e "$NGAUGE_BUILD/ngauge-ofi.so" ] && cfgs+=("--rdma-backend ofi --ofi-provider shm --rdma-poll yield")
for cfg in "${cfgs[@]}"; do
	for pat in "overlap --overlap-rma" "rma"; do
		for d in 0.15 0.3 0.8 1.5; do
			# An interrupted rank leaves its memory published for peers still accessing it
			# (modules/rdmalayer/shm.c) and exits: a sanitizer build does not count that memory as leaked.
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 sigterm_after $d -x rma $cfg -p $pat
			# a note on a row measured before the signal (a drift, an alternation) is the
			# measurement's, not the interruption's: every other line counts
			lines=$(grep -vc "^ngauge: rank 0: warning: [a-z0-9-]*: size [0-9]*: " "$T/err")
			what="-x rma $cfg -p $pat, SIGTERM after $d s"
			if [ $rc = 143 ] && [ "$lines" = 1 ] && grep -q "interrupted (SIGTERM)" "$T/err" &&
				! grep -Eq "$faults" "$T/err"; then
				pass "$what: exit 143, one line"
			else
				fail "$what: exit $rc, $lines lines: $(tr '\n' '|' <"$T/err")"
			fi
		done
	done
done

# 5. A missing plugin: one line, exit 2, nothing run.
mkdir -p "$T/noplugins"
for m in mpi ibrc; do
	"$NGAUGE" --list | grep -q "^  $m  *not available" && continue
	plugin=$([ $m = mpi ] && echo mpi || echo verbs)
	if NGAUGE_PLUGIN_DIR="$T/noplugins" run 2 "$NGAUGE" -x $m -p pingpong -s 1 -c 1 -o "$T/none.json"; then
		lines=$(wc -l <"$T/err")
		[ "$lines" = 1 ] && grep -q "module $m needs ngauge-$plugin.so, not found in $T/noplugins" "$T/err" &&
			[ ! -e "$T/none.json" ] && pass "-x $m without its plugin: one line, exit 2" ||
			fail "-x $m without its plugin: $(tr '\n' '|' <"$T/err")"
	fi
done
if ! "$NGAUGE" --list | grep -q "^  ofi\b"; then
	NGAUGE_PLUGIN_DIR="$T/noplugins" run 2 "$NGAUGE" -x rdma --rdma-backend ofi -p pingpong -s 8 -c 1 &&
		grep -q "needs ngauge-ofi.so" "$T/err" && pass "--rdma-backend ofi without its plugin: exit 2" ||
		fail "--rdma-backend ofi without its plugin: $(tr '\n' '|' <"$T/err")"
fi
finish
