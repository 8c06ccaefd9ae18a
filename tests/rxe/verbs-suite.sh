#!/bin/bash
# verbs-suite.sh — the verbs modules' tests, inside the Soft-RoCE guest: `tests/rxe/vm-run.sh verbs-suite.sh`
# (meson test --suite rxe does that). Exits 0 when every check passed, 1 otherwise, 77 outside the VM.
#
# 1. Patterns over ibrc and ibuc (--ib-mode send and write), ibrc --ib-mode read and ibud, all ranks on
#    the one device rxe0:
#    pingpong with 2 and 4 ranks, 1n and n1 with 3, all with --verify over odd sizes around the eager
#    limit up to 1 MiB (ibud: up to its datagram limit, the MTU minus 40); mpbibw over ibrc with tiny
#    rings (flow control); bw over ibrc --ib-mode read. The JSON results are checked: complete, one row per size, the count, the
#    module and mode (none for ibud, which reads no --ib-mode), --verify on.
# 2. Faults: ibuc --ib-mode read (UC has no RDMA read) is refused; a size above ibud's limit, a wrong --ib-dev and --ib-gid 256 are refused (exit 2, the devices
#    named); --ib-sl/--ib-tclass run and are recorded; a server and a client whose GIDs are of other types or
#    families are refused naming both (device checks on the real device), while
#    without -s ibud measures the default sizes up to its limit; a
#    rank killed mid-run makes the survivor report the lost rank and exit non-zero within 10 s.
# 3. valgrind: a short ibrc run with no "definitely lost" block and no memory error.
# 4. perftest's ib_send_lat and ib_write_lat against ngauge's pingpong (ibrc send / write), side by side.
#    The guest is emulated: the figures show orders of magnitude, never performance.
# 4b. A peer stopped for good (SIGSTOP) after the first rows over ibrc send and write: the run ends within
#    --timeout + 5 s with exit 1, rank 0's line (the lost rank, or where it stood) and the rows kept ("stopped").
# 5. No device (rxe0 deleted): ngauge -x ibrc exits 1 and says how to get a Soft-RoCE device.
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment; NGAUGE_RXE_DEVICE and NGAUGE_RXE_GID_INDEX from
# vm-run.sh. NGAUGE_RXE_SUITE_QUICK=1 skips valgrind and perftest.
set -u
. "$(dirname "$0")/guest-lib.sh"

# vm-run.sh passes NGAUGE_* variables, so the binary is found through NGAUGE_BUILD too.
N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "verbs-suite.sh: set NGAUGE (the binary) or NGAUGE_BUILD (the build directory)" >&2; exit 1; }
dev=${NGAUGE_RXE_DEVICE:-rxe0}
gid=${NGAUGE_RXE_GID_INDEX:-1}
quick=${NGAUGE_RXE_SUITE_QUICK:-0}

if [ ! -e "/sys/class/infiniband/$dev" ]; then
    echo "verbs-suite.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-verbs.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fails=0
T0=$EPOCHREALTIME

# expect NAME REGEX: the stderr of run NAME matches REGEX (extended)
expect() {
    grep -Eq -- "$2" "$W/$1.err" || {
        fail "$1: stderr lacks /$2/"
        sed 's/^/  stderr| /' "$W/$1.err" | tail -n 10
    }
}

# ---- 1. patterns ---------------------------------------------------------------------------------------
# Odd sizes around the default eager limit (8K); from 8193 on rendezvous (RDMA write into the receive
# buffer), up to 1 MiB, which is slow under emulation: only in the two-rank ping-pong, 1 MiB or 1 MiB - 1.
big=1,3,17,255,1023,4097,8191,8193,65537
mid=1,17,4097,8193,65537
small=1,255,8193,65537
ud_max=$(( (128 << $(ibv_devinfo -d "$dev" -i 1 | sed -n 's/.*active_mtu:.*(\([0-9]\)).*/\1/p')) - 40 ))
[ "$ud_max" -gt 0 ] 2>/dev/null || ud_max=984
ud_sizes=1,3,17,255,$((ud_max - 1)),$ud_max

