#!/bin/bash
# bw and bibw, checked on content: --verify over odd sizes (every byte of every
# message checked by ngauge itself), the receivers' message and byte counts,
# the rows and their figures, pairs with 4 ranks, bw at 1 MiB against
# ping-pong's bandwidth, bad --bw-window.
#
#   bw.sh local   local ranks over tcp, the rdma module (shm backend) and emu;
#                 the default counts; pingpong's buffer use (--pp-echo)
#   bw.sh mpi     mpiexec over the mpi module (skipped without mpiexec)
. "$NGAUGE_SRC/tests/integration/lib.sh"
mode=${1:-local}
if [ "$mode" = mpi ]; then
	command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
	"$NGAUGE" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }
fi

# bwcheck FILE WHAT PATTERN WINDOW COUNT WARMUP PAIRS SIZES: the rows of a --verify run.
bwcheck() {
	pycheck "$1" "$2" "
pattern, w, c, wu, pairs, sizes = '$3', $4, $5, $6, $7, [int(x) for x in '$8'.split(',')]
dirs = 2 if pattern == 'bibw' else 1
assert r['complete'] and r['pattern'] == pattern and r['ranks'] == 2 * pairs, r['pattern']
assert r['launch'] == ('mpi' if '$mode' == 'mpi' else 'local'), r['launch']
assert r['parameters']['verify'] is True
b = r['bw']
assert b == {'direction': 'bi' if dirs == 2 else 'uni', 'window': w, 'ack_bytes': 1, 'pairs': pairs,
             'buffers': 'per-message'}, b
rows = r['results']
assert [x['size'] for x in rows] == sizes, [x['size'] for x in rows]
for x in rows:
    s, msgs = x['size'], pairs * dirs * w * (c + wu)
    assert x['count'] == c and x['warmup'] == wu and x['window'] == w, x
    # counted by the receivers, every message checked
    assert x['messages'] == msgs and x['verified'] == msgs, (s, x['messages'], x['verified'], msgs)
    assert x['bytes'] == msgs * s, (s, x['bytes'])
    for k in ('bandwidth_MBps', 'messages_per_s', 'time_us'):
        assert stats_ok(x[k]) and x[k]['n'] == pairs * c, (k, x[k])
    # every sample is one window's bytes and messages over its time (--raw)
    raw = x['raw']['time_us']
    assert len(raw) == pairs * c and min(raw) > 0, raw
    def med(v):
        v, n = sorted(v), len(v)
        return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    for k, per in (('time_us', None), ('bandwidth_MBps', dirs * w * s), ('messages_per_s', dirs * w * 1e6)):
        want = med(raw if per is None else [per / t for t in raw])
        assert abs(x[k]['median'] / want - 1) < 1e-9, (k, x[k]['median'], want)
    if pairs > 1:
        assert len(x['pairs']) == pairs, x['pairs']
        ranks = sorted([p['client'] for p in x['pairs']] + [p['server'] for p in x['pairs']])
        assert ranks == list(range(2 * pairs)), ranks
        agg = sum(p['bandwidth_MBps']['median'] for p in x['pairs'])
        assert abs(x['aggregate_bandwidth_MBps'] - agg) <= 1e-9 * agg, (agg, x['aggregate_bandwidth_MBps'])
        assert x['aggregate_messages_per_s'] > 0
    else:
        assert 'pairs' not in x and 'aggregate_bandwidth_MBps' not in x
"
}

# bwratio WHAT PP.json BW.json: bw's median bandwidth at least a tenth of ping-pong's.
bwratio() {
	python3 - "$2" "$3" <<'EOF' && pass "$1" || fail "$1"
import json, sys
pp = json.load(open(sys.argv[1]))["results"][0]["bandwidth_MBps"]["median"]
bw = json.load(open(sys.argv[2]))["results"][0]["bandwidth_MBps"]["median"]
print("  1 MiB: pingpong %.0f MB/s, bw %.0f MB/s" % (pp, bw))
sys.exit(0 if pp > 0 and bw >= pp / 10 else 1)
EOF
}

# badwindow LAUNCH...: --bw-window 0, -3 and abc exit 2 with one line naming
# it, under mpiexec too (rank 0 alone reports, and no rank aborts).
badwindow() {
	local w
	for w in 0 -3 abc; do
		if run 2 "$@" -p bibw --bw-window "$w" -s 1 -c 1; then
			[ "$(grep -c "^ngauge: rank [1-9]" "$T/err")" -eq 0 ] &&
				[ "$(grep "^ngauge: " "$T/err" | sort -u | sed 's/^ngauge: rank 0: /ngauge: /' | sort -u | wc -l)" -eq 1 ] &&
				grep -q -- "--bw-window" "$T/err" &&
				[ "$(wc -l <"$T/err")" -eq 1 ] &&
				pass "$mode: --bw-window $w refused: $(head -1 "$T/err")" || fail "--bw-window $w: $(cat "$T/err")"
		fi
	done
}

odd=1,7,4097,65537,1048579

