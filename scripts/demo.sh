#!/bin/sh
# The main job: measures tcp and mpi on local ranks (ping-pong and n:1),
# prints the tables and writes the result files to ./results/.
set -eu
cd "$(dirname "$0")/.."
NG=${NGAUGE:-build/ngauge}
OUT=${1:-results}
mkdir -p "$OUT"

for m in tcp mpi; do
	if ! "$NG" --list | grep -q "^  $m "; then
		echo "demo: module $m not built here, skipped"
		continue
	fi
	echo "== ping-pong over $m (2 local ranks)"
	"$NG" -x "$m" -p pingpong -s 1-1M -c 1000 -o "$OUT/pingpong-$m.json"
	echo "== n:1 over $m (4 local ranks)"
	"$NG" -x "$m" -p n1 --np 4 -s 1-1M -c 200 -o "$OUT/n1-$m.json"
done
echo "demo: results in $OUT/"
ls "$OUT"