# --ib-poll yield: 2-4 spinning ranks on the guest's 2 vCPUs would starve the kernel's Soft-RoCE work
# (then every message waits for a scheduler tick); the spinning default is used in section 4.
common=(--timeout 10 -c 2 -w 1 --verify --ib-poll yield)
: >"$W/expect.txt"
# pattern RUN_NAME NP PATTERN SIZES -x MODULE --ib-mode MODE: one run; its JSON is checked below
pattern() {
    local name=$1 np=$2 pat=$3 sizes=$4
    shift 4
    local args=("$@")
    # ibud reads no --ib-mode, and an option no chosen module reads is refused: it is not given
    [ "$2" = ibud ] && args=("$1" "$2")
    if run "$name" 0 "$N" --np "$np" -p "$pat" -s "$sizes" "${common[@]}" -o "$W/$name.json" "${args[@]}"; then
        printf '%s %s %s %s %s %s\n' "$W/$name.json" "$2" "$4" "$pat" "$np" "$sizes" >>"$W/expect.txt"
    fi
}

for cfg in "ibrc send 1048576" "ibrc write 1048575" "ibrc read 1048577" "ibuc send 1048575" "ibuc write 1048576" \
    "ibud send"; do
    set -- $cfg
    mod=$1 mode=$2
    if [ "$mod" = ibud ]; then
        s_big=$ud_sizes s_mid=$ud_sizes s_small=1,255,$ud_max
    else
        s_big=$big,$3 s_mid=$mid s_small=$small
    fi
    pattern "$mod-$mode-pingpong-2" 2 pingpong "$s_big" -x "$mod" --ib-mode "$mode"
    pattern "$mod-$mode-pingpong-4" 4 pingpong "$s_small" -x "$mod" --ib-mode "$mode"
    pattern "$mod-$mode-1n-3" 3 1n "$s_mid" -x "$mod" --ib-mode "$mode"
    pattern "$mod-$mode-n1-3" 3 n1 "$s_mid" -x "$mod" --ib-mode "$mode"
done

# Flow control under pressure: 64 messages in flight each way (mpbibw) against 4-slot rings, most of them
# by rendezvous: credits, unexpected messages, the CTS window.
for mode in send write read; do
    pattern "ibrc-$mode-mpbibw-ring4" 2 mpbibw 1,63,65,8193 -x ibrc --ib-mode "$mode" --ib-ring 4 --ib-eager 64
done
# Read mode streaming: windows of notices and reads (bw), eager-sized and larger than a ring slot.
pattern "ibrc-read-bw-2" 2 bw 1,8,8193,65537 -x ibrc --ib-mode read

# Every result: complete, --verify on, one row per requested size with the requested count, the module.
python3 - "$W/expect.txt" <<'PY' || fail "JSON results (see above)"
import json, sys

def size_of(tok):
    mult = {"K": 1 << 10, "M": 1 << 20}
    return int(tok[:-1]) * mult[tok[-1]] if tok[-1] in mult else int(tok)

bad = 0
for line in open(sys.argv[1]):
    path, module, mode, pattern, np, sizes = line.split()
    want = [size_of(t) for t in sizes.split(",")]
    try:
        r = json.load(open(path))
        rows = r["results"]
        problems = []
        if r.get("complete") is not True: problems.append("not complete")
        if r["module"] != module or r["pattern"] != pattern: problems.append("module/pattern")
        if r["ranks"] != int(np): problems.append("ranks %s" % r["ranks"])
        if r["parameters"].get("verify") is not True: problems.append("--verify not recorded")
        # ibud reads no --ib-mode: its parameters do not hold it.
        if r["parameters"].get("ib-mode") != (None if module == "ibud" else mode):
            problems.append("ib-mode %r" % r["parameters"].get("ib-mode"))
        if [row["size"] for row in rows] != want: problems.append("sizes %s" % [row["size"] for row in rows])
        if any(row["count"] != 2 for row in rows): problems.append("counts")
        # Write mode is the rdma module's channel: its device names the RDMA layer's backend first.
        dev_prefix = "verbs rxe0 port 1 gid" if mode == "write" else "rxe0 port 1 gid"
        if not r["env"]["device"].startswith(dev_prefix): problems.append("device %r" % r["env"]["device"])
        for row in rows:
            lat = row.get("latency_us") or row.get("time_us")
            if not lat or not lat["min"] > 0: problems.append("no timing for size %d" % row["size"])
    except Exception as e:
        problems = ["unreadable: %s" % e]
    if problems:
        bad += 1
        print("FAIL: %s: %s" % (path.rsplit("/", 1)[-1], "; ".join(problems)))
