#!/bin/bash
# The run's manifest (env hosts, placement, versions) and its validity warnings (doc/result-format.md).
# The real machine gives the fields it has; a fake procfs/sysfs tree ($NGAUGE_TEST_SYSROOT) gives every
# condition of a warning, and each warning must appear once on stderr, once in the file, and in the
# table's notes, and stay off stderr with --quiet-warnings.
. "$(dirname "$0")/lib.sh"

# ---- the real machine: every field there, unreadable ones null, no warning noise from reading ----
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,64 -c 50 -o "$T/real.json"; then
	pycheck "$T/real.json" "tcp run: the manifest's fields" '
import os
e = r["env"]
h, = e["hosts"]
assert h["host"] == e["host"] and h["cpus_online"] == os.cpu_count(), h
assert h["cpu_model"] and h["numa_nodes"] >= 1 and h["hugepages"]["transparent"] in ("always", "madvise", "never", None)
assert isinstance(h["rdma"], list)
assert h["nic"] is not None and h["nic"]["name"] == "lo", h["nic"]
pl = e["placement"]
assert [p["rank"] for p in pl] == [0, 1] and all(p["host"] == e["host"] for p in pl)
assert all(0 <= p["cpu"] < os.cpu_count() for p in pl)
v = e["versions"]
assert v["ngauge"] == e["ngauge"] and v["compiler"] and v["mpi"] is None and v["mpi_device"] is None
assert v["libfabric_provider"] is None
# tcp sleeps while it waits: nothing to warn about unpinned ranks here
assert all(w["kind"] != "not-pinned" for w in r["warnings"]), r["warnings"]
'
	grep -Ev "^ngauge: (rank [0-9]+: )?warning: " "$T/err" | grep -q . && fail "reading the manifest said something: $(cat "$T/err")" ||
		pass "no output from reading the manifest"
fi

# ---- an MPI run: the MPI library, its device, one host entry for both ranks ----
if ! command -v mpiexec >/dev/null || ! "$NGAUGE" --list | grep -q "^  mpi "; then
	echo "note: no mpiexec or built without MPI: the mpi run's manifest not checked"
# (MPICH and UCX keep allocations until exit: a sanitizer build checks no leaks under mpiexec, as .ci/run)
elif ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	run 0 mpiexec -n 2 "$NGAUGE" -x mpi -p pingpong -s 1,64 -c 50 -o "$T/mpi.json"; then
	pycheck "$T/mpi.json" "mpi run: the manifest's fields" '
e = r["env"]
v = e["versions"]
assert v["mpi"] and v["mpi"] == e["mpi"].split("\n")[0] and v["mpi_device"], v
assert len(e["hosts"]) == 1 and [p["rank"] for p in e["placement"]] == [0, 1]
'
fi

# ---- a fake tree: every condition this machine can not show ----
F=$T/root
mkdir -p "$F/proc" "$F/sys/devices/system/node/node0" "$F/sys/devices/system/node/node1" \
	"$F/sys/class/net/lo/device" "$F/sys/kernel/mm/transparent_hugepage" "$F/sys/devices/system/cpu/cpufreq"
for c in 0 1; do
	mkdir -p "$F/sys/devices/system/cpu/cpu$c/cpufreq" "$F/sys/devices/system/cpu/cpu$c/topology"
	echo powersave >"$F/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
	echo 1200000 >"$F/sys/devices/system/cpu/cpu$c/cpufreq/scaling_cur_freq"
	echo 800000 >"$F/sys/devices/system/cpu/cpu$c/cpufreq/scaling_min_freq"
	echo 3000000 >"$F/sys/devices/system/cpu/cpu$c/cpufreq/scaling_max_freq"
	echo 0-1 >"$F/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list"
done
echo 1 >"$F/sys/devices/system/cpu/cpufreq/boost"
printf 'processor\t: 0\nmodel name\t: Fake CPU 9000\nphysical id\t: 0\ncpu cores\t: 1\nflags\t\t: fpu tsc\n\nprocessor\t: 1\nmodel name\t: Fake CPU 9000\nphysical id\t: 0\ncpu cores\t: 1\nflags\t\t: fpu tsc\n' >"$F/proc/cpuinfo"
echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=1 nohz_full=1 quiet" >"$F/proc/cmdline"
printf 'MemTotal: 100 kB\nAnonHugePages:  4096 kB\nHugePages_Total:      16\nHugePages_Free:       12\nHugepagesize:       2048 kB\n' >"$F/proc/meminfo"
echo "always madvise [never]" >"$F/sys/kernel/mm/transparent_hugepage/enabled"
echo 0-1 >"$F/sys/devices/system/node/online"
echo 0-1 >"$F/sys/devices/system/node/node0/cpulist"
echo >"$F/sys/devices/system/node/node1/cpulist"
echo 1 >"$F/sys/class/net/lo/device/numa_node" # the NIC (lo carries 127.0.0.1) on the other node

