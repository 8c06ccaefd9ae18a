# Shared helpers of the integration tests (sourced).
set -u
: "${NGAUGE:?NGAUGE must point to the ngauge binary}"
T=$(mktemp -d /tmp/ngauge-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

# run EXPECTED_STATUS CMD... : runs with a 120 s limit, keeps stdout/stderr in $T/out, $T/err
run() {
	local want=$1; shift
	timeout -k 5 120 "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" != "$want" ]; then
		fail "'$*' exited $rc, expected $want"; sed 's/^/  stderr: /' "$T/err" | tail -5 >&2
		return 1
	fi
	return 0
}

# pycheck FILE WHAT CODE : runs python CODE with r = the parsed JSON of FILE
pycheck() {
	local file=$1 what=$2 code=$3
	if python3 - "$file" <<EOF
import json, math, sys
r = json.load(open(sys.argv[1]))
def stats_ok(s):
    return (s["n"] >= 1 and s["min"] <= s["median"] <= s["max"] and s["ci95"][0] <= s["median"] <= s["ci95"][1]
            and s["min"] > 0 and all(math.isfinite(s[k]) for k in ("min","median","mean","stddev","p99","max")))
$code
EOF
	then pass "$what"; else fail "$what"; fi
}

finish() {
	if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed" >&2; exit 1; fi
	exit 0
}