n = sum(1 for _ in open(sys.argv[1]))
print("ok   %d JSON results checked%s" % (n, "" if not bad else ", %d bad" % bad))
sys.exit(1 if bad else 0)
PY

# ---- 2. faults -----------------------------------------------------------------------------------------
# Checks of the opened instance: the ranks agree, one of them says why, all exit 2 together.
once() { # NAME PATTERN: stderr holds PATTERN on exactly one line
    [ "$(grep -Ec -- "$2" "$W/$1.err")" = 1 ] || {
        fail "$1: /$2/ not on exactly one line of stderr"
        sed 's/^/  stderr| /' "$W/$1.err" | tail -n 10
    }
}
run ud-too-large 2 "$N" -x ibud -p pingpong -s $((ud_max + 1)) -c 1 &&
    once ud-too-large "above the maximum of module 'ibud' \($ud_max bytes( on this device)?\)"
# Without -s the default sizes stop at ibud's limit on this device (the MTU minus 40), with one note.
if run ud-default-sizes 0 "$N" --np 2 -x ibud -p pingpong -c 2 -w 1 --timeout 10 --ib-poll yield \
    -o "$W/ud-default.json"; then
    once ud-default-sizes "note: sizes stop at $ud_max bytes, the largest message of module 'ibud'"
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); s = [x["size"] for x in r["results"]]; m = int(sys.argv[2])
want = [2 ** k for k in range(20) if 2 ** k < m] + [m]
sys.exit(0 if r["complete"] and s == want and all(x["latency_us"]["min"] > 0 for x in r["results"]) else 1)' \
        "$W/ud-default.json" "$ud_max" || fail "ud-default-sizes: sizes are not 1 .. $ud_max: $(head -c 300 "$W/ud-default.json")"
fi
run emu-lacking 2 "$N" -x emu --emu-base ibuc -p loggp -s 1 -c 1 &&
    once emu-lacking "pattern 'loggp' needs reliable delivery, which module 'emu' does not offer here"
run ibuc-read 2 "$N" --np 2 -x ibuc --ib-mode read -p pingpong -s 8 -c 1 &&
    expect ibuc-read "ibuc: --ib-mode read needs RDMA read, which unreliable connections lack"
run wrong-dev 2 "$N" -x ibrc -p pingpong -s 1 -c 1 --ib-dev nosuch0 &&
    expect wrong-dev "nosuch0.*no such RDMA device.*devices: .*$dev"

# Device checks on the real device (the decisions themselves: tests/unit/test_ibv_check.c). --ib-gid above 255
# is refused before anything opens; --ib-sl and --ib-tclass reach the addresses and the result; ranks whose
# GIDs cannot reach each other (another type, another family) are refused with both ranks' values, here by a
# server and a client given different --ib-gid (the server adds its own options to the client's).
run gid-range 2 "$N" -x ibrc -p pingpong -s 1 -c 1 --ib-gid 256 && expect gid-range "ib-gid.*between 0 and 255"
for m in ibrc ibud; do
    if run "$m-sl-tclass" 0 "$N" --np 2 -x $m -p pingpong -s 1,255 -c 2 -w 1 --verify --timeout 10 --ib-poll yield \
        --ib-sl 3 --ib-tclass 32 -o "$W/$m-sl.json"; then
        python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["parameters"]
sys.exit(0 if p.get("ib-sl") == 3 and p.get("ib-tclass") == 32 else 1)' "$W/$m-sl.json" ||
            fail "$m-sl-tclass: ib-sl/ib-tclass not recorded: $(head -c 400 "$W/$m-sl.json")"
    fi
