#!/bin/bash
# The benchmarks of bench/ on two builds of ngauge, interleaved: did a change move their ratios?
# For each round, each benchmark runs once on one build and then once on the other (the order alternates
# from round to round), each a 1-round run of the benchmark's own script (the same script for both builds,
# this tree's): pingpong_bench.sh mpi (ngauge's mpi ping-pong against bench/mpi_pingpong_ref), rdma_bench.sh
# (the rdma module over shm, and over ofi's shm provider, against MPICH's MPI_Send/MPI_Recv) and rma_bench.sh
# (rma direct over shm against mpirma).  Prints, per figure, the ratio ngauge / reference of each build over
# the rounds (median, min-max), after's median over before's, and the reference against itself: in every
# round the reference of the "after" run over that of the "before" run (the same program, seconds apart).
# The host's own spread is how far the middle half of those self-ratios (first to third quartile) reaches
# from 1; a figure "agrees" when its after/before lies within it.  (On a virtual machine whose two vCPUs
# land on one host core in some launches and on two in others, single rounds of one program differ by up to
# 3x, which is why the middle half and not the extremes.)  Exit 0 when every figure agrees, 1 otherwise, 77
# without MPI.
#
#   bench/before_after.sh [-r ROUNDS] [-b REV | -B DIR] [-A DIR] [-o OUT] [-k BENCH,...]
#     -r ROUNDS   rounds per build (default 5)
#     -b REV      the "before" commit, built here in a temporary git worktree removed at the end (default
#                 8876b7f, the tree before the restructuring of issue 20)
#     -B DIR      a build directory of the "before" tree instead (not built, not removed)
#     -A DIR      the "after" build directory (default: build/ of this tree)
#     -o OUT      keep every run's output and the summary (summary.txt, figures.tsv) in OUT
#     -k LIST     the benchmarks to run, of pingpong,rdma,rma (default all three)
#     -S          no runs: only the summary of the runs kept in OUT (-o) by an earlier call
# Builds run under nice -n 10 with Meson's defaults (release), the same for both trees.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 rev=8876b7f before_build="" after_build="$SRC/build" out="" keep=pingpong,rdma,rma summary_only=""
while getopts r:b:B:A:o:k:S opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) rev=$OPTARG ;;
	B) before_build=$(cd "$OPTARG" && pwd) ;;
	A) after_build=$(cd "$OPTARG" && pwd) ;;
	o) out=$OPTARG ;;
	k) keep=$OPTARG ;;
	S) summary_only=1 ;;
	*) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 2 ;;
	esac
done
if [ -n "$summary_only" ]; then
	[ -n "$out" ] || { echo "before_after: -S needs -o OUT" >&2; exit 2; }
	before_build=- after_build=-
