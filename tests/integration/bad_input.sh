#!/bin/bash
# Bad input: one clear line on stderr naming the problem, exit status 2,
# and nothing measured (checked before anything runs).
. "$(dirname "$0")/lib.sh"

# expect_usage 'needle' ARGS... : exit 2, one-line error containing needle
expect_usage() {
	local needle=$1; shift
	if run 2 "$NGAUGE" "$@"; then
		local lines; lines=$(grep -c . "$T/err")
		if grep -qF -- "$needle" "$T/err" && [ "$lines" -eq 1 ]; then
			pass "ngauge $* -> exit 2, '$needle'"
		else
			fail "ngauge $*: expected one line containing '$needle', got: $(cat "$T/err")"
		fi
	fi
}

expect_usage "unknown module 'nosuch' (valid: tcp" -x nosuch -p pingpong
expect_usage "unknown pattern 'nosuch' (valid: pingpong, 1n, n1" -x tcp -p nosuch
expect_usage "bad size 'zz'" -x tcp -p pingpong -s 1,zz,8
expect_usage "bad size range '64-1'" -x tcp -p pingpong -s 64-1
expect_usage "needs an even number" -x tcp -p pingpong --np 3
expect_usage "cannot write output file '/nonexistent/dir/r.json'" -x tcp -p pingpong -o /nonexistent/dir/r.json
expect_usage "must end in .json or .csv" -x tcp -p pingpong -o "$T/r.txt"
expect_usage "unknown option '--frobnicate'" -x tcp -p pingpong --frobnicate
expect_usage "--count expects an integer, got 'many'" -x tcp -p pingpong -c many
expect_usage "option '--sizes' needs a value" -x tcp -p pingpong --sizes
expect_usage "--count must be between" -x tcp -p pingpong -c 0
# Options after -x are honoured (the order does not matter).
expect_usage "--tcp-port expects an integer" -x tcp --tcp-port abc -p pingpong

# overlap and skew: computation lengths, bursts, the operations they need.
expect_usage "--overlap-compute: computation lengths must not be negative in '-5'" -x tcp -p overlap \
	--overlap-compute -5
expect_usage "--skew-compute: expected a number of microseconds at 'abc' in '10,abc'" -x tcp -p skew \
	--skew-compute 10,abc
expect_usage "--overlap-compute: the range 100-10 ends below its start" -x tcp -p overlap --overlap-compute 100-10
expect_usage "--skew-burst must be between 1 and 1024, got 0" -x tcp -p skew --skew-burst 0
expect_usage "pattern 'overlap' with --overlap-rma needs one-sided operations, which module 'tcp' does not offer" \
	-x tcp -p overlap --overlap-rma

# Nothing was measured for an unwritable output: no stray file.
[ ! -e /nonexistent/dir/r.json.tmp ] && pass "no temporary file left" || fail "temporary file left"

# Capability check and maximum size: only testable with modules that lack
# something; they are added by later modules (emu/ibud) and tested there.
if "$NGAUGE" --list | grep -q "^  ibud "; then
	expect_usage "above the maximum" -x ibud -p pingpong -s 1M
	expect_usage "pattern 'loggp' needs reliable delivery, which module 'ibuc' does not offer" -x ibuc -p loggp
else
	echo "built without verbs: capability and maximum-size refusals not checked here"
fi

# Without -s the default sizes stop at the instance's largest message, with one note; given with -s, a
# size above it is refused. The emu module's --emu-max gives a maximum without hardware.
if run 0 "$NGAUGE" -x emu --emu-max 3000 -p pingpong -c 5 -w 1 --verify -o "$T/cut.json"; then
	[ "$(grep -c "note: sizes stop at 3000 bytes, the largest message of module 'emu'" "$T/err")" = 1 ] &&
		pass "default sizes cut at --emu-max: one note" || fail "default sizes: note: $(cat "$T/err")"
	pycheck "$T/cut.json" "default sizes cut at --emu-max 3000: 1 .. 2048, then 3000, all measured" '
assert r["complete"]
assert [x["size"] for x in r["results"]] == [2 ** k for k in range(12)] + [3000], r["results"]
assert r["parameters"]["sizes"] == "1,2,4,8,16,32,64,128,256,512,1K,2K,3000"
for x in r["results"]: assert stats_ok(x["latency_us"])
'
fi
expect_usage "message size 4096 is above the maximum of module 'emu' (3000 bytes" -x emu --emu-max 3000 \
	-p pingpong -s 1,4K -c 5
run 0 "$NGAUGE" -x tcp -p pingpong -c 5 -w 1 -s 1,64 && ! grep -q "note: sizes" "$T/err" &&
	pass "no note without a maximum" || fail "a note without a maximum: $(cat "$T/err")"

# --help and --list are generated from the option tables; --list shows each module the options it reads.
list_of() { awk -v m="$1" '/^  [a-z0-9]+ / { cur = $1 } /^patterns:/ { cur = "" } cur == m' "$T/out"; }
if run 0 "$NGAUGE" --list; then
	list_of rma | grep -q -- "--rma-design" && list_of rdma | grep -q -- "--rdma-ring" &&
		! list_of rdma | grep -q -- "--rma-" && pass "--list: rdma shows no --rma-* option, rma does" ||
		fail "--list: rdma/rma options"
	if grep -q "^  ibud " "$T/out"; then
		list_of ibud | grep -q -- "--ib-ring" && ! list_of ibud | grep -qE -- "--ib-(mode|eager)" &&
			list_of ibrc | grep -q -- "--ib-mode" && list_of ibuc | grep -q -- "--ib-eager" &&
			pass "--list: ibud shows neither --ib-mode nor --ib-eager, ibrc/ibuc do" ||
			fail "--list: ib options per module"
		# the RDMA layer's verbs backend picks its device as the verbs modules do
		for m in rdma rma spipe; do
			list_of $m | grep -q -- "--ib-dev" && list_of $m | grep -q -- "--ib-gid" &&
				! list_of $m | grep -qE -- "--ib-(mode|eager|ring)" &&
				pass "--list: $m shows --ib-dev, --ib-port, --ib-gid" || fail "--list: $m and the --ib-* options"
		done
	fi
fi

run 0 "$NGAUGE" --help && grep -q -- "--sizes SPEC" "$T/out" && pass "--help lists --sizes" || fail "--help"
run 0 "$NGAUGE" --list && grep -q -- "--tcp-port" "$T/out" && grep -q "pingpong" "$T/out" &&
	pass "--list shows module options and patterns" || fail "--list"
finish
