#!/bin/bash
# spipe-suite.sh — the spipe module over the RDMA layer's verbs backend, inside the Soft-RoCE guest:
# `tests/rxe/vm-run.sh spipe-suite.sh` (meson test --suite rxe rxe-spipe does that). Exits 0 when every
# check passed, 1 otherwise, 77 outside the VM.
#
# 1. The layer's conformance test over verbs (2 ranks): content, notices, writes of blocks (a notice per
#    4 KiB piece, consumed while arriving), atomics, bounds, heap memory, stale keys.
# 2. test_spipe_local over verbs for rcache and super: memory freed and mapped again at the same address
#    must reach the peer with its new content (a stale registration would pin the old pages: the HCA
#    would send those), the cache must miss on it; heap memory, a window of messages, length mismatches,
#    --spipe-fresh.
# 3. pingpong --verify for every mode at odd sizes from 1 B to 16 MiB across the eager size, and the
#    superpipeline with small sub-blocks across its chunk edges and buffer wraps.
# 4. A peer killed in the middle of a pipeline: the survivor names it within --timeout.
# 5. A peer stopped (SIGSTOP) for more than twice --timeout, then continued: its queue pair still answers,
#    so it is alive (as a rank whose virtual CPU a busy host does not run), not lost; the run completes.
# 6. rcache messages of 8 MiB (one RDMA write each, 2-3 s on the emulated device, over --timeout 1): both
#    ranks hear nothing for longer than --timeout while the write is on the wire; neither is lost.
# The guest is emulated (a few MB/s): counts are small, the figures mean nothing.
set -u
. "$(dirname "$0")/guest-lib.sh"

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
B=${NGAUGE_BUILD:-$(dirname "$N")}
[ -n "$N" ] || { echo "spipe-suite.sh: set NGAUGE (the binary) or NGAUGE_BUILD (the build directory)" >&2; exit 1; }
dev=${NGAUGE_RXE_DEVICE:-rxe0}
if [ ! -e "/sys/class/infiniband/$dev" ]; then
	echo "spipe-suite.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
	exit 77
fi
"$N" --list 2>/dev/null | grep -q '^ *spipe' || { echo "spipe-suite.sh: SKIP: no spipe module" >&2; exit 77; }

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-spipe.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fails=0
T0=$EPOCHREALTIME

V="--rdma-backend verbs --rdma-poll yield"

# 1. the layer over verbs
run layer "0" "$B/tests/test_rdma_layer" verbs 2

# 2. freed and reused memory, heap memory, windows, mismatches, fresh
for mode in rcache super; do
	run "local-$mode" 0 "$B/tests/test_spipe_local" "$mode" verbs
done

# 3. every mode, odd sizes to 16 MiB; the chunk edges of the superpipeline
SIZES=1,8191,8192,8193,65537,1000003,16777215
for mode in reg rcache copy pipeline super; do
	# the emulated device's gap per write is near a millisecond: pipeline chunks of at least 64 KiB
	[ $mode = pipeline ] && more="--spipe-block 64K" || more=""
	run "pp-$mode" 0 "$N" -x spipe $V --spipe-mode $mode $more -p pingpong -s $SIZES -c 1 -w 0 --verify \
		--timeout 30 -o "$W/pp-$mode.json"
done
# the result files (grep: a python start costs seconds in the emulated guest)
for mode in reg rcache copy pipeline super; do
	f=$W/pp-$mode.json
	[ -s "$f" ] || continue
	grep -q '"complete": true' "$f" && grep -q "\"mode\": \"$mode\"" "$f" && grep -q "\"device\": \"verbs $dev " "$f" &&
		[ "$(grep -c '"predicted_us":' "$f")" -eq 7 ] && grep -q '"lambda_reg_us": [0-9]' "$f" &&
		grep -q '"B_net_MBps": [0-9]' "$f" || fail "pp-$mode: result content ($f)"
done
run edges 0 "$N" -x spipe $V --rdma-eager 256 --spipe-block 1K --spipe-bufsize 8K --spipe-c0 2032 --spipe-q 2 \
	-p pingpong -s 255,257,2032,2033,6096,6097,14224,14225,22353,100003 -c 2 -w 0 --verify

# 4. a peer killed mid-pipeline
"$N" -x spipe $V -p pingpong -s 16M -c 100000 -w 0 --timeout 8 -o "$W/k.json" >"$W/k.out" 2>"$W/k.err" &
pid=$!
for _ in $(seq 300); do
	[ -s "$W/k.json" ] && grep -q '"spipe"' "$W/k.json" && break
	sleep 0.1
done
sleep 2
ranks=($(pgrep -P $pid))
start=$EPOCHREALTIME
[ -n "${ranks[1]:-}" ] && kill -9 "${ranks[1]}" # no second rank: the run ended early, which the check below reports
wait $pid
rc=$?
us=$(usecs "$start")
if [ "$rc" -ne 0 ] && [ "$us" -lt $((8 + 4))000000 ] && grep -q "rank 1" "$W/k.err"; then
	printf 'ok   %-30s exit %-3s %5d.%d s\n' "killed-peer" "$rc" $((us / 1000000)) $((us % 1000000 / 100000))
else
	fail "killed peer: exit $rc after $((us / 1000)) ms (--timeout 8): $(tail -3 "$W/k.err")"
fi

# 5. a peer stopped for 5 s under --timeout 2, then continued (64 KiB round trips take 10-20 ms here: the
#    600 of them outlast the stop)
"$N" -x spipe $V -p pingpong -s 64K -c 600 -w 0 --timeout 2 -o "$W/s.json" >"$W/s.out" 2>"$W/s.err" &
pid=$!
for _ in $(seq 300); do
	[ -s "$W/s.json" ] && grep -q '"spipe"' "$W/s.json" && break
	sleep 0.1
done
sleep 1
ranks=($(pgrep -P $pid))
start=$EPOCHREALTIME
going=0
if [ -n "${ranks[1]:-}" ] && kill -STOP "${ranks[1]}"; then
	sleep 5
	kill -0 $pid 2>/dev/null && going=1
	kill -CONT "${ranks[1]}"
fi
wait $pid
rc=$?
us=$(usecs "$start")
if [ "$rc" -eq 0 ] && [ $going = 1 ] && grep -q '"complete": true' "$W/s.json" && ! grep -q lost "$W/s.err"; then
	printf 'ok   %-30s exit %-3s %5d.%d s\n' "stopped-peer" "$rc" $((us / 1000000)) $((us % 1000000 / 100000))
else
	fail "stopped peer: exit $rc, running through the stop: $going (--timeout 2, stopped 5 s): $(tail -3 "$W/s.err")"
fi

# 6. writes longer than --timeout
run long-write 0 "$N" -x spipe $V --spipe-mode rcache -p pingpong -s 8M -c 1 -w 0 --timeout 1 -o "$W/l.json"
if [ -s "$W/l.json" ]; then
	grep -q '"complete": true' "$W/l.json" && ! grep -q lost "$W/long-write.err" ||
		fail "long-write: result content ($W/l.json)"
fi

us=$(usecs "$T0")
echo "spipe-suite: $fails failure(s) in $((us / 1000000)) s"
[ "$fails" -eq 0 ]
