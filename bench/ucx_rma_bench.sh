#!/bin/bash
# The RDMA layer's ucx backend against UCX's own put benchmark over UCX_TLS=sm,self (doc/rdma.md): ngauge -x rdma
# --rdma-backend ucx pingpong at 8 B (each message one notified put into the peer's ring: the body, the endpoint's
# flush, the notice word; the median half round trip, us) against ucx_perftest -t ucp_put_lat at 8 B (puts whose
# last byte the peer polls; its half round trip, us), in interleaved rounds (ngauge, ucx_perftest, ngauge, ...),
# both programs' ranks pinned to CPUs 0 and 1.  Prints each round, the ratio of the medians over the rounds
# (ngauge / ucx_perftest) and ucx_perftest's own spread between its rounds ((max - min) / median).  The ratio is
# the cost of the layer and the channel (tickets, the ring's header and credits, the flush before each notice)
# over a bare put.
# Rounds: NGAUGE_UCX_ROUNDS (5); iterations: NGAUGE_UCX_LAT_N (20000).
# Skipped (77) without UCX (no ucx module) or ucx_perftest (Debian: ucx-utils).
. "$(dirname "$0")/lib.sh" ucx

"$NGAUGE" --list 2>/dev/null | grep -q '^  ucx .*UCP' || { echo "built without UCX: skipped"; exit 77; }
command -v ucx_perftest >/dev/null || { echo "ucx_perftest not installed (ucx-utils): skipped"; exit 77; }

export UCX_TLS=sm,self
R=${NGAUGE_UCX_ROUNDS:-5}
LAT_N=${NGAUGE_UCX_LAT_N:-20000}
. "$(dirname "$0")/ucx_perftest.sh"

# ngauge_med SIZE COUNT: one ngauge run of -x rdma --rdma-backend ucx pingpong, the median latency of its row.
ngauge_med() {
	timeout -k 5 300 "$NGAUGE" --np 2 --pin 0,1 -x rdma --rdma-backend ucx -p pingpong -s "$1" -c "$2" \
		-w $(($2 / 10)) -o "$T/r.json" >"$T/out" 2>"$T/err" || { echo "nan"; return; }
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["latency_us"]["median"])' \
		"$T/r.json"
}

lat_ng=() lat_pt=()
printf '%-6s %22s %20s\n' round "ngauge rdma/ucx 8B us" "ucp_put_lat 8B us"
for r in $(seq "$R"); do
	a=$(ngauge_med 8 "$LAT_N")
	# ucp_put_lat's typical latency (the second number of its final line), a half round trip
	b=$(perftest ucp_put_lat 8 "$LAT_N" | awk '{print $2}')
	lat_ng+=("$a") lat_pt+=("$b")
	printf '%-6s %22s %20s\n' "$r" "$a" "$b"
done

python3 - "${lat_ng[*]}" "${lat_pt[*]}" <<'EOF'
import math, statistics, sys
def nums(s):
    return [float(x) for x in s.split() if x not in ("", "nan") and math.isfinite(float(x))]
a, b = nums(sys.argv[1]), nums(sys.argv[2])
if not a or not b:
    print("rdma pingpong 8 B vs ucp_put_lat (us): no figures (a run failed)")
    sys.exit(0)
ma, mb = statistics.median(a), statistics.median(b)
sa = (max(a) - min(a)) / ma if ma else float("nan")
sb = (max(b) - min(b)) / mb if mb else float("nan")
ratio = ma / mb if mb else float("nan")
print(f"rdma pingpong 8 B vs ucp_put_lat (us): ngauge median {ma:.4g} (its spread between rounds {100 * sa:.1f}%), "
      f"ucx_perftest median {mb:.4g} (its spread between rounds {100 * sb:.1f}%), ratio {ratio:.3f}")
EOF
