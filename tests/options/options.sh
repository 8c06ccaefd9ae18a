#!/bin/bash
# Options through the command line (doc/options.md): every integer and byte-count option gives one answer to
# 08, 0100, 0x10, 2^63, 2^64-1, -1, 1e300, '' and 8x; what a run records is what was given; an option no
# chosen module or pattern reads, one the chosen configuration leaves unused, and a list with an empty or
# unknown item are refused with exit 2 and one line naming them.
# $1: tests/options/test_option_values (its --numeric lists the options).
. "$(dirname "$0")/../integration/lib.sh"
HELPER=${1:?usage: options.sh TEST_OPTION_VALUES}

# expect_usage 'needle' ARGS... : exit 2, one line on stderr containing needle, no result file
expect_usage() {
	local needle=$1; shift
	rm -f "$T/none.json"
	if run 2 "$NGAUGE" "$@" -o "$T/none.json"; then
		if grep -qF -- "$needle" "$T/err" && [ "$(grep -c . "$T/err")" -eq 1 ]; then
			pass "ngauge $* -> exit 2, '$needle'"
		else
			fail "ngauge $*: expected one line containing '$needle', got: $(cat "$T/err")"
		fi
	fi
}

# ---- every integer and byte-count option, through the command line ----
"$HELPER" --numeric >"$T/numeric" || fail "test_option_values --numeric"
n=0
while read -r name type; do
	n=$((n + 1))
	if [ "$type" = int ]; then notnum="--$name expects an integer, got"; neg="--$name must be between"
	else notnum="--$name expects a byte count like 4096 or 64K, got"; neg="(not negative)"; fi
	for v in 0x10 9223372036854775808 18446744073709551615 -1 1e300 '' 8x; do
		case $v in
		0x10) want="got '0x10' (decimal only: no 0x)" ;;
		9223372036854775808 | 18446744073709551615) want="--$name must be between" ;;
		-1) want=$neg ;;
		*) want="$notnum '$v'" ;;
		esac
		rm -f "$T/none.json"
		timeout 20 "$NGAUGE" "--$name" "$v" -o "$T/none.json" >"$T/out" 2>"$T/err"
		rc=$?
		if [ $rc != 2 ] || ! grep -qF -- "$want" "$T/err" || [ "$(grep -c . "$T/err")" != 1 ] ||
			[ -e "$T/none.json" ]; then
			fail "--$name '$v': exit $rc, expected 2 and one line with \"$want\": $(cat "$T/err")"
		fi
	done
	# The same value given as --name=VALUE gets the same answer.
	timeout 20 "$NGAUGE" "--$name=0x10" >/dev/null 2>"$T/err2"
	grep -qF "got '0x10' (decimal only: no 0x)" "$T/err2" || fail "--$name=0x10: $(cat "$T/err2")"
done <"$T/numeric"
[ "$n" -ge 20 ] && pass "$n integer and byte-count options: 0x10, 2^63, 2^64-1, -1, 1e300, '', 8x refused" ||
	fail "only $n integer and byte-count options listed"

# ---- recorded values: what was given (08 and 0100 are decimal) ----
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1 -c 08 -w 0100 --seed 0100 --tcp-sndbuf 0100K --tcp-rcvbuf 08 \
	-o "$T/tcp.json"; then
	pycheck "$T/tcp.json" "tcp run records -c 08 -w 0100 --seed 0100 --tcp-sndbuf 0100K --tcp-rcvbuf 08" '
p = r["parameters"]
want = {"count": 8, "warmup": 100, "seed": 100, "tcp-sndbuf": 102400, "tcp-rcvbuf": 8}
for k, v in want.items():
    assert p[k] == v and type(p[k]) is int, (k, p[k], v)
assert r["results"][0]["count"] == 8, r["results"][0]["count"]
'
fi
if run 0 "$NGAUGE" -x emu --emu-base tcp --tcp-port 0 --emu-threshold 0100 --emu-corrupt 0 --emu-max 08K \
	-p pingpong -s 1 -c 3 -w 0 -o "$T/emu.json"; then
	pycheck "$T/emu.json" "emu run records --emu-threshold 0100 --emu-max 08K (and accepts --tcp-port)" '
p = r["parameters"]
assert p["emu-threshold"] == 100 and p["emu-max"] == 8192, p
'
fi
if run 0 "$NGAUGE" -x rma --rdma-backend shm --rma-sched aggregate --rma-aggregate 0100 --rdma-ring 010 \
	-p rma --rma-test put-pingpong --rma-burst 08 -s 8 -c 5 -w 1 -o "$T/rma.json"; then
	pycheck "$T/rma.json" "rma run records --rma-aggregate 0100 --rdma-ring 010 --rma-burst 08" '
