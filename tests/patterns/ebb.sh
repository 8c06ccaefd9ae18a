#!/bin/bash
# ebb, checked on content: over tcp and the rdma module (shm backend), 4 and 6 ranks, with --verify; the
# bisections follow --seed (the same seed gives the same pairs, every rank in one pair per round, clients
# from one half); the row's bandwidths and the block's agree; the effective bisection bandwidth is the mean
# over pairs and rounds, inside its interval; bad values exit 2 with one line.
. "$NGAUGE_SRC/tests/integration/lib.sh"

check() { # FILE RANKS ROUNDS
	pycheck "$1" "ebb $2 ranks, $3 rounds: bisections, bandwidths, histogram, mean" "
e, x = r['ebb'], r['results'][0]
n, R = $2, $3
assert r['complete'] and r['pattern'] == 'ebb' and e['rounds'] == R and e['pairs'] == n // 2, e
assert len(e['bisections']) == R and x['count'] == R * n // 2, x['count']
bw = []
for k, b in enumerate(e['bisections']):
    assert b['round'] == k
    ranks = sorted([p['client'] for p in b['pairs']] + [p['server'] for p in b['pairs']])
    assert ranks == list(range(n)), ranks
    v = [p['bandwidth_MBps'] for p in b['pairs']]
    assert all(y > 0 for y in v) and abs(b['sum_MBps'] - sum(v)) <= 1e-6 * sum(v), b
    bw += v
assert stats_ok(x['bandwidth_MBps']) and x['bandwidth_MBps']['n'] == len(bw), x['bandwidth_MBps']
s = sorted(bw)
assert abs(x['bandwidth_MBps']['min'] - s[0]) <= 1e-6 * s[0] and abs(x['bandwidth_MBps']['max'] - s[-1]) <= 1e-6 * s[-1]
m = sum(bw) / len(bw)
p = x['effective_bisection_MBps']
assert abs(p['value'] - m) <= 1e-6 * m and p['ci95'][0] <= m <= p['ci95'][1], (p, m)
assert sum(h['count'] for h in e['histogram']) == len(bw), e['histogram']
for h in e['histogram']:
    assert h['lo_MBps'] < h['hi_MBps'] <= 1.13 * h['lo_MBps'] and h['count'] > 0, h
    assert any(h['lo_MBps'] <= y < h['hi_MBps'] for y in bw), h
assert x['verified'] == x['messages'] > 0 and x['bytes'] == x['messages'] * x['size'], x
"
}

run 0 "$NGAUGE" -x tcp -p ebb --np 4 --ebb-rounds 5 --ebb-size 16K --bw-window 8 --ebb-time 0.02 --seed 3 \
	--verify -o "$T/tcp4.json" && check "$T/tcp4.json" 4 5
run 0 "$NGAUGE" -x tcp -p ebb --np 6 --ebb-rounds 4 --ebb-size 1K --ebb-time 0.02 --seed 3 --verify \
	-o "$T/tcp6.json" && check "$T/tcp6.json" 6 4
run 0 "$NGAUGE" -x rdma -p ebb --np 4 --ebb-rounds 4 --ebb-size 64K --bw-window 4 --ebb-time 0.02 --verify \
	-o "$T/rdma4.json" && check "$T/rdma4.json" 4 4
# the same seed, the same bisections; another seed, others
run 0 "$NGAUGE" -x tcp -p ebb --np 4 --ebb-rounds 5 --ebb-size 16K --bw-window 8 --ebb-time 0.02 --seed 3 \
	-o "$T/tcp4b.json" && run 0 "$NGAUGE" -x tcp -p ebb --np 4 --ebb-rounds 5 --ebb-size 16K --bw-window 8 \
	--ebb-time 0.02 --seed 4 -o "$T/tcp4c.json" && pycheck "$T/tcp4b.json" "ebb: --seed fixes the bisections" "
pairs = lambda f: [[(p['client'], p['server']) for p in b['pairs']] for b in json.load(open(f))['ebb']['bisections']]
assert pairs('$T/tcp4.json') == pairs('$T/tcp4b.json') != pairs('$T/tcp4c.json')
assert r['results'][0]['verified'] == 0
"

# the figure: the histogram drawn (PNG), its data the block's bins and the row's marks
if command -v gnuplot >/dev/null; then
	run 0 "$NGAUGE" plot "$T/tcp6.json" -o "$T/ebb.png" && pycheck "$T/tcp6.json" "ebb figure: a PNG of the histogram" "
png = open('$T/ebb.png', 'rb').read()
assert png[:8] == b'\\x89PNG\\r\\n\\x1a\\n' and len(png) > 5000, len(png)
dat = open('$T/ebb.dat').read()
assert '# table 0: ebb.histogram' in dat and '# table 1: results' in dat, dat
n = sum(int(l.split()[1]) for l in dat.split('# table 1')[0].splitlines() if l and l[0] != '#')
assert n == r['results'][0]['count'], n
"
fi

for bad in "--np 4 --ebb-rounds 0" "--np 3" "--np 4 --ebb-time 0" "--np 4 -c 5" "--np 4 -w 1"; do
	out=$("$NGAUGE" -x tcp -p ebb $bad 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then pass "$bad: exit 2, one line on stderr ($out)"
	else fail "$bad: rc $rc: $out"; fi
done
finish