done
run rdma-sl-tclass 0 "$N" --np 2 -x rdma --rdma-backend verbs -p pingpong -s 1,8193 -c 2 -w 1 --verify \
    --timeout 10 --rdma-poll yield --ib-sl 2 --ib-tclass 8
gdir=/sys/class/infiniband/$dev/ports/1
g_v1= g_v2six=
# (bash's read, not cat: the table has hundreds of entries, and a fork costs a lot in the emulated guest)
for f in "$gdir"/gids/*; do
    i=${f##*/}
    read -r g <"$f" 2>/dev/null || continue
    [ "$g" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
    t=
    read -r t <"$gdir/gid_attrs/types/$i" 2>/dev/null
    case "$t" in
    *"RoCE v1"*) [ -n "$g_v1" ] || g_v1=$i ;;
    "RoCE v2") case $g in 0000:0000:0000:0000:0000:ffff:*) ;; *) [ -n "$g_v2six" ] || g_v2six=$i ;; esac ;;
    esac
done
# peer_gids NAME SERVER_GID CLIENT_GID REGEX: the client (rank 0) names the mismatch; both end non-zero
peer_gids() {
    local name=$1 sg=$2 cg=$3 port=$((18700 + RANDOM % 200)) spid
    # the server's own --ib-gid needs its module named (an option no chosen module reads is refused)
    "$N" --server --once --port $port -x ibrc --ib-gid "$sg" >"$W/$name.server" 2>&1 &
    spid=$!
    if ! wait_listen $port $spid; then
        fail "$name: the server did not listen: $(tail -n 3 "$W/$name.server")"
        wait $spid
        return
    fi
    run "$name" nz "$N" --client 127.0.0.1 --port $port -x ibrc -p pingpong -s 1 -c 1 --timeout 10 \
        --ib-poll yield --ib-gid "$cg" && expect "$name" "$4"
    timeout 20 tail --pid=$spid -f /dev/null
    kill $spid 2>/dev/null
    wait $spid
}
if [ -n "$g_v1" ]; then
    peer_gids peer-gid-type "$g_v1" "$gid" "rank 1 uses a RoCE v1 GID \(index $g_v1\), rank 0 a RoCE v2 GID \(index $gid\)"
else
    echo "note: $dev has no RoCE v1 GID: the type mismatch is checked by the unit test only"
fi
if [ -n "$g_v2six" ]; then
    peer_gids peer-gid-family "$g_v2six" "$gid" "rank 1's GID \(index $g_v2six\) is an IPv6 address, rank 0's \(index $gid\) an IPv4 one"
else
    echo "note: $dev has no IPv6 RoCE v2 GID: the family mismatch is checked by the unit test only"
fi

# kill_peer NAME SIZES MODULE_ARGS...: a long ping-pong; once it measures, SIGKILL the last rank. The
# survivor must name the lost rank itself (not only the launcher), and all must end within 10 s of the kill.
kill_peer() {
    local name=$1 sizes=$2 hub kids k victim start us rc i
    shift 2
    "$N" --np 2 -p pingpong -s "$sizes" -c 1000000 -w 0 --timeout 3 --ib-poll yield "$@" \
        >"$W/$name.out" 2>"$W/$name.err" &
    hub=$!
    for ((i = 0; i < 300; i++)); do
        grep -q '^#' "$W/$name.out" 2>/dev/null && break
        sleep 0.1
    done
    sleep 1
    kids=$(pgrep -P "$hub")
    victim=
    for k in $kids; do victim=$k; done
    if [ -z "$victim" ]; then
        fail "$name: no rank process to kill (hub $hub)"
        kill "$hub" 2>/dev/null
        wait "$hub"
        return
    fi
    kill -KILL "$victim"
    start=$EPOCHREALTIME
    for ((i = 0; i < 150; i++)); do
        kill -0 "$hub" 2>/dev/null || break
        sleep 0.1
    done
    us=$(usecs "$start")
    if kill -0 "$hub" 2>/dev/null; then
        fail "$name: still running 15 s after a rank was killed"
        kill -KILL "$hub" $kids 2>/dev/null
    fi
    wait "$hub"
    rc=$?
    if [ "$rc" = 0 ] || [ "$us" -gt 10000000 ]; then
        fail "$name: exit $rc $((us / 1000)) ms after the kill (want non-zero within 10 s)"
    else
        printf 'ok   %-34s exit %-3s %5d.%d s after the kill\n' "$name" "$rc" $((us / 1000000)) \
            $((us % 1000000 / 100000))
    fi
    grep -Eq 'rank [0-9]+: ib[a-z]+: rank [0-9]+ lost' "$W/$name.err" || {
        fail "$name: the surviving rank did not report the lost peer"
        sed 's/^/  stderr| /' "$W/$name.err" | tail -n 10
    }
}
kill_peer kill-ibrc-send 1,4097,65537 -x ibrc
kill_peer kill-ibuc-write 1,4097,65537 -x ibuc --ib-mode write
kill_peer kill-ibud 1,512 -x ibud