# warned FILE KIND... : each KIND once on stderr (the message of the file), once in the file, in the table;
# no other kind.
warned() {
	local file=$1; shift
	schema_check "$file"
	if python3 - "$file" "$T/err" "$T/out" "$@" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
err, out, kinds = open(sys.argv[2]).read().splitlines(), open(sys.argv[3]).read().splitlines(), sys.argv[4:]
got = [w["kind"] for w in r["warnings"]]
assert sorted(got) == sorted(kinds), (got, kinds)
for w in r["warnings"]:
    assert "\n" not in w["message"]
    n = sum(1 for l in err if l.endswith("warning: " + w["message"]))
    assert n == 1, (w, n, err)
    assert sum(1 for l in out if l == "# warning (%s): %s" % (w["kind"], w["message"])) == 1, (w, out)
# (the notes on measured rows, "warning: PATTERN: N of M sizes drifted ..." or "... alternate ..." after the
# table, "warning: PATTERN: size N: ..." with --verbose, are the statistics', not validity warnings)
notes = [l for l in err if re.search(r"warning: [a-z0-9-]+: (size [0-9]+: |[0-9]+ of [0-9]+ sizes? (drifted|alternate) )", l)]
assert sum(1 for l in err if "warning: " in l) - len(notes) == len(kinds), err
EOF
	then pass "$file: warnings $* once each, stderr, file, table"; else fail "$file: warnings $*"; fi
}

export NGAUGE_TEST_SYSROOT=$F
# tcp, pinned to CPUs 0 and 1 (SMT siblings here), the TSC timer (not invariant here), governor powersave, NIC
# on node 1.
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,64 -c 50 --pin 0,1 --timer tsc -o "$T/a.json"; then
	warned "$T/a.json" frequency-scaling numa-nic smt-siblings timer-not-invariant
	pycheck "$T/a.json" "fake tree: the manifest reads it" '
h, = r["env"]["hosts"]
assert h["cpu_model"] == "Fake CPU 9000" and h["sockets"] == 1 and h["cores"] == 1 and h["threads_per_core"] == 2
assert h["boost"] is True and h["isolcpus"] == "1" and h["nohz_full"] == "1" and h["numa_nodes"] == 2
assert h["invariant_tsc"] is False
assert h["hugepages"] == {"transparent": "never", "transparent_in_use_kB": 4096, "total": 16, "free": 12, "size_kB": 2048}
assert h["nic"] == {"name": "lo", "numa_node": 1} and h["rdma"] == []
for p in r["env"]["placement"]:
    assert p["pinned"] and p["cpu"] == p["rank"] and p["numa_node"] == 0 and p["governor"] == "powersave"
    assert p["freq_khz"] == {"cur": 1200000, "min": 800000, "max": 3000000}
'
fi
# --quiet-warnings: off stderr, still in the file and the table.
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1,64 -c 50 --pin 0,1 --timer tsc --quiet-warnings -o "$T/q.json"; then
	# (a note on a measured row is the statistics', not a validity warning: not counted)
	grep -Ev "warning: [a-z0-9-]+: (size [0-9]+: |[0-9]+ of [0-9]+ sizes? (drifted|alternate) )" "$T/err" | grep -q "warning" &&
		fail "--quiet-warnings: stderr has $(cat "$T/err")" || pass "--quiet-warnings: stderr quiet"
	pycheck "$T/q.json" "--quiet-warnings: the file has the warnings, the parameter recorded" '
assert len(r["warnings"]) == 4 and r["parameters"]["quiet-warnings"] is True
'
	[ "$(grep -c "^# warning (" "$T/out")" = 4 ] && pass "--quiet-warnings: the table keeps them" ||
		fail "--quiet-warnings: table notes: $(cat "$T/out")"
fi
# A module that registers and busy-polls, unpinned, with a memlock limit of 64 KiB: the shm backend pins
# nothing (its registrations are keys over shared memory and CMA), so no memlock warning; a backend that pins
# (verbs) gets it: the rxe-manifest test in the Soft-RoCE guest.
if run 0 bash -c 'ulimit -l 64 && exec "$@"' sh "$NGAUGE" -x rdma --rdma-backend shm -p pingpong -s 1,64K -c 50 \
	--timer clock -o "$T/b.json"; then
	warned "$T/b.json" frequency-scaling not-pinned
fi
# Oversubscription goes through the same list (emu busy-polls: 4 ranks on 2 CPUs; not "not-pinned": there is no
# CPU for every rank).
if [ "$(nproc)" = 2 ] && run 0 "$NGAUGE" -x emu -p pingpong --np 4 -s 1 -c 20 --timer clock -o "$T/c.json"; then
	warned "$T/c.json" frequency-scaling numa-nic oversubscribed
fi
# A governor other than performance whose limits pin the clock (min = max) scales nothing: no warning.
for c in 0 1; do echo 3000000 >"$F/sys/devices/system/cpu/cpu$c/cpufreq/scaling_min_freq"; done
if run 0 "$NGAUGE" -x tcp -p pingpong -s 1 -c 20 --pin 0,1 --timer clock -o "$T/d.json"; then
	warned "$T/d.json" numa-nic smt-siblings
fi
unset NGAUGE_TEST_SYSROOT
finish