if [ "$mode" = mpi ]; then
	for p in bw bibw; do
		run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p $p -s $odd -c 3 -w 1 --verify --raw -o "$T/mpi-$p.json" &&
			bwcheck "$T/mpi-$p.json" "mpiexec -n 2 mpi $p --verify, window 64, odd sizes to 1 MiB + 3" \
				$p 64 3 1 1 $odd
		run 0 mpiexec -n 4 "$NGAUGE" -x mpi -p $p -s 1,65537 -c 3 -w 1 --bw-window 8 --verify --raw \
			-o "$T/mpi4-$p.json" &&
			bwcheck "$T/mpi4-$p.json" "mpiexec -n 4 mpi $p --verify: 2 pairs at once" $p 8 3 1 2 1,65537
	done
	run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p pingpong -s 1M -c 200 -w 10 -o "$T/pp.json" &&
		run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p bw -s 1M -c 10 -w 2 -o "$T/bw.json" &&
		bwratio "mpi bw at 1 MiB not below a tenth of ping-pong's bandwidth" "$T/pp.json" "$T/bw.json"
	badwindow mpiexec -n 2 "$NGAUGE" -x mpi
	finish
fi

for p in bw bibw; do
	run 0 "$NGAUGE" -x tcp -p $p -s $odd -c 3 -w 1 --verify --raw -o "$T/tcp-$p.json" &&
		bwcheck "$T/tcp-$p.json" "tcp $p --verify, window 64, odd sizes to 1 MiB + 3" $p 64 3 1 1 $odd
	run 0 "$NGAUGE" -x tcp --np 4 -p $p -s 1,65537 -c 3 -w 1 --bw-window 8 --verify --raw -o "$T/tcp4-$p.json" &&
		bwcheck "$T/tcp4-$p.json" "tcp $p --verify, 4 ranks: 2 pairs at once" $p 8 3 1 2 1,65537
	run 0 "$NGAUGE" -x rdma --rdma-backend shm -p $p -s 1,7,8193,65537,1048579 -c 3 -w 1 --verify --raw \
		-o "$T/rdma-$p.json" &&
		bwcheck "$T/rdma-$p.json" "rdma (shm) $p --verify, rendezvous sizes" $p 64 3 1 1 1,7,8193,65537,1048579
	# emu's isend is a blocking send: a bibw window must fit the base's socket buffers (README)
	run 0 "$NGAUGE" -x emu -p $p -s 1,7,4097,65537 -c 3 -w 1 --bw-window 8 --verify --raw -o "$T/emu-$p.json" &&
		bwcheck "$T/emu-$p.json" "emu $p --verify" $p 8 3 1 1 1,7,4097,65537
done

# --verify notices a corrupted message (emu flips one byte of every 5th).
if run 1 "$NGAUGE" -x emu --emu-corrupt 5 -p bw -s 4097 -c 3 -w 1 --bw-window 8 --verify; then
	grep -q "verify: size 4097 from rank 0: byte at offset" "$T/err" && pass "bw --verify finds a corrupted byte" ||
		fail "bw --verify: corruption not named: $(cat "$T/err")"
fi

# Default counts (osu_bw's): 100 windows after 10 up to 8 KiB, 20 after 2 above.
if run 0 "$NGAUGE" -x tcp -p bw -s 8K,8193 -o "$T/def.json"; then
	pycheck "$T/def.json" "default counts 100+10 up to 8 KiB, 20+2 above" "
x, y = r['results']
assert (x['count'], x['warmup'], y['count'], y['warmup']) == (100, 10, 20, 2), (x['count'], y['count'])
assert x['messages'] == 64 * 110 and y['messages'] == 64 * 22
assert x['verified'] == 0 and r['bw']['buffers'] == 'single' and r['bw']['window'] == 64
"
fi

# Streaming moves at least as much as ping-pong; a bw far below it is broken.
run 0 "$NGAUGE" -x tcp -p pingpong -s 1M -c 30 -w 3 -o "$T/pp.json" &&
	run 0 "$NGAUGE" -x tcp -p bw -s 1M -c 5 -w 1 -o "$T/bw.json" &&
	bwratio "tcp bw at 1 MiB not below a tenth of ping-pong's bandwidth" "$T/pp.json" "$T/bw.json"
badwindow "$NGAUGE" -x tcp

# pingpong: both buffer uses deliver (each direction checked), and the result says which.
for e in separate same; do
	if run 0 "$NGAUGE" -x tcp -p pingpong --pp-echo $e -s 1,4093,65537 -c 20 -w 2 --verify -o "$T/pp-$e.json"; then
		pycheck "$T/pp-$e.json" "pingpong --pp-echo $e --verify, recorded" "
assert r['parameters']['pp-echo'] == '$e' and r['parameters']['verify'] is True
assert [x['size'] for x in r['results']] == [1, 4093, 65537]
"
	fi
done
run 0 "$NGAUGE" -x tcp -p pingpong -s 1 -c 5 -o "$T/pp-def.json" &&
	pycheck "$T/pp-def.json" "pingpong defaults to --pp-echo separate" "assert r['parameters']['pp-echo'] == 'separate'"
run 2 "$NGAUGE" -x tcp -p pingpong --pp-echo both -s 1 -c 1 && grep -q "pp-echo must be one of separate|same" "$T/err" &&
	pass "--pp-echo both refused" || fail "--pp-echo both"

finish
