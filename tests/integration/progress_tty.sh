#!/bin/bash
# Progress and partial results of long runs (doc/options.md "Runs by time"):
#  - with stderr a terminal (a pty from util-linux's script), a run by --time or --ci-target redraws a progress
#    line on stderr ("size i of n: ... s, N iterations; S s left", after "\r\033[K"), more than once per size of
#    a second; stdout (a file here) holds none of it;
#  - with stderr not a terminal (a file), there is none of it;
#  - a result file read during a run says "complete": false and holds the sizes done, each row whole; an
#    interrupted run leaves the same.
. "$(dirname "$0")/lib.sh"

command -v script >/dev/null || { echo "skip: no script (util-linux)"; exit 77; }

# stderr on a pty, stdout to a file
script -qec "'$NGAUGE' -x tcp -p pingpong -s 1,2,4 --time 1 -o '$T/tty.json' >'$T/tty.out'" "$T/typescript" \
	</dev/null >/dev/null 2>&1
rc=$?
[ $rc = 0 ] || fail "the run under script exited $rc: $(tail -c 300 "$T/typescript" | tr '\r\033' '^E')"
lines=$(grep -ao $'\r\033\\[Kpingpong: size [0-9] of 3: [0-9.]* of 1.0 s, [0-9]* iterations; [0-9]* s left' \
	"$T/typescript" | wc -l)
[ "$lines" -ge 6 ] && pass "progress on a terminal: $lines redraws over 3 sizes of 1 s" ||
	fail "progress on a terminal: $lines redraws ($(tr '\r\033' '^E' <"$T/typescript" | head -c 400))"
for i in 1 2 3; do
	grep -aq "pingpong: size $i of 3: " "$T/typescript" || fail "no progress line for size $i of 3"
done
grep -aq $'\033\\[K\\|iterations;' "$T/tty.out" && fail "progress in the table on stdout" ||
	pass "stdout holds no progress"
[ "$(grep -c '^ *[124] ' "$T/tty.out")" = 3 ] && pass "the table has its 3 rows" ||
	fail "the table: $(cat "$T/tty.out")"

# --ci-target on a terminal: "at most"
script -qec "'$NGAUGE' -x tcp -p pingpong -s 4M --ci-target 0.0001 --max-time 1 -o '$T/ci.json' >/dev/null" \
	"$T/typescript2" </dev/null >/dev/null 2>&1
grep -aq "pingpong: size 1 of 1: [0-9.]* of at most 1.0 s, [0-9]* iterations; at most [0-9]* s left" \
	"$T/typescript2" && pass "progress of --ci-target on a terminal" ||
	fail "no progress of --ci-target: $(tr '\r\033' '^E' <"$T/typescript2" | head -c 400)"

# stderr not a terminal: nothing of it
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,2 --time 0.6 -o "$T/file.json"; then
	grep -aq $'\033\\|size [0-9] of\\|iterations;' "$T/err" "$T/out" &&
		fail "progress without a terminal: $(tr '\r\033' '^E' <"$T/err" | head -c 300)" ||
		pass "no progress when stderr is a file"
fi

# partial results: read during the run, and left by an interrupted one
"$NGAUGE" -x tcp -p pingpong -s 1,2,4,8 --time 2 -o "$T/part.json" >/dev/null 2>"$T/part.err" &
pid=$!
if wait_rows "$T/part.json"; then
	cp "$T/part.json" "$T/during.json"
	kill -TERM $pid
	pycheck "$T/during.json" "a file read during the run: complete false, the sizes done" "
assert r['complete'] is False, r['complete']
sizes = [row['size'] for row in r['results']]
assert 1 <= len(sizes) < 4 and sizes == [1, 2, 4, 8][:len(sizes)], sizes
for row in r['results']:
    assert row['stop'] == 'time' and row['iterations'] >= row['count'] > 0 and stats_ok(row['latency_us']), row
"
else
	fail "no row in the result file within 30 s"
	kill -TERM $pid
fi
wait $pid
rc=$?
[ $rc = 143 ] && pass "interrupted: exit 143" || fail "interrupted: exit $rc ($(cat "$T/part.err"))"
pycheck "$T/part.json" "an interrupted run's file: complete false, the sizes done" "
assert r['complete'] is False, r['complete']
sizes = [row['size'] for row in r['results']]
assert 1 <= len(sizes) < 4 and sizes == [1, 2, 4, 8][:len(sizes)], sizes
"
finish
