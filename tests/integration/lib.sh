# Shared helpers of the integration tests (sourced).
set -u
: "${NGAUGE:?NGAUGE must point to the ngauge binary}"
T=$(mktemp -d /tmp/ngauge-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

. "$(dirname "${BASH_SOURCE[0]}")/../hang_report.sh"

# run EXPECTED_STATUS CMD... : runs with a 120 s limit, keeps stdout/stderr in $T/out, $T/err; a command
# still running then is reported with what it was doing (tests/hang_report.sh, on stderr) and stopped (124)
run() {
	local want=$1; shift
	run_limited 120 "$1" "$T/out" "$T/err" "$@" >&2
	local rc=$?
	if [ "$rc" != "$want" ]; then
		fail "'$*' exited $rc, expected $want"; sed 's/^/  stderr: /' "$T/err" | tail -5 >&2
		return 1
	fi
	return 0
}

# wait_rows FILE: waits (at most 30 s) until the result FILE exists and holds at least one row.
wait_rows() {
	for _ in $(seq 300); do
		[ -s "$1" ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["results"] else 1)' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Every result file a test writes is checked against the published schema
# (doc/schema/ngauge-result-1.schema.json, by tests/schema/validate.py): the file pycheck reads, and at
# finish every *.json left under $T.  pycheck keeps a copy of the version it read and finish validates them
# all in one start of the validator: the same versions, checked at the end (one start takes 0.6 s here and
# 15 s of emulated CPU in the Soft-RoCE guest).  NGAUGE_TEST_SCHEMA_LATER=0 validates at each pycheck.
SCHEMA_VALIDATE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../schema" && pwd)/validate.py
SCHEMA_LATER=${NGAUGE_TEST_SCHEMA_LATER:-1}

# schema_check FILE... : validates each result file once per version (a rewrite is a new inode); a file
# that does not match is one failure, its problems (the keys' paths) on stderr.  Without
# python3-jsonschema: a note, once.
schema_check() {
	local f stamp todo=() rc
	for f in "$@"; do
		[ -f "$f" ] || continue
		stamp="$f $(stat -c '%i %s %.9Y' "$f")"
		grep -qxF "$stamp" "$T/.schema-checked" 2>/dev/null && continue
		echo "$stamp" >>"$T/.schema-checked"
		todo+=("$f")
	done
	[ ${#todo[@]} -eq 0 ] && return 0
	python3 "$SCHEMA_VALIDATE" "${todo[@]}" >"$T/.schema-out" 2>&1
	rc=$?
	if [ $rc = 77 ]; then
		[ -e "$T/.schema-skip" ] || echo "note: result files not checked against the schema: $(cat "$T/.schema-out")"
		touch "$T/.schema-skip"
	elif [ $rc != 0 ]; then
		fail "result file(s) do not match doc/schema/ngauge-result-1.schema.json"
		grep -v "file(s) do not match" "$T/.schema-out" | head -40 | sed 's/^/  schema: /' >&2
	fi
}

# pycheck FILE WHAT CODE : runs python CODE with r = the parsed JSON of FILE (after schema_check FILE)
pycheck() {
	local file=$1 what=$2 code=$3 n
	if [ "$SCHEMA_LATER" = 1 ]; then
		mkdir -p "$T/.schema-later"
		n=$(find "$T/.schema-later" -type f | wc -l)
		[ -f "$file" ] && cp "$file" "$T/.schema-later/$n-$(basename "$file")"
	else
		schema_check "$file"
	fi
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

# oversub FILE WHAT RANKS CORES: the run's result carries the oversubscription flag with RANKS busy-polling
# ranks on CORES cores, its stderr ($T/err) the warning once and its table ($T/out) the mark (RANKS 0: the run
# is not oversubscribed: no flag, no warning, no mark).
oversub() {
	local file=$1 what=$2 ranks=$3 cores=$4 warned marked
	warned=$(grep -c "warning: $ranks busy-polling ranks share $cores cores of host" "$T/err")
	marked=$(grep -c "OVERSUBSCRIBED: $ranks busy-polling ranks on $cores cores" "$T/out")
	if [ "$ranks" = 0 ]; then
		warned=$(grep -c "busy-polling" "$T/err"); marked=$(grep -c "OVERSUBSCRIBED" "$T/out")
		[ "$warned" = 0 ] && [ "$marked" = 0 ] && pass "$what: no oversubscription warning or mark" ||
			fail "$what: warned $warned, marked $marked: $(cat "$T/err")"
		pycheck "$file" "$what: not oversubscribed" 'assert r["env"]["oversubscribed"] is False and "oversubscription" not in r["env"]'
		return
	fi
	# The run header and the column header line of the table.
	[ "$warned" = 1 ] && [ "$marked" = 2 ] && pass "$what: one warning line, the table marked" ||
		fail "$what: warned $warned times, marked $marked lines: $(cat "$T/err")"
	pycheck "$file" "$what: oversubscribed, $ranks ranks on $cores cores" "
o = r['env']['oversubscription']
assert r['env']['oversubscribed'] is True and o['spinning_ranks'] == $ranks and o['cores'] == $cores, r['env']
"
}

finish() {
	local files=()
	mapfile -d '' files < <(find "$T" -type f -name '*.json' -print0 2>/dev/null)
	schema_check "${files[@]}"
	[ -s "$T/.schema-checked" ] && [ ! -e "$T/.schema-skip" ] &&
		echo "schema: $(wc -l <"$T/.schema-checked") version(s) of $(cut -d' ' -f1 "$T/.schema-checked" | sort -u |
			wc -l) result file(s) checked against doc/schema/ngauge-result-1.schema.json"
	if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed" >&2; exit 1; fi
	exit 0
}

# netns_pair TAG: two network namespaces, $nsA and $nsB (ngTAGA<pid>, ngTAGB<pid>), joined by a veth whose ends
# $vA (in A) and $vB (in B) hold $ipA and $ipB (a /30 from 198.18.0.0/15, RFC 2544), loopback and both ends up;
# both namespaces (and so the veth and whatever lives in them) deleted at exit, with $T. Exits 77 (skipped) when
# namespaces cannot be made; a later step that fails is a failure of the test.
netns_pair() {
	local tag=$1 id=$$ ns
	nsA=ng${tag}A$id nsB=ng${tag}B$id
	vA=ng${tag}a$id vB=ng${tag}b$id
	ipA=198.18.$((id % 200 + 20)).1 ipB=198.18.$((id % 200 + 20)).2
	trap 'ip netns del "$nsA" 2>/dev/null; ip netns del "$nsB" 2>/dev/null; rm -rf "$T"' EXIT
	trap "exit 1" INT TERM HUP
	command -v ip >/dev/null || { echo "SKIP: no ip (iproute2)"; exit 77; }
	if ! ip netns add "$nsA" 2>/dev/null || ! ip netns add "$nsB" 2>/dev/null; then
		echo "SKIP: cannot create network namespaces (needs root and netns support)"
		exit 77
	fi
	ip link add "$vA" type veth peer name "$vB" || { fail "cannot create a veth pair"; finish; }
	ip link set "$vA" netns "$nsA" && ip link set "$vB" netns "$nsB" || { fail "cannot move the veth ends"; finish; }
	ip -n "$nsA" addr add "$ipA/30" dev "$vA" && ip -n "$nsB" addr add "$ipB/30" dev "$vB" ||
		{ fail "addresses"; finish; }
	for ns in "$nsA" "$nsB"; do ip -n "$ns" link set lo up; done
	ip -n "$nsA" link set "$vA" up && ip -n "$nsB" link set "$vB" up || { fail "links up"; finish; }
}
