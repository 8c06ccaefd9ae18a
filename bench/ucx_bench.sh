#!/bin/bash
# The ucx module against UCX's own benchmark over UCX_TLS=sm,self (doc/ucx.md): ngauge -x ucx pingpong at 8 B
# against ucx_perftest -t tag_lat (both: the median half round trip, us), and bw at 1 MiB against -t tag_bw
# (MB/s, 10^6 bytes; ucx_perftest prints 2^20-byte MB, converted), in interleaved rounds (ngauge, ucx_perftest,
# ngauge, ...), both programs' ranks pinned to CPUs 0 and 1.  Prints each round, the ratio of the medians over
# the rounds (ngauge / ucx_perftest), and ucx_perftest's own spread between its rounds ((max - min) / median),
# which is what "agrees" can mean on this machine: a ratio within 1 +- that spread.
# Rounds: NGAUGE_UCX_ROUNDS (5); iterations: NGAUGE_UCX_LAT_N (20000), NGAUGE_UCX_BW_N (200).
# Skipped (77) without the ucx module or ucx_perftest (Debian: ucx-utils).
. "$(dirname "$0")/lib.sh" ucx

"$NGAUGE" --list 2>/dev/null | grep -q '^  ucx .*UCP' || { echo "built without UCX: skipped"; exit 77; }
command -v ucx_perftest >/dev/null || { echo "ucx_perftest not installed (ucx-utils): skipped"; exit 77; }

export UCX_TLS=sm,self
R=${NGAUGE_UCX_ROUNDS:-5}
LAT_N=${NGAUGE_UCX_LAT_N:-20000}
BW_N=${NGAUGE_UCX_BW_N:-200}
. "$(dirname "$0")/ucx_perftest.sh"

# ngauge_med PATTERN SIZE COUNT KEY: one ngauge run, the median of KEY of its one row.
ngauge_med() {
	timeout -k 5 300 "$NGAUGE" --np 2 --pin 0,1 -x ucx -p "$1" -s "$2" -c "$3" -w $(($3 / 10)) -o "$T/r.json" \
		>"$T/out" 2>"$T/err" || { echo "nan"; return; }
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0][sys.argv[2]]["median"])' \
		"$T/r.json" "$4"
}

lat_ng=() lat_pt=() bw_ng=() bw_pt=()
printf '%-6s %14s %14s %16s %16s\n' round "ngauge 8B us" "perftest 8B us" "ngauge 1M MB/s" "perftest 1M MB/s"
for r in $(seq "$R"); do
	a=$(ngauge_med pingpong 8 "$LAT_N" latency_us)
	b=$(perftest tag_lat 8 "$LAT_N" | awk '{print $2}')
	c=$(ngauge_med bw 1M "$BW_N" bandwidth_MBps)
	# tag_bw with 64 sends outstanding, as ngauge's bw window
	d=$(perftest tag_bw 1048576 "$BW_N" -O 64 | awk '{printf "%.1f", $5 * 1.048576}')
	lat_ng+=("$a") lat_pt+=("$b") bw_ng+=("$c") bw_pt+=("$d")
	printf '%-6s %14s %14s %16s %16s\n' "$r" "$a" "$b" "$c" "$d"
done

python3 - "${lat_ng[*]}" "${lat_pt[*]}" "${bw_ng[*]}" "${bw_pt[*]}" <<'EOF'
import math, statistics, sys
def nums(s):
    return [float(x) for x in s.split() if x not in ("", "nan") and math.isfinite(float(x))]
for what, a, b in (("pingpong 8 B vs tag_lat (us)", sys.argv[1], sys.argv[2]),
                   ("bw 1 MiB vs tag_bw (MB/s)", sys.argv[3], sys.argv[4])):
    a, b = nums(a), nums(b)
    if not a or not b:
        print(f"{what}: no figures (a run failed)")
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    spread = (max(b) - min(b)) / mb if mb else float("nan")
    ratio = ma / mb if mb else float("nan")
    verdict = "within" if abs(ratio - 1) <= spread else "outside"
    print(f"{what}: ngauge median {ma:.4g}, ucx_perftest median {mb:.4g}, ratio {ratio:.3f}; "
          f"ucx_perftest's spread between rounds {100 * spread:.1f}%: the ratio is {verdict} it")
EOF
