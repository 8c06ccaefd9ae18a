#!/bin/bash
# noise, checked on content: every method writes a block per rank and a row
# that match the format; bad values exit 2 with one line; the ground truth:
# a process of the test's own pinned to rank 0's CPU (SCHED_FIFO, 200 us every
# 10 ms, 2% of the CPU) shows as a lost fraction within 20% of 2% and as
# detours of 200 us (+-20%) in rank 0's histogram and longest detours; rank 1
# (another CPU) loses less.
. "$NGAUGE_SRC/tests/integration/lib.sh"

for m in selfish fwq ftq; do
	run 0 "$NGAUGE" -x tcp -p noise --np 2 --noise-method $m --noise-time 0.3 -o "$T/nz-$m.json"
	pycheck "$T/nz-$m.json" "noise $m: block and row" "
n = r['noise']
assert r['complete'] and n['method'] == '$m' and [x['rank'] for x in n['ranks']] == [0, 1], n['method']
for x in n['ranks']:
    assert 0 <= x['lost_fraction'] < 1 and x['span_us'] > 0.2e6, x['span_us']
    assert sum(b['count'] for b in x['histogram']) == x['detours'], x['rank']
    l = [d['len_us'] for d in x['longest']]
    assert l == sorted(l, reverse=True) and len(l) == min(32, x['detours']), l
row = r['results'][0]
assert row['size'] == 0 and 'detour_us' in row and 0 <= row['lost_fraction'] < 1, row
"
done

for bad in "--noise-method x" "--noise-time 0" "--noise-threshold -1"; do
	out=$("$NGAUGE" -x tcp -p noise --np 2 $bad 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then pass "$bad: exit 2, one line on stderr"
	else fail "$bad: rc $rc: $out"; fi
done

# ground truth (needs root for SCHED_FIFO and two CPUs)
if [ "$(nproc)" -lt 2 ] || ! command -v chrt >/dev/null || ! chrt -f 10 true 2>/dev/null; then
	echo "no two CPUs or no SCHED_FIFO: ground truth skipped"
	finish
fi
cat >"$T/inject.py" <<'PY'
import time, sys
period, burst, until = 0.010, 0.000200, time.monotonic() + float(sys.argv[1])
nxt = time.monotonic()
while nxt < until:
    nxt += period
    time.sleep(max(0.0, nxt - time.monotonic()))
    end = time.perf_counter() + burst
    while time.perf_counter() < end:
        pass
PY
# Two attempts (a burst of other work on the host during one run is not the pattern's fault): each measures
# with the injector, then without; the ground truth is judged only where rank 0's CPU is otherwise quiet
# (below 0.5% lost, else 2% cannot be told from the rest). The injected share is what the injector adds
# to the quiet run's: within 20% of 2%.
verdict=skipped
for attempt in 1 2; do
	chrt -f 10 taskset -c 0 python3 "$T/inject.py" 6 &
	inj=$!
	sleep 0.5
	run 0 "$NGAUGE" -x tcp -p noise --np 2 --pin 0,1 --noise-time 3 -o "$T/nz-inj.json"
	wait $inj
	run 0 "$NGAUGE" -x tcp -p noise --np 2 --pin 0,1 --noise-time 3 -o "$T/nz-quiet.json"
	schema_check "$T/nz-inj.json"
	schema_check "$T/nz-quiet.json"
	python3 - "$T/nz-inj.json" "$T/nz-quiet.json" >"$T/gt.out" <<'PY'
import json, sys
x = json.load(open(sys.argv[1]))['noise']['ranks'][0]
q = json.load(open(sys.argv[2]))['noise']['ranks'][0]
big = [d['len_us'] for d in x['longest'] if d['len_us'] > 50]
med = sorted(big)[len(big) // 2] if big else 0
near = sum(b['count'] for b in x['histogram'] if 160 <= b['lo_us'] and b['hi_us'] <= 240)
added = x['lost_fraction'] - q['lost_fraction']
print('injected: lost %.4f, detours >50us %d, their median %.1f us, in [160,240] us %d; quiet: lost %.4f; '
      'added %.4f' % (x['lost_fraction'], len(big), med, near, q['lost_fraction'], added))
if q['lost_fraction'] >= 0.005:
    print('quiet')
elif 0.016 <= added <= 0.024 and 160 <= med <= 240 and near >= 0.5 * len(big):
    print('ok')
else:
    print('fail')
PY
	cat "$T/gt.out"
	case $(tail -1 "$T/gt.out") in
	ok) verdict=ok; break ;;
	fail) verdict=fail ;;
	quiet) [ "$verdict" = fail ] || verdict=skipped ;;
	esac
done
case $verdict in
ok) pass "noise ground truth: 2% added on rank 0 (within 20%), 200 us detours in its histogram" ;;
fail) fail "noise ground truth: $(head -1 "$T/gt.out")" ;;
*) echo "rank 0's CPU is not quiet without the injector (host loaded): ground truth skipped" ;;
esac
finish