p = r["parameters"]
assert p["rma-aggregate"] == 100 and p["rdma-ring"] == 10 and p["rma-burst"] == 8, p
'
fi
run 0 "$NGAUGE" -x tcp -p bibw --bw-window 08 -s 1 -c 3 -w 0 && pass "bibw reads --bw-window"

# The report shows the parameters that apply to a run, from the same table entries (.applies): a local run
# leaves --port aside, the rma run over shm --ofi-provider, and keeps --rma-aggregate (--rma-sched aggregate).
note() { sed -n 's/.*Not used by this run[^:]*: \(.*\)/\1/p' "$1" | tr '\n' ' '; }
if [ -s "$T/tcp.json" ] && [ -s "$T/rma.json" ] &&
	run 0 "$NGAUGE" report "$T/tcp.json" "$T/rma.json" -o "$T/r.html"; then
	hidden=$(note "$T/r.html")
	case "$hidden" in
	*"<code>port</code>"*"<code>ofi-provider</code>"*) pass "report: port and ofi-provider not shown" ;;
	*) fail "report: the parameters left aside: $hidden" ;;
	esac
	grep -q "<code>rma-aggregate</code>" <<<"$hidden" && fail "report: rma-aggregate left aside" ||
		pass "report: rma-aggregate shown with --rma-sched aggregate"
fi

# ---- overflow and maxima before anything runs ----
expect_usage "--rma-aggregate must be between 0 and 1T, got '18446744073709551615'" -x rma -p rma \
	--rma-sched aggregate --rma-aggregate 18446744073709551615
expect_usage "size '18446744073709551615' is above the largest message size, 1T" -x rma -p rma \
	-s 18446744073709551615
expect_usage "--rdma-ring must be between 4 and 4096, got '3'" -x rma -p rma --rdma-ring 3
expect_usage "--count must be between 1 and 100000000, got '0'" -c 0

# ---- options nobody chosen reads, options the configuration leaves unused ----
expect_usage "--spipe-mode is an option of module spipe, not of tcp or pingpong" -x tcp -p pingpong \
	--spipe-mode reg
expect_usage "--rma-design is an option of module rma, not of tcp or pingpong" -x tcp -p pingpong \
	--rma-design sendrecv
expect_usage "--bw-window is an option of patterns bw, bibw, ebb and matrix, not of tcp or pingpong" -x tcp -p pingpong \
	--bw-window 8
expect_usage "--rdma-ring is an option of modules rdma, rma and spipe, not of emu (wrapping tcp) or pingpong" \
	-x emu --rdma-ring 8
expect_usage "--rma-sched is not used with --rma-design sendrecv (only with direct)" -x rma -p rma \
	--rma-design sendrecv --rma-sched all
expect_usage "--rma-aggregate is not used with --rma-sched none, the default (only with aggregate or all)" \
	-x rma -p rma --rma-aggregate 64
expect_usage "--rma-aggregate is not used with --rma-sched reorder (only with aggregate or all)" -x rma -p rma \
	--rma-sched reorder --rma-aggregate 64
expect_usage "--spipe-block is not used with --spipe-mode reg (only with pipeline or super)" -x spipe -p pingpong \
	--spipe-mode reg --spipe-block 8K
expect_usage "--spipe-buffers is not used with --spipe-mode copy (only with pipeline or super)" -x spipe \
	-p pingpong --spipe-mode copy --spipe-buffers 4
expect_usage "--ofi-provider is not used with --rdma-backend shm (only with ofi or auto)" -x rdma -p pingpong \
	--rdma-backend shm --ofi-provider tcp
expect_usage "--port is not used by a local launch (only by --server/--client)" -x tcp -p pingpong --port 5000

# ---- lists: the offending item named, empty items refused ----
expect_usage "rma: unknown test 'foo' in --rma-test" -x rma --rdma-backend shm -p rma --rma-test all,foo -s 8
expect_usage "--rma-test: empty item in 'put-pingpong,'" -x rma -p rma --rma-test put-pingpong,
expect_usage "--rma-test: empty item in ','" -x rma -p rma --rma-test ,
expect_usage "--rma-sync: empty item in 'pscw,,fence'" -x rma -p rma --rma-sync pscw,,fence
expect_usage "--rma-origins must be between 0 and 2147483647, got '-1'" -x rma -p rma --rma-origins -1
expect_usage "--a2a-algo: empty item in 'bruck,'" -x tcp -p alltoall --a2a-algo bruck,
expect_usage "--sizes: empty item in '1,,8'" -s 1,,8
expect_usage "--pin: empty item in ',0'" --pin ,0
expect_usage "--overlap-compute: empty item in '1,'" -x tcp -p overlap --overlap-compute 1,

schema_check "$T"/*.json
[ $FAILS = 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "all passed"
