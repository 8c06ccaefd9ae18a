#!/bin/bash
# Signals from the first instant, and the plugins (core/plugin.h, issue 19 item 5):
#  - the executable links none of MPI, libfabric, libibverbs, libpmi2, libpmix, and --version, --help and a usage
#    error load no plugin (their start-up times are the benchmark startup);
#  - SIGTERM sent 10 ms (and 0-50 ms) after the start of a run, and as soon as its handlers are in place or
#    it has run for 10 ms of CPU time: exit 143, one line;
#  - SIGTERM during one-sided runs (rma module: overlap --overlap-rma, the rma pattern; spinning and
#    yielding ranks; shm, and libfabric's shm provider): exit 143, one line "interrupted (SIGTERM)", no fault the interruption caused (a key
#    not registered, memory freed, a rank lost);
#  - SIGTERM while 8 ranks start (connections, gathering, clock fit): exit 143 and rank 0's line;
#  - a missing plugin: one line naming it and the directory, exit 2, before anything runs.
. "$(dirname "$0")/lib.sh"

# 1. No heavy library in the executable.
needed=$(readelf -d "$NGAUGE" | grep NEEDED)
if echo "$needed" | grep -Eq 'mpi|fabric|ibverbs|psm|infinipath|pmi'; then
	fail "ngauge links a plugin's library: $(echo "$needed" | grep -E 'mpi|fabric|ibverbs|psm|infinipath|pmi')"
else
	pass "ngauge links none of MPI, libfabric, libibverbs, libpmi2, libpmix"
fi

