#!/bin/bash
# Runs by time (--time, --interval; doc/options.md "Runs by time"): a 60 s pingpong keeps its peak resident
# memory within 2 MiB of a 1 s one and prints 60 interval lines; rows say how many repetitions ran and how many
# were kept; bw runs by time with --verify; what cannot run by time is refused.
. "$(dirname "$0")/lib.sh"

# peak RSS (KiB) of the largest process of a run: the launcher and its ranks are our children
PEAK='import resource, subprocess, sys
rc = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1] + ".out", "w"), stderr=open(sys.argv[1] + ".err", "w")).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)'

peak() { # peak NAME CMD... : prints the peak RSS, keeps NAME.out / NAME.err
	local name=$1; shift
	timeout -k 5 150 python3 -c "$PEAK" "$T/$name" "$@"
}

short=$(peak short "$NGAUGE" -x tcp -p pingpong -s 1 --time 1 --interval 1 -o "$T/short.json") ||
	fail "pingpong --time 1 failed: $(tail -3 "$T/short.err")"
start=$(date +%s.%N)
long=$(peak long "$NGAUGE" -x tcp -p pingpong -s 1 --time 60 --interval 1 -o "$T/long.json") ||
	fail "pingpong --time 60 failed: $(tail -3 "$T/long.err")"
wall=$(echo "$(date +%s.%N) - $start" | bc)
lines=$(grep -cE '^pingpong: [0-9]+\.[0-9] s: [0-9]+ iterations' "$T/long.err")
echo "peak RSS: --time 1: $short KiB, --time 60: $long KiB; $lines interval lines; $wall s"
if [ -n "${ASAN_OPTIONS:-}" ]; then
	# the sanitizer keeps freed memory in quarantine and shadows all of it: peaks say nothing about ngauge's
	echo "note: sanitizer build: peak RSS not compared"
elif [ -n "$short" ] && [ -n "$long" ] && [ $((long - short)) -le 2048 ]; then
	pass "peak RSS of 60 s within 2 MiB of 1 s ($((long - short)) KiB more)"
else
	fail "peak RSS of 60 s ($long KiB) is more than 2 MiB above 1 s ($short KiB)"
fi
[ "$lines" = 60 ] && pass "60 interval lines" || { fail "$lines interval lines, expected 60"; head -3 "$T/long.err" >&2; }
grep -qE '^pingpong: ' "$T/long.out" && fail "interval lines on stdout"
awk -v w="$wall" 'BEGIN { exit !(w >= 60 && w < 75) }' && pass "60 s run took $wall s" || fail "60 s run took $wall s"

pycheck "$T/long.json" "rows of a run by time: iterations run, at most 65536 kept, the time recorded" "
assert r['parameters']['time'] == 60 and r['parameters']['interval'] == 1, r['parameters']
row = r['results'][0]
it, n = row['iterations'], row['count']
assert it > 65536 or n == it, (it, n)   # a loaded host may run fewer than 65536
assert 0 < n <= 65536 and n <= it and row['latency_us']['n'] == n, (it, n)
assert it >= 60 * 1000, it              # a 1-byte tcp round trip takes far less than 1 ms
"
pycheck "$T/short.json" "a 1 s run keeps every repetition up to 65536 (then every other pair)" "
row = r['results'][0]
it, n = row['iterations'], row['count']
assert n == row['latency_us']['n'] > 100, row
# a quiet host runs more than 65536 one-byte round trips in a second (7 us each): then pairs are kept
assert n == it if it <= 65536 else it // 4 <= n <= 65536, (it, n)
"

if run 0 "$NGAUGE" -x tcp -p bw --np 4 -s 1,64K --time 0.5 --verify -o "$T/bw.json"; then
	pycheck "$T/bw.json" "bw by time, 2 pairs, verified" "
for row in r['results']:
    assert row['iterations'] == row['count'] >= 1, row
    assert row['verified'] == row['messages'] > 0, row
    assert len(row['pairs']) == 2 and row['aggregate_bandwidth_MBps'] > 0, row
"
fi

refused() { # refused WHY ARGS... : exit 2, one line naming WHY
	if run 2 "$NGAUGE" -x tcp "${@:2}" && [ "$(wc -l < "$T/err")" = 1 ] && grep -q -- "$1" "$T/err"; then
		pass "refused: ${*:2}"
	else
		fail "not refused as expected: ${*:2} ($(cat "$T/err"))"
	fi
}
refused "does not measure by --time" -p loggp --time 1
refused "replaces --count" -p pingpong --time 1 -c 5
refused "applies to runs by --time only" -p pingpong --interval 1
refused "must be above 0" -p pingpong --time 0
refused "expects a number" -p pingpong --time abc
refused "between 0.01 and" -p pingpong --time 1 --interval 0

finish
