#!/bin/bash
# noise.sh content|groundtruth
#
# content: every method writes a block per rank and a row that match the
# format, with its trace, and the figure renders (PNG); bad values exit 2 with
# one line.
#
# groundtruth: a process of the test's own (SCHED_FIFO 10, pinned to CPU 0,
# 200 us of busy loop every 10 ms) must show on one rank pinned to CPU 0
# (SCHED_FIFO 5, so that the host's ordinary tasks cannot take its CPU) as an
# added lost fraction within 20% of the injector's share of the CPU as the
# kernel accounted it (its process time over the elapsed time, 2.2-2.4% here:
# the 2% burst plus its own wake-up and loop), and as the peak of the rank's
# histogram (its centre) within 20% of the injector's CPU time per wake-up,
# as are the bins of half the injections and the median of the trace's
# detours shorter than 1 ms; two runs
# without it (before and after) must lose less.  Every run uses
# --noise-threshold 100 us and leaves out detours of 1 ms or more (the
# background's parts, measured below, are either shorter than 100 us or longer
# than 1 ms).  Judged only where the host lets it be: the runs without the
# injector must lose less than 1% and agree within 0.2% in that band;
# otherwise, after two attempts, the test exits 77 (skipped), never passes.
. "$NGAUGE_SRC/tests/integration/lib.sh"
mode=${1:-content}

if [ "$mode" = content ]; then
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
    t = [d['t_us'] for d in x['trace']]
    assert t == sorted(t) and 0 < len(x['trace']) <= min(1024, x['detours']), len(x['trace'])
    assert max(d['len_us'] for d in x['trace']) == l[0], (l[0], x['trace'])
row = r['results'][0]
assert row['size'] == 0 and 'detour_us' in row and 0 <= row['lost_fraction'] < 1, row
"
done

# one rank: the pattern needs no partner (the ground truth below measures one CPU this way)
run 0 "$NGAUGE" -x tcp -p noise --np 1 --pin 0 --noise-time 0.3 --noise-threshold 100000 -o "$T/nz-one.json"
pycheck "$T/nz-one.json" "noise --np 1: one rank, its threshold as given" "
n = r['noise']
assert r['ranks'] == 1 and [x['rank'] for x in n['ranks']] == [0], n['ranks']
x = n['ranks'][0]
assert x['threshold_ns'] == 100000 and all(d['len_us'] > 99.99 for d in x['longest']), x['longest']
assert all(b['lo_us'] >= 100 for b in x['histogram']) and 0 <= x['lost_fraction'] < 1, x['histogram']
"