# ---- 3. valgrind ---------------------------------------------------------------------------------------
# One run (valgrind starts slowly under emulation): eager and rendezvous messages of ibrc, which shares the
# verbs core with the others. Only "definitely lost" counts: libibverbs keeps caches "still reachable".
if [ "$quick" != 1 ] && command -v valgrind >/dev/null; then
    run valgrind-ibrc 0 valgrind -q --leak-check=full --undef-value-errors=no --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --error-exitcode=9 \
        "$N" --np 2 -x ibrc -p pingpong -s 1,65537 -c 2 -w 0 --verify --timeout 60 --ib-poll yield
    if grep -q 'definitely lost' "$W/valgrind-ibrc.err"; then
        fail "valgrind-ibrc: valgrind reports definitely lost memory"
        grep -A12 'definitely lost' "$W/valgrind-ibrc.err" | head -n 40
    fi
elif [ "$quick" != 1 ]; then
    fail "valgrind is not installed"
fi

# ---- 4. perftest side by side --------------------------------------------------------------------------

# perftest NAME PORT TOOL SIZE: runs TOOL as server and client; prints t_typical (us) or "-"
perftest() {
    local name=$1 port=$2 tool=$3 size=$4 spid crc
    timeout 60 "$tool" -d "$dev" -x "$gid" -n 100 -s "$size" -F -p "$port" >"$W/$name.server" 2>&1 &
    spid=$!
    if ! wait_listen "$port" "$spid"; then
        wait "$spid"
        echo "-"
        return 1
    fi
    timeout 60 "$tool" -d "$dev" -x "$gid" -n 100 -s "$size" -F -p "$port" 127.0.0.1 >"$W/$name.client" 2>&1
    crc=$?
    wait "$spid"
    [ "$crc" = 0 ] || { echo "-"; return 1; }
    # #bytes #iterations t_min t_max t_typical ...
    awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print $5; found = 1 } END { if (!found) print "-" }' \
        "$W/$name.client"
}

if [ "$quick" != 1 ] && command -v ib_send_lat >/dev/null; then
    sizes=(8 4096)
    run lat-ibrc-send 0 "$N" --np 2 -x ibrc -p pingpong -s 8,4096 -c 100 -w 10 --timeout 30 -o "$W/lat-send.json"
    run lat-ibrc-write 0 "$N" --np 2 -x ibrc --ib-mode write -p pingpong -s 8,4096 -c 100 -w 10 --timeout 30 \
        -o "$W/lat-write.json"
    port=18600
    declare -A pt
    for s in "${sizes[@]}"; do
        for tool in ib_send_lat ib_write_lat; do
            pt[$tool.$s]=$(perftest "$tool-$s" $port "$tool" "$s") || fail "$tool -s $s did not run"
            port=$((port + 1))
        done
    done
    echo
    echo "Latency (us, half round trip, median / perftest t_typical) on emulated Soft-RoCE: compare orders"
    echo "of magnitude only."
    python3 - "$W/lat-send.json" "$W/lat-write.json" "${pt[ib_send_lat.8]}" "${pt[ib_write_lat.8]}" \
        "${pt[ib_send_lat.4096]}" "${pt[ib_write_lat.4096]}" <<'PY' || fail "side-by-side table"
