#!/bin/bash
# matrix, checked on content: the shape of both matrices (N x N, null on the diagonal, a STATS of the
# pair's samples in every other cell), the rows (STATS over the pairs' medians), the rounds of both
# orders, every message counted under --verify, the outliers against their rule and named in the table on
# stdout, the ranks' identities; local ranks over tcp (4 and 3 ranks) and emu, mpiexec over tcp where
# mpiexec exists; the figure and the report; bad values exit 2 with one line.
. "$NGAUGE_SRC/tests/integration/lib.sh"

# mxcheck FILE WHAT NP ORDER ROUNDS SIZES COUNT WARMUP WINDOW FACTOR: the result of a --verify run.
mxcheck() {
	pycheck "$1" "$2" "
n, order, rounds, sizes, c, w, win, f = $3, '$4', $5, [int(x) for x in '$6'.split(',')], $7, $8, $9, ${10}
import statistics
assert r['complete'] and r['pattern'] == 'matrix' and r['ranks'] == n, (r['pattern'], r['ranks'])
assert r['parameters']['verify'] is True and r['parameters']['matrix-order'] == order
m = r['matrix']
assert (m['order'], m['window'], m['outlier_factor'], m['rounds']) == (order, win, f, rounds), m['rounds']
assert [x['rank'] for x in m['ranks']] == list(range(n)), m['ranks']
assert all(x['host'] and x['addr'] and x['device'] for x in m['ranks']), m['ranks']
assert [e['size'] for e in m['sizes']] == sizes and [x['size'] for x in r['results']] == sizes
table = open('$T/out').read()
for row, e in zip(r['results'], m['sizes']):
    s = row['size']
    assert row['pairs'] == n * (n - 1) and row['rounds'] == rounds and row['window'] == win, row
    assert row['count'] == c and row['bw_count'] == c, row
    # both sides check every message: a round trip is two, a window win (the acknowledgement is not checked)
    assert row['verified'] == n * (n - 1) * (c + w) * (2 + win), (row['verified'], n * (n - 1) * (c + w) * (2 + win))
    meds = {}
    for key in ('latency_us', 'bandwidth_MBps'):
        cells = e[key]
        assert len(cells) == n and all(len(x) == n for x in cells), key
        assert all(cells[i][i] is None for i in range(n)), (key, 'diagonal')
        meds[key] = [cells[i][j]['median'] for i in range(n) for j in range(n) if i != j]
        for i in range(n):
            for j in range(n):
                if i != j:
                    assert stats_ok(cells[i][j]) and cells[i][j]['n'] == c, (key, i, j, cells[i][j])
        # the row: the distribution over the pairs of their medians
        assert row[key]['n'] == n * (n - 1), row[key]
        assert abs(row[key]['median'] / statistics.median(meds[key]) - 1) < 1e-9, (key, row[key]['median'])
    # a window of win messages of s bytes over a time: bandwidth = win * s / time, at most the latency's
    # bound (a window cannot beat win one-way trips in parallel by much): sane, positive
    assert e['latency_median_us'] == row['latency_us']['median'] and e['bandwidth_median_MBps'] == row['bandwidth_MBps']['median']
    # the outliers are exactly the slow cells by the rule, each named on stdout
    lm, bm = row['latency_us']['median'], row['bandwidth_MBps']['median']
    want = sorted([(i, j, 'latency_us') for i in range(n) for j in range(n)
                   if i != j and e['latency_us'][i][j]['median'] > f * lm] +
                  [(i, j, 'bandwidth_MBps') for i in range(n) for j in range(n)
                   if i != j and e['bandwidth_MBps'][i][j]['median'] < bm / f])
    got = sorted((o['from'], o['to'], o['metric']) for o in e['outliers'])
    assert got == want and row['outliers'] == len(want), (got, want)
    for o in e['outliers']:
        ref = lm if o['metric'] == 'latency_us' else bm
        assert abs(o['ratio'] - o['value'] / ref) < 1e-9 * o['ratio'], o
        what = 'latency' if o['metric'] == 'latency_us' else 'bandwidth'
        line = '# matrix: rank %d -> rank %d: %.2gx the median %s' % (o['from'], o['to'], o['ratio'], what)
        assert line in table, line
    head = '# matrix: size %s, %d ranks, %d pairs in %d rounds (%s)' % (
        {1: '1', 4097: '4097', 65536: '64K'}.get(s, str(s)), n, n * (n - 1), rounds, order)
    assert head in table, head
# the matrices of medians on stdout: a header of the ranks and one line per rank
assert table.count('# matrix: median latency [us], from the row') == len(sizes)
assert all(('#%7d' % i) in table for i in range(n))
"
}

# Four ranks, both orders: pair runs 12 rounds of one pair, shift 6 (offsets 1, 2, 3, two rounds each).
for order in pair shift; do
	rounds=12
	[ $order = shift ] && rounds=6
	run 0 "$NGAUGE" -x tcp --np 4 -p matrix --matrix-order $order --matrix-outlier 1.05 -s 1,4097 -c 5 -w 2 \
		--bw-window 8 --verify -o "$T/tcp4-$order.json" &&
		mxcheck "$T/tcp4-$order.json" "tcp, 4 ranks, --matrix-order $order: shape, counts, outliers" 4 $order \
			$rounds 1,4097 5 2 8 1.05
done
# Three ranks (no pairing needed; an odd cycle of offsets takes three rounds): 6 pairs in 6 rounds both ways.
run 0 "$NGAUGE" -x tcp --np 3 -p matrix --matrix-order shift -s 1 -c 5 -w 2 --bw-window 4 --verify \
	-o "$T/tcp3.json" && mxcheck "$T/tcp3.json" "tcp, 3 ranks, shift: three rounds an offset" 3 shift 6 1 5 2 4 1.5
