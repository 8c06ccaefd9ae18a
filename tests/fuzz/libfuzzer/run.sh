#!/bin/sh
# One libFuzzer harness for a bounded time: run.sh HARNESS CORPUS WORKDIR.  The committed CORPUS is copied to
# WORKDIR/corpus first (the run adds what it finds there, never in the source tree); every committed input runs
# before the fuzzing, so a crash- input is a regression test.  NGAUGE_FUZZ_TIME: seconds of fuzzing (20).
# Prints the executions and seconds run; a crash fails the test, its input left in WORKDIR (crash-*, leak-*,
# timeout-*, oom-*).
set -eu
exe=$1 corpus=$2 work=$3
secs=${NGAUGE_FUZZ_TIME:-20}
rm -rf "$work"
mkdir -p "$work/corpus"
cp "$corpus"/* "$work/corpus/"
n0=$(ls "$work/corpus" | wc -l)
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export TMPDIR="$work"
rc=0
# exit status 1 on a crash, a timeout or too much memory (libFuzzer's 77 would read as "skipped" to Meson)
"$exe" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
	-error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1 || rc=$?
n1=$(ls "$work/corpus" | wc -l)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log" | tail -n 1)
echo "fuzz: $(basename "$exe"): ${runs:-?} executions in ${time:-?} s (limit $secs s), corpus $n0 -> $n1 inputs"
if [ "$rc" -ne 0 ]; then
	tail -n 60 "$work/log"
	echo "fuzz: $(basename "$exe") failed (exit $rc); the input: $(ls "$work"/crash-* "$work"/leak-* \
"$work"/timeout-* "$work"/oom-* 2>/dev/null | tr '\n' ' ')"
	echo "fuzz: fix the bug, then add the input to $corpus as crash-WHAT"
fi
exit "$rc"
