#!/bin/bash
# The rma pattern's refusals: a module without one-sided operations is refused before anything runs,
# naming the capability; too few ranks for multi-origin or for --rma-origins, unknown tests and modes, a
# mode a test does not allow, a bad burst: one line, exit 2.  And a run whose waits add up to more than
# --timeout (each of them short) is not taken for a lost peer.
. "$NGAUGE_SRC/tests/integration/lib.sh"

"$NGAUGE" --list 2>/dev/null | grep -q "^  rma " || { echo "SKIP: module rma not built"; exit 77; }

# refused EXPECTED-TEXT ARGS...: exit 2, one line on stderr containing the text
refused() {
	local text=$1
	shift
	if run 2 "$NGAUGE" "$@" && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$text" "$T/err"; then
		pass "refused: $* ($(cat "$T/err"))"
	else
		fail "$*: expected one line with '$text', got: $(cat "$T/err")"
	fi
}

# before anything runs: no header line, no result file
refused "needs one-sided operations, which module 'tcp' does not offer" -x tcp -p rma -o "$T/tcp.json"
[ ! -s "$T/out" ] && [ ! -e "$T/tcp.json" ] && pass "tcp: nothing ran" || fail "tcp: something ran: $(cat "$T/out")"
refused "multi-origin needs at least 3 ranks" -x rma --rdma-backend shm -p rma --rma-test multi-origin
refused "multi-origin needs at least 3 ranks" -x rma --rdma-backend shm -p rma --rma-test put-bw,multi-origin
refused "--rma-origins 3 needs 4 ranks, the run has 3" -x rma --rdma-backend shm --rdma-poll yield --np 3 -p rma \
	--rma-test sync --rma-origins 3
refused "needs at least 2 ranks" -x rma --rdma-backend shm --np 1 -p rma --rma-test sync
refused "unknown test 'put'" -x rma --rdma-backend shm -p rma --rma-test put
refused "unknown mode 'post'" -x rma --rdma-backend shm -p rma --rma-sync post
refused "lock runs with lock only" -x rma --rdma-backend shm -p rma --rma-test lock --rma-sync pscw
refused "sync runs with pscw, lock only" -x rma --rdma-backend shm -p rma --rma-test sync --rma-sync fence
refused "--rma-burst must be 1 to 1024" -x rma --rdma-backend shm -p rma --rma-burst 0
refused "no size is a multiple of 8" -x rma --rdma-backend shm -p rma --rma-test acc-pingpong -s 1-4

# "all" leaves out what cannot run here and says why
if run 0 "$NGAUGE" -x rma --rdma-backend shm -p rma --rma-sync fence -s 8 -c 3 -w 0 -o "$T/all.json"; then
	pycheck "$T/all.json" "--rma-test all --rma-sync fence: the tests fence does not serve are listed, not run" '
b = r["rma"]
assert set(b["skipped"]) == {"sync", "lock", "multi-origin"}, b["skipped"]
assert "runs with pscw, lock only" in b["skipped"]["sync"], b
assert set(x["test"] for x in r["results"]) == set(b["tests"]) and "sync" not in b["tests"], b["tests"]
assert all(x["sync"] in ("fence", "two-sided") for x in r["results"])
'
fi

# Fence-timed epochs (and bidir's exchange of messages) alternate long and short at rank 0, which times from
# one meeting's return to the next: a sample is the mean of two consecutive epochs ("epochs_per_sample": 2),
# the epochs run and are checked as before, and the samples in --raw show no alternation (lag-1
# autocorrelation of their signs about the median no lower than -max(0.5, 3/sqrt(n))), or where a loaded
# host makes the pairs alternate too, the row's statistics flag it ("alternating"); pscw's stay one.
if run 0 "$NGAUGE" -x rma --rdma-backend shm --rdma-poll yield -p rma --rma-test bidir,put-bw --rma-sync fence,pscw \
	-s 8,4096 -c 200 -w 4 --verify --raw -o "$T/alt.json"; then
	pycheck "$T/alt.json" "fence-timed bidir and put-bw: pairs of epochs, no alternation in the raw samples" '
def r1(x):
    m = sorted(x)[len(x) // 2] if len(x) % 2 else sum(sorted(x)[len(x) // 2 - 1:len(x) // 2 + 1]) / 2
    s = [(v > m) - (v < m) for v in x]
    den = sum(1 for i in range(len(s) - 1) if s[i] * s[i + 1])
    return sum(s[i] * s[i + 1] for i in range(len(s) - 1)) / den if den else 0.0
rows = r["results"]
assert sorted(set((x["test"], x["sync"]) for x in rows)) == [("bidir", "fence"), ("bidir", "pscw"),
    ("bidir", "two-sided"), ("put-bw", "fence"), ("put-bw", "pscw")], rows
for x in rows:
    pair = 1 if x["sync"] == "pscw" else 2
    raw = x["raw"]["time_us"]
    per = 2 if x["test"] == "bidir" else 1
    assert x["epochs_per_sample"] == pair and x["count"] == 200 and x["time_us"]["n"] == 200 // pair, x
    assert len(raw) == 200 // pair and x["verified"] == per * 204, (x["test"], x["sync"], x["verified"])
    if pair == 2:
        lim = -max(0.5, 3 / len(raw) ** 0.5)
        # pairs may still alternate on a loaded host (a scheduler's period, not the fence's): then the
        # row says so
        assert r1(raw) >= lim or x["time_us"].get("alternating") is True, (x["test"], x["sync"], r1(raw), raw[:8])
'
fi

# Every wait of these runs is short, together they last well over --timeout 2: progress, not silence; in
# the lock modes no rank waits for the others' whole loop in one call.  (The count doubles until a run lasts
# 5 s at least.)
long_run() { # TEST SIZE EPOCHS-CHECKED-PER-ITERATION
	local c t0 took
	for c in 250 500 1000 2000 4000 8000 16000 32000 64000; do
		t0=$(date +%s.%N)
		run 0 "$NGAUGE" -x rma --rdma-backend shm -p rma --rma-test "$1" -s "$2" -c $c -w 0 --verify \
			--timeout 2 -o "$T/long.json" || return
		took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		if awk -v s="$took" 'BEGIN { exit !(s > 5) }'; then
			pycheck "$T/long.json" "$1: a run of ${took%.*} s, longer than --timeout, made of short waits" "
x = r['results'][0]
assert r['complete'] and x['verified'] == $3 * $c, x
"
			return
		fi
	done
	fail "$1: no run lasted 5 s"
}
long_run put-pingpong 512K 2
long_run lock 2M 1
finish