import json, sys
def med(path, size):
    try:
        return "%.1f" % next(r["latency_us"]["median"] for r in json.load(open(path))["results"] if r["size"] == size)
    except Exception:
        return "-"
send, write = sys.argv[1], sys.argv[2]
pt = {(8, "send"): sys.argv[3], (8, "write"): sys.argv[4], (4096, "send"): sys.argv[5], (4096, "write"): sys.argv[6]}
print("  %6s  %16s  %14s  %17s  %14s" % ("bytes", "ngauge ibrc send", "ib_send_lat", "ngauge ibrc write", "ib_write_lat"))
for s in (8, 4096):
    print("  %6d  %16s  %14s  %17s  %14s" % (s, med(send, s), pt[(s, "send")], med(write, s), pt[(s, "write")]))
PY
    echo
elif [ "$quick" != 1 ]; then
    fail "perftest (ib_send_lat) is not installed"
fi

# ---- 4b. a peer stopped for good: the run ends within --timeout + 5 s (doc/validation.md) ---------------
# A rank stopped with SIGSTOP after the first rows: the verbs core counts it lost, or, where its queue pair
# still answers, the run's watchdog ends rank 0 (exit 1, either's line, the rows kept with "stopped").
for mode in send write; do
    rm -f "$W/hang-$mode.json"
    "$N" -x ibrc --ib-mode $mode --ib-poll yield -p pingpong -s 1-2K:+8 -c 20 -w 1 --timeout 2 \
        -o "$W/hang-$mode.json" >"$W/hang-$mode.out" 2>"$W/hang-$mode.err" &
    pid=$!
    for _ in $(seq 600); do
        [ -s "$W/hang-$mode.json" ] && grep -q '"size"' "$W/hang-$mode.json" && break
        sleep 0.1
    done
    ranks=($(pgrep -P $pid))
    start=$EPOCHREALTIME
    if [ -n "${ranks[1]:-}" ] && kill -STOP "${ranks[1]}"; then
        for _ in $(seq 150); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
        kill -0 $pid 2>/dev/null && kill -9 "${ranks[@]}" $pid 2>/dev/null
        wait $pid
        rc=$?
        us=$(usecs "$start")
        kill -9 "${ranks[1]}" 2>/dev/null
        if [ "$rc" = 1 ] && [ "$us" -le 7000000 ] && grep -Eq "rank 0: .*(no progress for .*waiting in|rank 1|lost)" "$W/hang-$mode.err" &&
            python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["complete"] is False and r["stopped"] and r["results"] else 1)' "$W/hang-$mode.json"; then
            printf 'ok   %-34s exit %-3s %5d.%d s\n' "stopped-for-good-$mode" "$rc" $((us / 1000000)) $((us % 1000000 / 100000))
        else
            fail "stopped for good ($mode): exit $rc after $((us / 1000)) ms (--timeout 2): $(tail -3 "$W/hang-$mode.err")"
        fi
    else
        fail "stopped for good ($mode): no row or no rank 1 to stop: $(tail -3 "$W/hang-$mode.err")"
        kill -9 $pid 2>/dev/null; wait $pid
    fi
done

# ---- 5. no device --------------------------------------------------------------------------------------
if rdma link delete "$dev" 2>"$W/rdma-del.err"; then
    run no-device 1 "$N" -x ibrc -p pingpong -s 1 -c 1 &&
        expect no-device "no RDMA device found.*rdma link add rxe0 type rxe netdev"
    # The message is printed once, not by every rank.
    [ "$(grep -c 'no RDMA device found' "$W/no-device.err")" = 1 ] || fail "no-device: message not printed once"
else
    fail "rdma link delete $dev: $(cat "$W/rdma-del.err")"
fi

us=$(usecs "$T0")
echo "verbs-suite.sh: $fails failure(s), $((us / 1000000)) s"
[ "$fails" = 0 ]
