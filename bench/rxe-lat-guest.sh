#!/bin/bash
# Inside the Soft-RoCE guest (bench/rxe_lat_bench.sh boots it): 8-byte latency of the write channel, of
# ibrc's send mode and of its read mode against perftest, interleaved in one boot. Each round runs, one
# after the other,
#   ib_write_lat | rdma --rdma-backend verbs | ibrc --ib-mode write | ib_send_lat | ibrc (send mode)
#   | ib_read_lat | ibrc --ib-mode read
# with COUNT round trips each; perftest's t_typical of ib_write_lat and ib_send_lat and ngauge's median are
# half a round trip; ib_read_lat's is one read (a request and its response), while ibrc's read mode delivers
# a message with a notice and a read (a half round trip of a ping-pong is a one-way notice plus a read). The
# medians over ROUNDS rounds are compared: rdma/verbs and ibrc write within 1.15x of ib_write_lat, ibrc send
# within 1.1x of ib_send_lat, ibrc read within 1.25x of ib_read_lat; every round prints its own ratios too. The device is emulated: only the ratios
# mean anything. Unpinned, a run's median moves between two levels (16 and 28 us on one host, whichever tool
# runs); NGAUGE_RXE_LAT_PIN=yes (what the issue's figures use) pins both tools alike, as perftest is run:
# the timing side (perftest's client, ngauge's rank 0) on vCPU 0, the answering side (perftest's server,
# ngauge's rank 1) on vCPU 1.
#
#   rxe-lat-guest.sh ROUNDS COUNT [NGAUGE OPTION...]
set -u
. "$(dirname "$0")/../tests/rxe/guest-lib.sh"
N=${NGAUGE:-${NGAUGE_BUILD:?}/ngauge}
dev=${NGAUGE_RXE_DEVICE:-rxe0}
gid=${NGAUGE_RXE_GID_INDEX:-1}
rounds=${1:-7}
count=${2:-2000}
shift 2
W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-rxelat.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
port=18800
pin_srv=() pin_cli=() pin_ng=()
if [ "${NGAUGE_RXE_LAT_PIN:-no}" = yes ]; then
	pin_srv=(taskset -c 1) pin_cli=(taskset -c 0) pin_ng=(--pin 0,1)
fi

# perftest TOOL: half round trip (t_typical, us) of 8-byte messages
perftest() {
	local spid
	port=$((port + 1))
	timeout 120 "${pin_srv[@]}" "$1" -d "$dev" -x "$gid" -n "$count" -s 8 -F -p "$port" >"$W/srv" 2>&1 &
	spid=$!
	wait_listen "$port" "$spid" || return 1
	timeout 120 "${pin_cli[@]}" "$1" -d "$dev" -x "$gid" -n "$count" -s 8 -F -p "$port" 127.0.0.1 >"$W/cli" 2>&1 ||
		return 1
	wait "$spid"
	awk '$1 == 8 && $2 ~ /^[0-9]+$/ { print $5; f = 1 } END { exit !f }' "$W/cli"
}
# ng MODULE-ARGS...: median half round trip (us) of ngauge's ping-pong at 8 bytes
ng() {
	timeout 120 "$N" -p pingpong -s 8 -c "$count" -w 200 "${pin_ng[@]}" -o "$W/ng.json" "$@" >/dev/null 2>"$W/ng.err" ||
		{ sed 's/^/    /' "$W/ng.err" >&2; return 1; }
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["latency_us"]["median"])' "$W/ng.json"
}

names=(ib_write_lat rdma-verbs ibrc-write ib_send_lat ibrc-send ib_read_lat ibrc-read)
for r in $(seq "$rounds"); do
	v=("$(perftest ib_write_lat)" "$(ng -x rdma --rdma-backend verbs "$@")" "$(ng -x ibrc --ib-mode write "$@")"
		"$(perftest ib_send_lat)" "$(ng -x ibrc "$@")" "$(perftest ib_read_lat)" "$(ng -x ibrc --ib-mode read "$@")")
	line="round $r:"
	for i in "${!names[@]}"; do
		[ -n "${v[$i]}" ] || { echo "${names[$i]} failed in round $r"; exit 1; }
		echo "${v[$i]}" >>"$W/${names[$i]}"
		line="$line ${names[$i]} ${v[$i]}"
	done
	line="$line | ratios: rdma-verbs $(awk -v a="${v[1]}" -v b="${v[0]}" 'BEGIN { printf "%.3f", a / b }')"
	line="$line ibrc-write $(awk -v a="${v[2]}" -v b="${v[0]}" 'BEGIN { printf "%.3f", a / b }')"
	line="$line ibrc-send $(awk -v a="${v[4]}" -v b="${v[3]}" 'BEGIN { printf "%.3f", a / b }')"
	line="$line ibrc-read $(awk -v a="${v[6]}" -v b="${v[5]}" 'BEGIN { printf "%.3f", a / b }')"
	echo "$line"
done
python3 - "$W" <<'PY'
import statistics, sys
d = sys.argv[1]
m = {n: statistics.median(float(x) for x in open(f"{d}/{n}")) for n in
     ("ib_write_lat", "rdma-verbs", "ibrc-write", "ib_send_lat", "ibrc-send", "ib_read_lat", "ibrc-read")}
bad = 0
for name, ref, limit in (("rdma-verbs", "ib_write_lat", 1.15), ("ibrc-write", "ib_write_lat", 1.15),
                         ("ibrc-send", "ib_send_lat", 1.10), ("ibrc-read", "ib_read_lat", 1.25)):
    ratio = m[name] / m[ref]
    ok = ratio <= limit
    bad += not ok
    print(f"{name:11s} {m[name]:8.2f} us against {ref} {m[ref]:8.2f} us: ratio {ratio:.3f} "
          f"({'within' if ok else 'NOT within'} {limit}x)")
sys.exit(1 if bad else 0)
PY
