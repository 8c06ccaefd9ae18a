#!/bin/bash
# A full LogGP report over mpi (mpiexec -n 2 ngauge -x mpi -p loggp, 1 B-1 MiB) by default and with adaptive
# sampling (--ci-target and --max-time, doc/options.md "Adaptive stopping"; BENCH_ADAPT overrides the
# options), BENCH_ROUNDS times each (default 1), side by side: wall time, and the 95% interval widths of the
# parameters of the segment that holds 1 B and of the one that holds 1 MiB, and over the sizes the median of
# the widest relative half-width of a size's four medians (PRTT(1,0,s), T(s), o_s, o_r, relative to
# PRTT(1,0,s)).
#
# Requirement checked (issue 23): the adaptive run takes at most 10 s and none of its parameter intervals is
# wider than the default run's. Exit 1 otherwise, with the numbers.
set -u
. "$(dirname "$0")/lib.sh" adapt
bench_need_mpi
rounds=${BENCH_ROUNDS:-1}
read -r -a adapt <<<"${BENCH_ADAPT:---ci-target 0.01 --max-time 0.2}"
status=0

files=()
for ((i = 1; i <= rounds; i++)); do
	for how in default adaptive; do
		extra=()
		[ $how = adaptive ] && extra=("${adapt[@]}")
		t=$(secs mpiexec -n 2 "$NGAUGE" -x mpi -p loggp "${extra[@]}" -o "$T/$how$i.json") || {
			echo "$how: loggp failed:" >&2
			tail -3 "$T/err" >&2
			status=1
			continue
		}
		echo "$t" >"$T/$how$i.time"
		files+=("$how$i")
	done
done

python3 - "$T" "${adapt[*]}" "${files[@]}" <<'PY' || status=1
import json, statistics, sys
d, adapt, names = sys.argv[1], sys.argv[2], sys.argv[3:]
PARAMS = ["L_us", "o_s_us", "o_r_us", "g_us", "G_us_per_byte"]

def load(name):
    r = json.load(open("%s/%s.json" % (d, name)))
    t = float(open("%s/%s.time" % (d, name)).read())
    b = r["loggp"]
    segs = b["segments"]
    first = next(s for s in segs if s["from"] <= 1 <= s["to"])
    last = next(s for s in segs if s["from"] <= 1 << 20 <= s["to"])
    def widths(s):
        out = {}
        for p in PARAMS:
            v = s.get(p, {})
            ci = v.get("ci95")
            out[p] = (ci[1] - ci[0]) if ci and ci[1] is not None else float("inf")
        return out
    # per size: the widest half-width of its four medians' intervals, relative to PRTT(1,0,s)
    per = {}
    for row in r["results"]:
        base = row["prtt1_us"]["median"]
        hw = [max(row[k]["median"] - row[k]["ci95"][0], row[k]["ci95"][1] - row[k]["median"])
              for k in ("prtt1_us", "T_us", "o_s_us", "o_r_us") if isinstance(row.get(k), dict)]
        per[row["size"]] = max(hw) / base if hw and base > 0 else float("inf")
    return {"time": t, "complete": r["complete"], "sizes": len(r["results"]), "first": widths(first),
            "last": widths(last), "nseg": len(segs), "per": per}

runs = {n: load(n) for n in names}
fmt = lambda x: "%9.3g" % x if x != float("inf") else "      n/a"
print("adaptive: %s" % adapt)
print("%-10s %7s %5s %4s | %s | %s" % ("run", "wall_s", "sizes", "segs",
      " ".join("%9s" % ("1B:" + p.split("_")[0] + p[len(p.split("_")[0]):].replace("_us_per_byte", "").replace("_us", "")) for p in PARAMS),
      " ".join("%9s" % ("1M:" + p.replace("_us_per_byte", "").replace("_us", "")) for p in PARAMS)))
for n, v in runs.items():
    print("%-10s %7.2f %5d %4d | %s | %s" % (n, v["time"], v["sizes"], v["nseg"],
          " ".join(fmt(v["first"][p]) for p in PARAMS), " ".join(fmt(v["last"][p]) for p in PARAMS)))
print("per size, the widest relative half-width of its medians' intervals (PRTT(1,0,s), T, o_s, o_r):")
for n, v in runs.items():
    w = sorted(v["per"].values())
    print("%-10s median %.4f, 90th %.4f, largest %.4f; within 1%%: %d of %d sizes" % (
        n, statistics.median(w), w[int(0.9 * (len(w) - 1))], w[-1], sum(x <= 0.01 for x in w), len(w)))
ok = True
defaults = [v for n, v in runs.items() if n.startswith("default")]
for n, v in runs.items():
    if not n.startswith("adaptive"):
        continue
    if v["time"] > 10:
        print("MISS: %s took %.2f s (target 10 s)" % (n, v["time"]))
        ok = False
    for where in ("first", "last"):
        for p in PARAMS:
            ref = statistics.median(x[where][p] for x in defaults)
            if v[where][p] > ref:
                print("MISS: %s: %s %s interval %.3g wider than the default's %.3g" % (
                    n, "1 B" if where == "first" else "1 MiB", p, v[where][p], ref))
                ok = False
print("adaptive within 10 s and no wider: %s" % ("ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
exit $status