# 2. --version, --help and a usage error load no plugin (what keeps them at a few ms; their times are the
# benchmark startup, bench/startup_bench.sh, not a test); each says what it should.
for args in "--version" "--help" "-x nosuch -p pingpong"; do
	# shellcheck disable=SC2086
	LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld" "$NGAUGE" $args >"$T/out" 2>"$T/err"
	rc=$?
	loaded=$(cat "$T"/ld.* 2>/dev/null | grep -o 'file=[^ ]*ngauge-[a-z0-9]*\.so' | sort -u | tr '\n' ' ')
	rm -f "$T"/ld.*
	case "$args" in
	--version) grep -q "^ngauge [0-9]" "$T/out" && [ $rc = 0 ] ;;
	--help) grep -q -- "-x MODULE" "$T/out" && [ $rc = 0 ] ;;
	*) [ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q nosuch "$T/err" ;;
	esac && ok=1 || ok=0
	if [ $ok = 1 ] && [ -z "$loaded" ]; then
		pass "'$args': its answer (exit $rc), no plugin loaded"
	else
		fail "'$args': exit $rc, plugins loaded: '${loaded}', out: $(head -c 200 "$T/out") err: $(head -c 200 "$T/err")"
	fi
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

# 3. SIGTERM 10 ms after the start (and 1-50 ms): exit 143 (from the handler, not a death by the signal) and
# one line. A loaded host leaves a program that has just been exec'd waiting for a CPU for tens of ms (seen
# at load 10: the handlers in place 28-56 ms after the exec, after 1.6-1.7 ms of the program's CPU time), so
# a death by the signal with nothing printed is only noted when, at the signal, the program had no handler for
# it yet (SigCgt in /proc/PID/status) and had run for less CPU time than the longer of 10 ms and twice its own
# --version's (a sanitizer build's start-up takes 14 ms): main() had not had its turn yet. Twice more, the
# signal goes when the handler is in place or the program has run for that CPU time, whichever comes first:
# main() installs the handlers first, so a program that ran that long without them installed them late, and
# fails, however loaded the host.
python3 - "$NGAUGE" <<'PY' >"$T/start.out"
import os, re, signal, subprocess, sys, time
ROW_NOTE = re.compile(r"^ngauge: rank 0: warning: [a-z0-9-]+: [0-9]+ of [0-9]+ sizes? (drifted|alternate) ")


def cpu_s(ru):
    return ru.ru_utime + ru.ru_stime


def version_cpu():
    best = 1e9
    for _ in range(5):
        p = subprocess.Popen([sys.argv[1], "--version"], stdout=subprocess.DEVNULL)
        best = min(best, cpu_s(os.wait4(p.pid, 0)[2]))
    return best


def started(pid):
    """(whether SIGTERM has a handler, the CPU time used in s) of process pid, now."""
    try:
        with open("/proc/%d/status" % pid) as f:
            cgt = int([l for l in f if l.startswith("SigCgt:")][0].split()[1], 16)
        with open("/proc/%d/schedstat" % pid) as f:
            return bool(cgt & (1 << (signal.SIGTERM - 1))), int(f.read().split()[0]) * 1e-9
    except (OSError, IndexError, ValueError):
        return None, None


early = max(0.010, 2 * version_cpu())
for d in (0.010, 0.001, 0.002, 0.005, 0.020, 0.050, "cpu") * 2:
    p = subprocess.Popen([sys.argv[1], "-x", "tcp", "-p", "pingpong", "-s", "1-1M", "-c", "2000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if d == "cpu":
        t0 = time.perf_counter()
        handler, cpu = started(p.pid)
        while handler is False and cpu < early:
            time.sleep(0.0002)
            handler, cpu = started(p.pid)
        d = time.perf_counter() - t0
    else:
        time.sleep(d)
        handler, cpu = started(p.pid)
    p.send_signal(signal.SIGTERM)
    # a size that ended before the signal may have been flagged as drifting or alternating (a loaded host):
    # the count of such sizes after the table is the measurement's, not the interruption's
    err = "".join(l for l in p.stderr.read().decode().splitlines(True) if not ROW_NOTE.search(l))
    rc = p.wait()
    ok = rc == 143 and err.count("\n") == 1 and "interrupted (SIGTERM)" in err
    before_main = handler is False and cpu < early and rc == -signal.SIGTERM and not err
    verdict = "ok" if ok else ("note" if before_main else "FAIL")
    print("%s SIGTERM %.3f s after the start (handler %s, %s ms of CPU time): %s, %d line(s) %s" % (
        verdict, d, {True: "in place", False: "not yet", None: "unknown"}[handler],
        "?" if cpu is None else "%.1f" % (cpu * 1e3), "exit %d" % rc if rc >= 0 else "killed by signal %d" % -rc,
        err.count("\n"), err.replace("\n", "|")))
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
			# the notes on rows measured before the signal (drifts, alternations: their count after the
			# table) are the measurement's, not the interruption's: every other line counts
			lines=$(grep -Evc "^ngauge: rank 0: warning: [a-z0-9-]+: (size [0-9]+: |[0-9]+ of [0-9]+ sizes? (drifted|alternate) )" "$T/err")
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

# 4b. SIGTERM while 8 ranks start (the connections, the manifest's gathering, the clock fit: a sweep of
# delays across them): exit 143 and rank 0's "interrupted (SIGTERM)" every time the handler was in place (the
# launcher's own line when the signal came before it started the ranks, while it calibrates the timer).
# The steps after the module's open used to return 1 on a stop signal and say nothing (exit 143 from the
# launcher, no line). Other ranks may add a line of their own (a peer's connection refused when rank 0 left
# before the launcher passed the signal on to them): only rank 0's line is asked for.
silent=""
for d in 0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.6 0.8; do
	"$NGAUGE" --np 8 -x tcp -p ebb >"$T/out" 2>"$T/err" &
	pid=$!
	sleep "$d"
	cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$pid/status 2>/dev/null)
	kill -TERM $pid 2>/dev/null
	wait $pid
	rc=$?
	# a run that ended before the signal, or had no handler yet (before main()), is not judged
	[ -n "$cgt" ] && [ $((0x$cgt & (1 << 14))) != 0 ] || continue
	[ $rc = 143 ] && grep -Eq "^ngauge: (rank 0: )?interrupted \(SIGTERM\)$" "$T/err" ||
		silent="$silent $d s: exit $rc, $(tr '\n' '|' <"$T/err" | cut -c1-200);"
done
[ -z "$silent" ] && pass "SIGTERM while 8 ranks start: exit 143 and rank 0's line at every delay" ||
	fail "SIGTERM while 8 ranks start:$silent"

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
