#!/bin/bash
# Reruns meson tests RUNS times beside a CPU hog (busy processes at ordinary priority, one per core by default)
# and prints each test's failure rate, with excerpts of the failing runs' logs; every run's log is kept. A tool
# for finding flaky tests, not a test: doc/testing.md, "Flaky tests".
set -u
usage() {
	cat <<'EOF'
usage: tests/stress.sh [-C BUILD] [-n RUNS] [-j HOGS] [-t PCT] [-o DIR] [-s SUITE]... [-x SUITE]... [-r] [-l]
                       [TEST...]
  -C BUILD  the configured build directory (default: build)
  -n RUNS   runs of each test (default 20), round by round: every test once, then again
  -j HOGS   busy processes beside the tests (default: one per core, 0: none)
  -t PCT    exit 0 only when every test fails in less than PCT% of its runs (default 1: with 20 runs, none)
  -o DIR    where every run's log is kept (default: a new /tmp/ngauge-stress.XXXXXX)
  -s SUITE  the tests of SUITE (repeatable; default: patterns groundtruth integration mpi plots)
  -x SUITE  leave out the tests of SUITE (repeatable; default: long)
  -r        add the Soft-RoCE guest's suite rxe
  -l        list the chosen tests and exit
  TEST...   these tests by name (beside the -s suites' tests; without -s, only these; -x does not apply)
Exit status: 0 every rate below PCT, 1 some not, 2 bad usage.
EOF
}

build=build runs=20 hogs=$(nproc) pct=1 dir="" list=0
suites=() nosuites=() names=()
while [ $# -gt 0 ]; do
	case $1 in
	-C | -n | -j | -t | -o | -s | -x)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		case $1 in
		-C) build=$2 ;;
		-n) runs=$2 ;;
		-j) hogs=$2 ;;
		-t) pct=$2 ;;
		-o) dir=$2 ;;
		-s) suites+=("$2") ;;
		-x) nosuites+=("$2") ;;
		esac
		shift 2
		;;
	-r) suites+=(rxe); shift ;;
	-l) list=1; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "stress: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) names+=("$1"); shift ;;
	esac
done
case "$runs$hogs" in *[!0-9]*) echo "stress: -n and -j take whole numbers" >&2; exit 2 ;; esac
[ "$runs" -ge 1 ] || { echo "stress: -n must be at least 1" >&2; exit 2; }
python3 -c "import sys; assert 0 < float(sys.argv[1]) <= 100" "$pct" 2>/dev/null ||
	{ echo "stress: -t takes a percentage above 0, got '$pct'" >&2; exit 2; }
[ -f "$build/build.ninja" ] || { echo "stress: $build is not a configured build directory (-C)" >&2; exit 2; }
build=$(cd "$build" && pwd)

