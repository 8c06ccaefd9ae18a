#!/bin/bash
# The rma pattern's get cases with get aggregation (--rma-sched aggregate and all, the direct design) over one
# backend, --verify, two ranks:
#   rma_getagg.sh MODULE-ARGS...      e.g.  -x rma --rdma-backend shm --rdma-poll yield
# get-pingpong, get-bw, sched-1 and sched-2 in every mode each allows (pscw aggregates; fence and lock epochs read)
# at sizes below, at and above --rma-aggregate (256, the default: 1, 255, 256, 257, 4093), and with
# --rma-aggregate 64K at 20000 and 65536 bytes (answers of several channel messages each).  Every epoch's gets
# are checked after the epoch closed at the origin (the "verified" count of each row).  And a 40 MB get of the
# sendrecv design, whose answers go through the same table.  Exit 77 when the backend does not open here.
. "$NGAUGE_SRC/tests/integration/lib.sh"

what="$*"
"$NGAUGE" --list 2>/dev/null | grep -q "^  rma " || { echo "SKIP: module rma not built"; exit 77; }
if ! run 0 "$NGAUGE" --np 2 "$@" -p rma --rma-test get-pingpong -s 8 -c 2 -w 0; then
	echo "SKIP: $what does not open here: $(tail -1 "$T/err")"
	exit 77
fi

C=10
W=2
# check FILE SCHED AGG SIZES WHAT: the rows of every get test in every mode at SIZES, each epoch verified
check() {
	pycheck "$1" "$5" "
total = $C + $W
p = r['parameters']
assert r['complete'] is True and p['rma-sched'] == '$2' and p['rma-aggregate'] == $3 and p['verify'] is True, p
want = {'get-pingpong': (['pscw', 'fence'], 2), 'get-bw': (['pscw', 'fence', 'lock-exclusive'], 1),
        'sched-1': (['pscw', 'fence', 'lock-exclusive'], 1), 'sched-2': (['pscw', 'fence'], 2)}
sizes = [$4]
got = [(x['test'], x['sync'], x['size']) for x in r['results']]
exp = [(t, m, s) for t, (modes, per) in want.items() for m in modes for s in sizes]
assert got == exp, (got, exp)
for x in r['results']:
    assert x['verified'] == want[x['test']][1] * total, (x['test'], x['sync'], x['size'], x['verified'])
    assert stats_ok(x['time_us']), x
"
}

for sched in aggregate all; do
	if run 0 "$NGAUGE" --np 2 "$@" --rma-sched $sched -p rma --rma-test get-pingpong,get-bw,sched-1,sched-2 \
		--rma-sync pscw,fence,lock -s 1,255,256,257,4093 -c $C -w $W --verify -o "$T/$sched.json"; then
		check "$T/$sched.json" $sched 256 "1, 255, 256, 257, 4093" "$what --rma-sched $sched: gets around 256 B verified"
	fi
	if run 0 "$NGAUGE" --np 2 "$@" --rma-sched $sched --rma-aggregate 64K -p rma \
		--rma-test get-pingpong,get-bw,sched-1,sched-2 --rma-sync pscw,fence,lock -s 20000,65536 -c $C -w $W \
		--verify -o "$T/$sched-64k.json"; then
		check "$T/$sched-64k.json" $sched 65536 "20000, 65536" \
			"$what --rma-sched $sched --rma-aggregate 64K: answers in pieces verified"
	fi
done
# The sendrecv design answers every get through the same table of awaited answers: a get of 40 MB needs more
# answers (of --rdma-eager bytes) than the table holds (4096), so it goes as requests of half the table each.
if run 0 "$NGAUGE" --np 2 "$@" --rma-design sendrecv -p rma --rma-test get-pingpong --rma-sync pscw,fence -s 40M \
	-c 2 -w 0 --verify -o "$T/sendrecv-40m.json"; then
	pycheck "$T/sendrecv-40m.json" "$what --rma-design sendrecv: a 40 MB get verified" "
assert [(x['sync'], x['size'], x['verified']) for x in r['results']] == [('pscw', 40 << 20, 4), ('fence', 40 << 20, 4)], r['results']
"
fi
finish