for bad in "--noise-method x" "--noise-time 0" "--noise-threshold -1"; do
	out=$("$NGAUGE" -x tcp -p noise --np 2 $bad 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then pass "$bad: exit 2, one line on stderr"
	else fail "$bad: rc $rc: $out"; fi
done

# the figure: every rank's detours over time and its histogram, drawn (PNG) with the trace's points
if command -v gnuplot >/dev/null; then
	run 0 "$NGAUGE" plot "$T/nz-selfish.json" -o "$T/nz.png" &&
		pycheck "$T/nz-selfish.json" "noise figure: a PNG, its data the ranks' traces and histograms" "
png = open('$T/nz.png', 'rb').read()
assert png[:8] == b'\\x89PNG\\r\\n\\x1a\\n' and len(png) > 5000, len(png)
dat = open('$T/nz.dat').read()
for k in (0, 1):
    assert '# table %d: rank %d trace' % (2 * k, k) in dat and '# table %d: rank %d histogram' % (2 * k + 1, k) in dat
gp = open('$T/nz.gp').read()
assert 'Time since the common start (ms)' in gp and 'index 0 using 1:2 with points' in gp, gp
"
else
	echo "no gnuplot: the figure is not drawn"
fi
finish
fi

# ground truth (needs root for SCHED_FIFO and two CPUs)
if [ "$(nproc)" -lt 2 ] || ! command -v chrt >/dev/null || ! chrt -f 10 true 2>/dev/null; then
	echo "SKIP: no two CPUs or no SCHED_FIFO"
	exit 77
fi
# The injector: SCHED_FIFO 10 on CPU 0, 200 us of busy loop every 10 ms, until the rank has finished.  It
# logs each burst as it saw it and how late it woke, and its share of the CPU as the kernel accounted it: its
# process time (user and system, the burst plus its own loop, sleep calls and wake-ups) over the elapsed time
# of its loop.  That share, not the nominal 2%, is what rank 0 must find.
cat >"$T/inject.py" <<'PY'
import os, time, sys
period, burst, until = 0.010, 0.000200, time.monotonic() + float(sys.argv[1])
stop = sys.argv[2] + '.stop'
nxt = t0 = time.monotonic()
c0 = time.process_time()
log = []
while nxt < until and not os.path.exists(stop):
    nxt += period
    time.sleep(max(0.0, nxt - time.monotonic()))
    w = time.perf_counter()
    late = time.monotonic() - nxt
    end = w + burst
    while time.perf_counter() < end:
        pass
    log.append((late, time.perf_counter() - w))
cpu, wall = time.process_time() - c0, time.monotonic() - t0
with open(sys.argv[2], 'w') as f:
    f.write('share %.6f busy_us %.2f\n' % (cpu / wall, cpu / len(log) * 1e6))
    f.writelines('%.2f %.2f\n' % (a * 1e6, b * 1e6) for a, b in log)
PY
# One rank (the pattern needs no partner), pinned to CPU 0 and SCHED_FIFO 5: above every ordinary task of
# the host's other tenants (which would otherwise take the CPU in slices of milliseconds, 1% to 80% of it
# on this shared host), below the injector.  What is left of the background: the timer tick and interrupts
# (about 750 detours of 12-20 us in 3 s), a few detours of 0.1-1 ms, and, when other tasks are queued on
# CPU 0, the kernel's fair server giving them up to 50 ms per second (1-50 ms detours).
# --noise-threshold 100 us: above the tick's and interrupts' detours (measured: 12-50 us, 0.1-0.6% of the
# CPU in all), below the injected 200 us -20% (160 us).  Detours of 1 ms or more (five injected bursts)
# are not the injector's: the judgement takes them out of the lost time and of the measured span, in every
# run alike, from the pattern's own list of longest detours (unjudgeable when that list is all of them).
thr_ns=100000
verdict=skipped
for attempt in 1 2; do
	nz() { run 0 chrt -f 5 "$NGAUGE" -x tcp -p noise --np 1 --pin 0 --noise-time 3 --noise-threshold $thr_ns -o "$1"; }
	nz "$T/nz-quiet1.json"
	# the injector runs from before the rank starts until it has finished (a slow start, e.g. under a
	# sanitizer on a loaded host, must not leave part of the measured time without it); 60 s at most
	rm -f "$T/inject.log.stop"
	chrt -f 10 taskset -c 0 python3 "$T/inject.py" 60 "$T/inject.log" &
	inj=$!
	sleep 0.5
	nz "$T/nz-inj.json"
	touch "$T/inject.log.stop"
	wait $inj
	nz "$T/nz-quiet2.json"
	schema_check "$T/nz-inj.json" "$T/nz-quiet1.json" "$T/nz-quiet2.json"
	python3 - "$T/nz-inj.json" "$T/nz-quiet1.json" "$T/nz-quiet2.json" "$T/inject.log" >"$T/gt.out" <<'PY'
import json, sys
runs = [json.load(open(f))['noise']['ranks'][0] for f in sys.argv[1:4]]
lines = open(sys.argv[4]).read().split('\n')
share, busy = float(lines[0].split()[1]), float(lines[0].split()[3])
log = [tuple(map(float, l.split())) for l in lines[1:] if l]
med = lambda v: sorted(v)[len(v) // 2] if v else float('nan')
def judged(x):
    """lost fraction without the detours of 1 ms or more (from 'longest'), None if they are not all there"""
    big = [d['len_us'] for d in x['longest'] if d['len_us'] >= 1000]
    if len(big) == len(x['longest']) == 32 or sum(big) > 0.2 * x['span_us']:
        return None, sum(big)
    return (x['lost_fraction'] * x['span_us'] - sum(big)) / (x['span_us'] - sum(big)), sum(big)
(fi, bi), (f1, b1), (f2, b2) = [judged(x) for x in runs]
x = runs[0]
n_inj = 3.0 / 0.010                                   # injections during the 3 s measured
bins = x['histogram']
peak = max(bins, key=lambda b: b['count']) if bins else None
# a bin is at a length when its centre is within 20% of it (a bin is 19% wide: the injections of one run
# often straddle two bins)
at = lambda b, v: abs((b['lo_us'] * b['hi_us']) ** 0.5 - v) <= 0.2 * v
near = sum(b['count'] for b in bins if at(b, busy))
tr = [d['len_us'] for d in x['trace'] if d['len_us'] < 1000]
fmt = lambda v: 'n/a' if v is None else '%.4f' % v
added = fi - (f1 + f2) / 2 if None not in (fi, f1, f2) else None
print('injector: share %.4f of the CPU (process time over elapsed), %.1f us of it per wake-up, burst %.1f us '
      'as it saw it, woke %.1f us late (medians of %d); rank 0 with it: lost %.4f (%s without %.0f us in '
      'detours >= 1 ms), histogram peak [%.0f, %.0f) us with %d detours, %d in +-20%% of %.0f us of %d '
      'injected, trace median (< 1 ms) %.1f us; '
      'without it: lost %.4f and %.4f (%s and %s without %.0f and %.0f us >= 1 ms); added %s'
      % (share, busy, med([b for _, b in log]), med([a for a, _ in log]), len(log), x['lost_fraction'], fmt(fi), bi,
         peak['lo_us'] if peak else 0, peak['hi_us'] if peak else 0, peak['count'] if peak else 0, near, busy, n_inj,
         med(tr), runs[1]['lost_fraction'], runs[2]['lost_fraction'], fmt(f1), fmt(f2), b1, b2, fmt(added)))
if added is None or max(f1, f2) >= 0.01 or abs(f1 - f2) > 0.002 or not 0.015 <= share <= 0.03:
    print('unjudgeable')
elif (abs(added - share) <= 0.2 * share and peak and at(peak, busy) and abs(med(tr) - busy) <= 0.2 * busy
      and near >= 0.5 * n_inj and max(f1, f2) < fi):
    print('ok')
else:
    print('fail')
PY
	cat "$T/gt.out"
	case $(tail -1 "$T/gt.out") in
	ok) verdict=ok; break ;;
	fail) verdict=fail ;;
	unjudgeable) [ "$verdict" = fail ] || verdict=skipped ;;
	esac
done
case $verdict in
ok) pass "noise ground truth: the injector's share added on rank 0 (within 20%), its detours (the injector's time per wake-up, +-20%) the peak of its histogram" ;;
fail) fail "noise ground truth: $(head -1 "$T/gt.out")" ;;
*)
	echo "SKIP: even above the 100 us threshold and without detours of 1 ms or more, the runs without the"
	echo "injector lose 1% or more or differ by more than 0.2% (or the injector did not get its share):"
	echo "the 2% +-20% cannot be judged on this host now"
	[ "$FAILS" -ne 0 ] && finish
	exit 77
	;;
esac
finish