# The tests: "project:suite+suite / name" lines from meson; the named ones, then those of the suites minus the
# left-out suites. Neither names nor -s: the default suites (and rxe with -r).
if [ ${#names[@]} -eq 0 ] && { [ ${#suites[@]} -eq 0 ] || [ "${suites[*]}" = rxe ]; }; then
	suites+=(patterns groundtruth integration mpi plots)
fi
[ ${#nosuites[@]} -eq 0 ] && nosuites=(long)
catalogue=$(meson test -C "$build" --no-rebuild --list 2>/dev/null | grep ' / ') ||
	{ echo "stress: meson test --list failed in $build" >&2; exit 2; }
tests=$(CATALOGUE=$catalogue python3 - "${#names[@]}" "${names[@]}" "${suites[@]}" -- "${nosuites[@]}" <<'EOF'
import os, sys
n = int(sys.argv[1])
names, rest = sys.argv[2:2 + n], sys.argv[2 + n:]
cut = rest.index('--')
want, leave = set(rest[:cut]), set(rest[cut + 1:])
known = {}
for line in os.environ['CATALOGUE'].splitlines():
    left, name = line.strip().split(' / ', 1)
    known[name] = set(left.split(':', 1)[1].split('+'))
bad = [x for x in names if x not in known]
if bad:
    sys.exit('stress: no test named %s (meson test --list)' % ', '.join(bad))
chosen = list(dict.fromkeys(names))
chosen += [x for x, s in known.items() if s & want and not s & leave and x not in chosen]
print('\n'.join(chosen))
EOF
) || exit 2
[ -n "$tests" ] || { echo "stress: no test chosen" >&2; exit 2; }
if [ $list = 1 ]; then
	echo "$tests"
	exit 0
fi

[ -n "$dir" ] || dir=$(mktemp -d /tmp/ngauge-stress.XXXXXX)
mkdir -p "$dir" || exit 2
dir=$(cd "$dir" && pwd)
ntests=$(echo "$tests" | wc -l)

# The hog: HOGS busy shells; stopped by their pids at the end, whatever ends the script.
hog_pids=()
meson_pid=""
stop() {
	[ -n "$meson_pid" ] && kill -TERM "$meson_pid" 2>/dev/null
	[ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
	hog_pids=()
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
for _ in $(seq "$hogs"); do
	bash -c 'while :; do :; done' &
	hog_pids+=($!)
done

echo "stress: $ntests test(s), $runs run(s) each, $hogs busy process(es) on $(nproc) core(s); logs in $dir"
# Each run is its own `meson test NAME` (meson's own timeout applies); one line per run in $dir/runs.tsv:
# test, run, result (meson's: OK, SKIP, FAIL, TIMEOUT, ...), seconds, the 1-minute load average at its end.
: >"$dir/runs.tsv"
for k in $(seq "$runs"); do
	for t in $tests; do
		log="$dir/$t.$k.log"
		rm -f "$build/meson-logs/stress-$$.json"
		meson test -C "$build" --no-rebuild --logbase "stress-$$" "$t" >"$dir/.meson-out" 2>&1 &
		meson_pid=$!
		wait "$meson_pid"
		meson_pid=""
		load=$(cut -d' ' -f1 /proc/loadavg)
		res=$(python3 - "$build/meson-logs/stress-$$.json" "$log" <<'EOF'
import json, sys
try:
    r = [json.loads(x) for x in open(sys.argv[1])][-1]
except (OSError, ValueError, IndexError):
    print('ERROR 0')
    sys.exit()
with open(sys.argv[2], 'w') as f:
    f.write(r.get('stdout') or '')
    if r.get('stderr'):
        f.write('--- stderr ---\n' + r['stderr'])
print(r['result'], '%.1f' % r['duration'])
EOF
)
		# the meson command's own output, when it recorded no result (e.g. a test that could not start)
		case $res in ERROR*) cat "$dir/.meson-out" >>"$log" ;; esac
		printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$k" "${res% *}" "${res#* }" "$load" >>"$dir/runs.tsv"
		printf 'stress: [%d/%d] %-28s %-7s %6s s  load %s\n' "$k" "$runs" "$t" "${res% *}" "${res#* }" "$load"
		case $res in OK* | SKIP*) rm -f "$log" ;; esac
	done
done
stop
rm -f "$dir/.meson-out" "$build/meson-logs/stress-$$".*

# The table, then every failing run's excerpt: the lines that say what failed, else the log's end.
python3 - "$dir" "$pct" "$hogs" <<'EOF'
import collections, re, sys
d, pct, hogs = sys.argv[1], float(sys.argv[2]), sys.argv[3]
runs = collections.OrderedDict()
for line in open(d + '/runs.tsv'):
    t, k, res, sec, load = line.rstrip('\n').split('\t')
    runs.setdefault(t, []).append((int(k), res, float(sec), float(load)))
print('\n%-30s %5s %5s %5s %7s %11s %7s' % ('test', 'runs', 'fail', 'skip', 'rate', 'load', 'max s'))
bad = 0
fails = []
for t, rs in runs.items():
    ran = [r for r in rs if r[1] != 'SKIP']
    f = [r for r in ran if r[1] not in ('OK', 'EXPECTEDFAIL')]
    rate = 100.0 * len(f) / len(ran) if ran else 0.0
    loads = [r[3] for r in rs]
    print('%-30s %5d %5d %5d %6.1f%% %5.1f-%-5.1f %7.1f%s' % (
        t, len(ran), len(f), len(rs) - len(ran), rate, min(loads), max(loads), max(r[2] for r in rs),
        '' if rate < pct else '   <- at or above %g%%' % pct))
    bad += rate >= pct
    fails += [(t, r) for r in f]
print('(load: the 1-minute load average at the end of each run, lowest-highest; %s busy process(es) added)' % hogs)
pat = re.compile(r'FAIL|HANG|Traceback|Error|error:|assert|no progress|stopped|timed out|Timeout', re.I)
for t, (k, res, sec, load) in fails:
    log = '%s/%s.%d.log' % (d, t, k)
    try:
        lines = open(log, errors='replace').read().splitlines()
    except OSError:
        lines = []
    hit = [x for x in lines if pat.search(x)]
    print('\n--- %s run %d: %s after %.1f s, load %.2f (%s)' % (t, k, res, sec, load, log))
    for x in (hit[:15] if hit else lines[-10:]):
        print('  ' + x[:200])
sys.exit(1 if bad else 0)
EOF