run 0 "$NGAUGE" -x emu --np 3 -p matrix -s 1,64K -c 5 -w 2 --bw-window 4 --verify -o "$T/emu3.json" &&
	mxcheck "$T/emu3.json" "emu, 3 ranks, pair: shape and counts" 3 pair 6 1,65536 5 2 4 1.5
if command -v mpiexec >/dev/null; then
	run 0 mpiexec -n 4 "$NGAUGE" -x tcp -p matrix -s 1 -c 5 -w 2 --bw-window 4 --verify -o "$T/mpi4.json" &&
		mxcheck "$T/mpi4.json" "mpiexec -n 4, tcp: shape and counts" 4 pair 12 1 5 2 4 1.5
fi

# Defaults: sizes 1 and 256K, bw's counts (100 windows up to 8K, 20 above) under the given -c for latency.
run 0 "$NGAUGE" -x tcp -p matrix -c 20 -w 2 -o "$T/def.json" && pycheck "$T/def.json" "defaults: sizes 1,256K" "
assert [x['size'] for x in r['results']] == [1, 262144], r['results']
assert all(x['count'] == 20 and x['bw_count'] == 20 and x['window'] == 64 for x in r['results'])
assert r['matrix']['order'] == 'pair' and r['parameters']['matrix-outlier'] == 1.5
"

# The heatmaps and the report.
if command -v gnuplot >/dev/null; then
	(cd "$T" && run 0 "$NGAUGE" plot tcp4-pair.json -o heat.png) &&
		[ "$(head -c 8 "$T/heat.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		grep -q "with image" "$T/heat.gp" && grep -q "Receiving rank" "$T/heat.gp" &&
		pass "plot: heatmaps of latency and bandwidth (PNG)" || fail "plot of a matrix file"
	(cd "$T" && run 0 "$NGAUGE" report tcp4-pair.json -o rep.html) && grep -q "<h3>Matrix</h3>" "$T/rep.html" &&
		grep -q "tcp 127.0.0.1" "$T/rep.html" && pass "report: the matrix section" || fail "report of a matrix file"
fi

# Sampling: whole ring offsets drawn with --seed, summaries by rank and by node, the matrices only on request.
for order in pair shift; do
	run 0 "$NGAUGE" -x tcp --np 8 -p matrix --matrix-order $order --matrix-pairs 10 -s 1 -c 5 -w 2 --bw-window 4 \
		--verify -o "$T/samp-$order.json" && pycheck "$T/samp-$order.json" "sampled ($order): 2 offsets, 16 pairs, every rank twice out and twice in, no matrices" "
b = r['matrix']
assert b['sampled'] is True and b['cells'] is False and len(b['offsets']) == 2, b['offsets']
assert all(1 <= d <= 7 for d in b['offsets']) and b['offsets'] == sorted(set(b['offsets']))
row = r['results'][0]
assert row['pairs'] == 16 and row['latency_us']['n'] == 16, row
assert row['verified'] > 0
e = b['sizes'][0]
assert e['pairs'] == 16 and 'latency_us' not in e and 'bandwidth_MBps' not in e
assert [x['rank'] for x in e['by_rank']] == list(range(8))
for x in e['by_rank']:
    for k in ('out_latency_us', 'in_latency_us', 'out_bandwidth_MBps', 'in_bandwidth_MBps'): assert x[k] > 0, x
assert len(e['by_node']) == 1 and e['by_node'][0]['ranks'] == 8 and e['by_node'][0]['pairs_within'] == 16
assert e['by_node'][0]['pairs_out'] == 0 and e['by_node'][0]['latency_out_us'] is None
t = r['tcp']
assert t['open'] <= 6, t   # its 4 partners and 2 ring neighbours at most, not 7 + ...
"
done
run 0 "$NGAUGE" -x tcp --np 8 -p matrix --matrix-pairs 8 --matrix-cells --seed 7 -s 1 -c 5 -w 2 --bw-window 4 \
	-o "$T/cells.json" && pycheck "$T/cells.json" "--matrix-cells: the matrices, null for the pairs not measured" "
b = r['matrix']
d = b['offsets'][0]
m = b['sizes'][0]['latency_us']
assert b['cells'] is True and len(b['offsets']) == 1 and len(m) == 8
for i in range(8):
    for j in range(8):
        assert (m[i][j] is not None) == ((j - i) % 8 == d), (i, j, d)
"
run 0 "$NGAUGE" -x tcp --np 4 -p matrix --matrix-pairs 1000000 -s 1 -c 5 -w 2 --bw-window 4 -o "$T/all.json" &&
	pycheck "$T/all.json" "--matrix-pairs above N (N - 1): every pair, the matrices kept" "
b = r['matrix']
assert b['sampled'] is False and b['cells'] is True and b['offsets'] == [1, 2, 3] and r['results'][0]['pairs'] == 12
"

# Bad values: exit 2, one line that names the option.
bad() {
	local what=$1
	shift
	if run 2 "$NGAUGE" -x tcp -p matrix -s 1 -c 2 -w 0 "$@"; then
		[ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$what" "$T/err" && pass "$* refused in one line" ||
			{ fail "$*: not one line naming $what"; cat "$T/err" >&2; }
	fi
}
bad --matrix-outlier --matrix-outlier 1
bad --matrix-outlier --matrix-outlier 0.5
bad --matrix-outlier --matrix-outlier x
bad --matrix-order --matrix-order ring
bad --bw-window --bw-window 0
bad --bw-window --bw-window 2000000
bad --matrix-pairs --matrix-pairs -1
finish
