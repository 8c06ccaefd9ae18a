#!/bin/bash
# bw-suite.sh — the streaming bandwidth patterns over the verbs modules, inside the Soft-RoCE guest:
# `tests/rxe/vm-run.sh bw-suite.sh` (meson test --suite rxe does that). Exits 0 when every check passed, 1
# otherwise, 77 outside the VM.
#
# bw and bibw with --verify over ibrc and ibuc (--ib-mode send and write) and ibud (sizes up to its
# datagram limit), all ranks on the one device rxe0: eager and
# rendezvous sizes, a window of 64 (more messages than the 32-slot rings: credits and unexpected messages)
# and pairs with 4 ranks. The JSON results are checked
# on content: every message of every window counted and verified by the receivers, the bytes, one row per
# size with its count, bandwidth and message rate consistent with the window time, the device.
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment; NGAUGE_RXE_DEVICE from vm-run.sh.
set -u

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "bw-suite.sh: set NGAUGE (the binary) or NGAUGE_BUILD (the build directory)" >&2; exit 1; }
dev=${NGAUGE_RXE_DEVICE:-rxe0}
if [ ! -e "/sys/class/infiniband/$dev" ]; then
    echo "bw-suite.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-bw.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fails=0
T0=$EPOCHREALTIME
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# The datagram limit of ibud: the active MTU less the 40-byte GRH.
ud_max=$(( (128 << $(ibv_devinfo -d "$dev" -i 1 | sed -n 's/.*active_mtu:.*(\([0-9]\)).*/\1/p')) - 40 ))
[ "$ud_max" -gt 0 ] 2>/dev/null || ud_max=984

# --ib-poll yield: spinning ranks on the guest's 2 vCPUs would starve the kernel's Soft-RoCE work.
common=(--timeout 20 -c 2 -w 1 --verify --raw --ib-poll yield)
: >"$W/expect.txt"

# bwrun NAME NP PATTERN WINDOW SIZES ARGS...: one run, checked below.
bwrun() {
    local name=$1 np=$2 pat=$3 win=$4 sizes=$5 rc start=$EPOCHREALTIME us
    shift 5
    local args=("$@")
    # ibud reads no --ib-mode, and an option no chosen module reads is refused: it is not given
    [ "$2" = ibud ] && args=("$1" "$2")
    timeout -k 5 120 "$N" --np "$np" -p "$pat" --bw-window "$win" -s "$sizes" "${common[@]}" \
        -o "$W/$name.json" "${args[@]}" >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    us=$((${EPOCHREALTIME/./} - ${start/./}))
    if [ "$rc" != 0 ]; then
        fail "$name: exit $rc: $*"
        sed 's/^/  stderr| /' "$W/$name.err" | tail -n 10
        return
    fi
    printf 'ok   %-28s %5d.%d s\n' "$name" $((us / 1000000)) $((us % 1000000 / 100000))
    echo "$W/$name.json $pat $np $win $sizes $*" >>"$W/expect.txt"
}

mid=1,17,4097,8193,65537
for cfg in "ibrc send" "ibrc write" "ibuc send" "ibuc write" "ibud send"; do
    set -- $cfg
    sizes=$mid win=64
    [ "$1" = ibud ] && sizes=1,17,255,$((ud_max - 1)),$ud_max
    # UC and UD drop what finds no room; 16 in flight keep this short under emulation
    [ "$1" != ibrc ] && win=16
    for p in bw bibw; do
        bwrun "$1-$2-$p" 2 $p $win $sizes -x "$1" --ib-mode "$2"
    done
done
bwrun ibrc-send-bw-4 4 bw 8 1,65537 -x ibrc --ib-mode send
bwrun ibrc-send-bibw-4 4 bibw 8 1,65537 -x ibrc --ib-mode send

python3 - "$W/expect.txt" <<'PY' || fail "JSON results (see above)"
import json, sys

def med(v):
    v, n = sorted(v), len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2

bad = 0
lines = open(sys.argv[1]).read().split("\n")
for line in filter(None, lines):
    f = line.split()
    path, pattern, np, w, sizes, module, mode = f[0], f[1], int(f[2]), int(f[3]), f[4], f[6], f[8]
    want = [int(x) for x in sizes.split(",")]
    dirs, pairs = (2 if pattern == "bibw" else 1), np // 2
    problems = []
    try:
        r = json.load(open(path))
        rows = r["results"]
        if r.get("complete") is not True: problems.append("not complete")
        if (r["module"], r["pattern"], r["ranks"]) != (module, pattern, np): problems.append("module/pattern/ranks")
        # ibud reads no --ib-mode: its parameters have none.
        if r["parameters"].get("ib-mode") != (None if module == "ibud" else mode): problems.append("ib-mode")
        if r["bw"]["window"] != w or r["bw"]["pairs"] != pairs: problems.append("bw block %r" % r["bw"])
        # Write mode is the rdma module's channel: its device names the RDMA layer's backend first.
        dev_prefix = "verbs rxe0 port 1 gid" if mode == "write" else "rxe0 port 1 gid"
        if not r["env"]["device"].startswith(dev_prefix): problems.append("device %r" % r["env"]["device"])
        if [x["size"] for x in rows] != want: problems.append("sizes %s" % [x["size"] for x in rows])
        for x in rows:
            s, msgs = x["size"], pairs * dirs * w * 3
            if (x["count"], x["warmup"]) != (2, 1): problems.append("counts at %d" % s)
            if x["messages"] != msgs or x["verified"] != msgs or x["bytes"] != msgs * s:
                problems.append("size %d: %s messages, %s verified, %s bytes (want %d)"
                                % (s, x["messages"], x["verified"], x["bytes"], msgs))
            raw = x["raw"]["time_us"]
            if len(raw) != 2 * pairs or min(raw) <= 0: problems.append("raw times at %d" % s)
            elif abs(x["bandwidth_MBps"]["median"] / med([dirs * w * s / t for t in raw]) - 1) > 1e-9:
                problems.append("bandwidth at %d is not the windows' bytes over their times" % s)
            if not x["messages_per_s"]["median"] > 0: problems.append("message rate at %d" % s)
    except Exception as e:
        problems.append("unreadable: %r" % e)
    if problems:
        bad += 1
        print("FAIL: %s: %s" % (path.rsplit("/", 1)[-1], "; ".join(problems)))
n = len(list(filter(None, lines)))
print("ok   %d JSON results checked%s" % (n, "" if not bad else ", %d bad" % bad))
sys.exit(1 if bad or n == 0 else 0)
PY

us=$((${EPOCHREALTIME/./} - ${T0/./}))
echo "bw-suite.sh: $fails failure(s), $((us / 1000000)) s"
[ "$fails" = 0 ]