fi
[ -n "$summary_only" ] || command -v mpiexec >/dev/null || { echo "mpiexec not installed: skipped"; exit 77; }
[ -n "$summary_only" ] || [ -x "$after_build/ngauge" ] || { echo "before_after: no $after_build/ngauge (build this tree first)" >&2; exit 2; }
[ -n "$summary_only" ] || "$after_build/ngauge" --list | grep -q "^  mpi " || { echo "built without MPI: skipped"; exit 77; }
T=$(mktemp -d /tmp/ngauge-before-after.XXXXXX)
wt=""
cleanup() {
	[ -n "$wt" ] && git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
[ -n "$out" ] || out="$T/out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -z "$before_build" ]; then
	wt="$T/before"
	echo "before_after: building $rev in $wt"
	git -C "$SRC" worktree add --detach "$wt" "$rev" >/dev/null 2>&1 || { echo "before_after: no commit $rev" >&2; exit 2; }
	(cd "$wt" && nice -n 10 meson setup build && nice -n 10 ninja -C build) >"$out/build-before.log" 2>&1 ||
		{ tail -20 "$out/build-before.log" >&2; echo "before_after: the build of $rev failed" >&2; exit 1; }
	before_build="$wt/build"
fi
[ -n "$summary_only" ] && rounds=$(ls "$out"/*.before.* | sed 's/.*\.//' | sort -n | tail -1)
echo "before_after: before $before_build, after $after_build, $rounds rounds, $(nproc) cores, $(date -u +%FT%TZ)"

# run BUILD TAG BENCH ROUND: one 1-round run of BENCH's script on BUILD, output in $out/BENCH.TAG.ROUND
run() {
	local f="$out/$3.$2.$4"
	case $3 in
	pingpong) NGAUGE="$1/ngauge" NGAUGE_BUILD="$1" bash "$SRC/bench/pingpong_bench.sh" mpi 1 >"$f" 2>&1 ;;
	rdma) NGAUGE="$1/ngauge" NGAUGE_BUILD="$1" bash "$SRC/bench/rdma_bench.sh" 1 >"$f" 2>&1 ;;
	rma) NGAUGE="$1/ngauge" NGAUGE_BUILD="$1" bash "$SRC/bench/rma_bench.sh" 1 >"$f" 2>&1 ;;
	esac
	# the scripts exit 1 when a target is missed; only a run that printed no figure failed
	grep -q 'ratio' "$f" || { echo "before_after: $3 on $2 printed no figure:" >&2; tail -5 "$f" >&2; exit 1; }
}
for r in $( [ -z "$summary_only" ] && seq "$rounds"); do
	for b in ${keep//,/ }; do
		if [ $((r % 2)) = 1 ]; then
			run "$before_build" before "$b" "$r"; run "$after_build" after "$b" "$r"
		else
			run "$after_build" after "$b" "$r"; run "$before_build" before "$b" "$r"
		fi
	done
	echo "before_after: round $r of $rounds done"
done

python3 - "$out" "$rounds" "$keep" <<'EOF' | tee "$out/summary.txt"
import re, statistics, sys
out, rounds, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
num = r"([0-9.]+)"
def figures(bench, text):
    """{figure name: (ngauge, reference)} of one run's output"""
    f = {}
    if bench == "pingpong":
        for m in re.finditer(r"echo (\S+) +cpus \S+ size +(\d+): ngauge median +" + num + r" us, reference +" + num, text):
            f["pingpong mpi, echo %s, %s B (us)" % (m[1], m[2])] = (float(m[3]), float(m[4]))
    elif bench == "rdma":
        for m in re.finditer(r"size +(\d+): rdma shm median +" + num + r" us, MPICH +" + num + r" us[^\n]*", text):
            f["rdma shm / MPICH, %s B (us)" % m[1]] = (float(m[2]), float(m[3]))
            o = re.search(r"rdma ofi\(shm\) +" + num, m[0])
            if o:
                f["rdma ofi(shm) / MPICH, %s B (us)" % m[1]] = (float(o[1]), float(m[3]))
    elif bench == "rma":
        for m in re.finditer(r"^(.+?) +rma direct \(shm\) +" + num + r" +mpirma +" + num, text, re.M):
            f["rma direct / mpirma, " + m[1]] = (float(m[2]), float(m[3]))
    return f
data = {}  # name -> tag -> [(ngauge, ref)] per round
for bench in keep:
    for tag in ("before", "after"):
        for r in range(1, rounds + 1):
            for name, v in figures(bench, open("%s/%s.%s.%d" % (out, bench, tag, r)).read()).items():
                data.setdefault(name, {}).setdefault(tag, []).append(v)
def mr(xs):
    return "%.3f (%.3f-%.3f)" % (statistics.median(xs), min(xs), max(xs))
bad = 0
tsv = open(out + "/figures.tsv", "w")
print("%-58s %-22s %-22s %-7s %-30s %s" % ("figure (ratio ngauge / reference)", "before", "after", "aft/bef",
                                          "reference after/before", "verdict"))
for name, d in data.items():
    if len(d.get("before", [])) != rounds or len(d.get("after", [])) != rounds:
        print("%-58s missing rounds (before %d, after %d)" % (name, len(d.get("before", [])), len(d.get("after", []))))
        continue
    rb = [a / b for a, b in d["before"]]
    ra = [a / b for a, b in d["after"]]
    self_ = [a[1] / b[1] for a, b in zip(d["after"], d["before"])]
    q = statistics.quantiles(self_, n=4, method="inclusive") if len(self_) > 1 else [self_[0]] * 3
    spread = max(abs(q[0] - 1), abs(q[2] - 1))
    moved = statistics.median(ra) / statistics.median(rb)
    ok = abs(moved - 1) <= spread
    bad |= not ok
    print("%-58s %-22s %-22s %-7.3f %-30s %s" % (name, mr(rb), mr(ra), moved, mr(self_) + " IQR %.2f-%.2f" % (q[0], q[2]),
          "agree (spread %.0f%%)" % (100 * spread) if ok else "DIFFER (by %.0f%%, spread %.0f%%)" % (100 * abs(moved - 1), 100 * spread)))
    for tag in ("before", "after"):
        for r, (a, b) in enumerate(d[tag], 1):
            tsv.write("%s\t%s\t%d\t%g\t%g\t%.4f\n" % (name, tag, r, a, b, a / b))
sys.exit(bad)
EOF
rc=${PIPESTATUS[0]}
echo "before_after: every run's output in $out"
exit "$rc"
