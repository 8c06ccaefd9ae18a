#!/bin/bash
# --verify must catch the corruption emu injects (--emu-corrupt N flips one
# byte of every N-th received message) with an error naming the size and the
# offset; the same run without --verify does not notice, and emu without
# corruption passes --verify over odd, unaligned sizes with loggp and plogp.
set -u
: "${NGAUGE:?NGAUGE must point to the ngauge binary}"
T=$(mktemp -d /tmp/ngauge-gtv.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

timeout -k 5 120 "$NGAUGE" -x emu --emu-corrupt 5 -p pingpong --verify -s 1000 -c 20 -w 0 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -Eq "verify: size 1000 from rank [01]: byte at offset [0-9]+ is 0x[0-9a-f]{2}, expected 0x[0-9a-f]{2}" "$T/err"; then
	pass "pingpong --verify over emu --emu-corrupt 5: $(grep -m1 verify: "$T/err")"
else
	fail "pingpong --verify did not report the corruption (exit $rc)"; sed 's/^/  /' "$T/err" >&2
fi

timeout -k 5 120 "$NGAUGE" -x emu --emu-corrupt 5 -p pingpong -s 1000 -c 20 -w 0 >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && pass "without --verify the corruption goes unnoticed (exit 0)" || fail "run without --verify failed"

for pat in loggp plogp; do
	timeout -k 5 120 "$NGAUGE" -x emu --emu-corrupt 7 -p $pat --verify -s 333 -c 8 >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -Eq "verify: size 333 from rank [01]: byte at offset [0-9]+" "$T/err"; then
		pass "$pat --verify catches the corruption: $(grep -m1 verify: "$T/err")"
	else
		fail "$pat --verify did not report the corruption (exit $rc)"; sed 's/^/  /' "$T/err" >&2
	fi
	timeout -k 5 120 "$NGAUGE" -x emu -p $pat --verify -s 1,3,77,1001,4099 -c 8 -o "$T/$pat.json" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] && pass "$pat --verify over emu, odd sizes, no corruption" ||
		{ fail "$pat --verify over emu failed (exit $rc)"; sed 's/^/  /' "$T/err" >&2; }
done

# The result files match the published schema (doc/schema; 77: python3-jsonschema missing, not checked).
python3 "$(dirname "$0")/../schema/validate.py" "$T"/*.json >&2 || [ $? = 77 ] ||
	fail "result files do not match doc/schema/ngauge-result-1.schema.json"

[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
exit 0
