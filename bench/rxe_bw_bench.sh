#!/bin/bash
# ngauge's bw pattern over the verbs modules against perftest in the Soft-RoCE guest, 64 KiB messages:
# `-x ibrc -p bw` against ib_send_bw and `-x ibrc --ib-mode write -p bw` against ib_write_bw, 3 interleaved
# rounds in one boot, ratios printed.  Run it through the guest harness:
#
#   tests/rxe/vm-run.sh --timeout 300 bench/rxe_bw_bench.sh [ROUNDS] [SIZE]
#
# (meson test --benchmark --suite bench rxe-bw does that).  The guest is emulated: only the ratio of two
# figures taken in one boot means anything.  Like with like: both poll for completions (ngauge's spinning
# default, perftest's default), both stream from one buffer per side, and both figures are all bytes over
# all the time (perftest's "BW average", converted from its 2^20-byte MB; ngauge's window x size over the
# mean window time), in MB = 10^6 bytes; ngauge's median per-window bandwidth is printed beside it.
# Must hold: ibrc send within 10% of ib_send_bw (exit 1 otherwise); write mode is printed.  Exit 77
# outside the guest or without perftest.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/rxe/guest-lib.sh"

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "rxe_bw_bench.sh: set NGAUGE or NGAUGE_BUILD" >&2; exit 1; }
rounds=${1:-3}
size=${2:-65536}
dev=${NGAUGE_RXE_DEVICE:-rxe0}
gid=${NGAUGE_RXE_GID_INDEX:-1}
[ -e "/sys/class/infiniband/$dev" ] || { echo "no verbs device $dev (run me through tests/rxe/vm-run.sh): skipped"; exit 77; }
command -v ib_send_bw >/dev/null && command -v ib_write_bw >/dev/null ||
    { echo "perftest (ib_send_bw, ib_write_bw) is not installed: skipped"; exit 77; }

W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-rxebw.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
port=18700

# perftest TOOL: BW average of one server + client run in 10^6 bytes/s, or nothing
perftest() {
    local tool=$1 spid
    port=$((port + 1))
    timeout 120 "$tool" -d "$dev" -x "$gid" -s "$size" -F -p "$port" >"$W/server" 2>&1 &
    spid=$!
    wait_listen "$port" "$spid" || { wait "$spid"; return 1; }
    timeout 120 "$tool" -d "$dev" -x "$gid" -s "$size" -F -p "$port" 127.0.0.1 >"$W/client" 2>&1
    wait "$spid"
    # #bytes #iterations BW_peak[MB/sec] BW_average[MB/sec] MsgRate[Mpps]; perftest's MB is 2^20 bytes
    awk -v s="$size" '$1 == s && NF >= 5 { printf "%.4f\n", $4 * 1.048576 }' "$W/client"
}

# ngauge MODE: "BYTES/MEAN_TIME MEDIAN" of one bw run (MB/s), or nothing
ngauge() {
    "$N" --np 2 -x ibrc --ib-mode "$1" -p bw -s "$size" --timeout 60 -o "$W/ng.json" >/dev/null 2>"$W/ng.err" ||
        { sed 's/^/  ngauge: /' "$W/ng.err" | tail -n 3 >&2; return 1; }
    python3 -c 'import json, sys
x = json.load(open(sys.argv[1]))["results"][0]
print("%.4f %.4f" % (x["window"] * x["size"] / x["time_us"]["mean"], x["bandwidth_MBps"]["median"]))' "$W/ng.json"
}

modes="send write"
for r in $(seq "$rounds"); do
    for m in $modes; do
        tool=ib_send_bw
        [ "$m" = write ] && tool=ib_write_bw
        ngauge "$m" >>"$W/ng-$m" || echo "round $r: ngauge ibrc --ib-mode $m failed"
        perftest "$tool" >>"$W/pt-$m" || echo "round $r: $tool failed"
    done
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
bad=0
echo "bw at $size B on emulated Soft-RoCE ($rounds interleaved rounds in one boot), MB = 10^6 bytes:"
for m in $modes; do
    tool=ib_send_bw
    [ "$m" = write ] && tool=ib_write_bw
    ng=$(cut -d' ' -f1 "$W/ng-$m" 2>/dev/null | median)
    ngmed=$(cut -d' ' -f2 "$W/ng-$m" 2>/dev/null | median)
    pt=$(median <"$W/pt-$m" 2>/dev/null)
    if [ -z "$ng" ] || [ -z "$pt" ]; then
        echo "  ibrc $m: no figures"
        bad=1
        continue
    fi
    ratio=$(awk -v a="$ng" -v b="$pt" 'BEGIN { printf "%.4f", a / b }')
    printf "  ngauge -x ibrc --ib-mode %-5s -p bw %9.2f MB/s (median %9.2f)  %-11s %9.2f MB/s  ratio %s\n" \
        "$m" "$ng" "$ngmed" "$tool" "$pt" "$ratio"
    printf "    rounds: ngauge %s| %s %s\n" "$(cut -d' ' -f1 "$W/ng-$m" | tr '\n' ' ')" "$tool" "$(tr '\n' ' ' <"$W/pt-$m")"
    if [ "$m" = send ] && awk -v q="$ratio" 'BEGIN { exit !(q > 1.10 || q < 0.90) }'; then
        echo "  ibrc send is NOT within 10% of ib_send_bw"
        bad=1
    fi
done
[ "$bad" = 0 ]
