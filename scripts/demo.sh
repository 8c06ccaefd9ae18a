#!/bin/sh
# The main job: measures tcp and mpi on local ranks (ping-pong, n:1 and the
# LogGP parameters), prints the tables, writes the result files to ./results/
# and ends with a comparison figure and an HTML report.
set -eu
cd "$(dirname "$0")/.."
NG=${NGAUGE:-build/ngauge}
OUT=${1:-results}
mkdir -p "$OUT"

# MPI ranks busy-poll: more of them than cores would measure the scheduler's time slices (ngauge marks
# such results "oversubscribed"), so n:1 runs with one rank per core, at most 3.
cores=$(nproc)
np=$((cores < 3 ? cores : 3))
mods=""
for m in tcp mpi; do
	if ! "$NG" --list | grep -q "^  $m "; then
		echo "demo: module $m not built here, skipped"
		continue
	fi
	if [ "$m" = mpi ] && [ "$cores" -lt 2 ]; then
		echo "demo: one core: two busy-polling MPI ranks would share it, mpi skipped"
		continue
	fi
	mods="$mods $m"
	echo "== ping-pong over $m (2 local ranks)"
	"$NG" -x "$m" -p pingpong -s 1-1M -c 1000 -o "$OUT/pingpong-$m.json"
	if [ "$np" -ge 2 ]; then
		echo "== n:1 over $m ($np local ranks: $((np - 1)) client(s), 1 server)"
		"$NG" -x "$m" -p n1 --np "$np" -s 1-1M:x4 -c 100 -o "$OUT/n1-$m.json"
	fi
	echo "== LogGP parameters over $m"
	"$NG" -x "$m" -p loggp -o "$OUT/loggp-$m.json"
done

pp=""; lg=""
for m in $mods; do pp="$pp $OUT/pingpong-$m.json"; lg="$lg $OUT/loggp-$m.json"; done
# shellcheck disable=SC2086
"$NG" plot $pp -o "$OUT/pingpong.pdf"
# shellcheck disable=SC2086
"$NG" plot $pp -o "$OUT/pingpong.png"
# shellcheck disable=SC2086
"$NG" plot $lg -o "$OUT/loggp.pdf"
"$NG" report "$OUT"/*.json -o "$OUT/report.html"
echo "demo: results, figures (pingpong.pdf, loggp.pdf) and report.html in $OUT/"
