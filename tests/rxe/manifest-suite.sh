#!/bin/bash
# manifest-suite.sh — the run's manifest from a real verbs device, inside the Soft-RoCE guest:
# `tests/rxe/vm-run.sh manifest-suite.sh` (meson test --suite rxe does that). Exits 0 when every check passed,
# 1 otherwise, 77 outside the VM.
#
# An ibrc pingpong on rxe0: env.hosts[0].rdma names the device as used, with its firmware string, link layer,
# the active MTU and the GID index the run used and that GID's type as the kernel gives them (sysfs and
# ibv_devinfo), env.hosts[0].nic is the device, and versions.libibverbs is filled.
#
# NGAUGE or NGAUGE_BUILD come from meson's test environment; NGAUGE_RXE_DEVICE from vm-run.sh.
set -u

N=${NGAUGE:-${NGAUGE_BUILD:+$NGAUGE_BUILD/ngauge}}
[ -n "$N" ] || { echo "manifest-suite.sh: set NGAUGE or NGAUGE_BUILD" >&2; exit 1; }
dev=${NGAUGE_RXE_DEVICE:-rxe0}
if [ ! -e "/sys/class/infiniband/$dev" ]; then
    echo "manifest-suite.sh: SKIP: no verbs device $dev (run me through tests/rxe/vm-run.sh)" >&2
    exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/ngauge-manifest.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT

mtu=$(ibv_devinfo -d "$dev" -i 1 | sed -n 's/.*active_mtu:[^0-9]*\([0-9][0-9]*\).*/\1/p' | head -n 1)
if ! timeout -k 5 60 "$N" --np 2 -x ibrc -p pingpong -s 1,4096 -c 20 -w 2 --ib-poll yield --timeout 20 \
    -o "$W/m.json" >"$W/out" 2>"$W/err"; then
    echo "FAIL: ibrc pingpong: $(tail -n 5 "$W/err")"
    exit 1
fi
python3 - "$W/m.json" "$dev" "$mtu" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
dev, mtu = sys.argv[2], int(sys.argv[3] or 0)
sysfs = "/sys/class/infiniband/" + dev
def read(p):
    try:
        v = open(os.path.join(sysfs, p)).read().strip()
        return v or None
    except OSError:
        return None
problems = []
h = r["env"]["hosts"][0]
d = [x for x in h["rdma"] if x["name"] == dev]
if len(d) != 1:
    problems.append("no %s in env.hosts[0].rdma: %s" % (dev, h["rdma"]))
else:
    d = d[0]
    if not d["used"]: problems.append("%s not marked used (device %r)" % (dev, r["env"]["device"]))
    if d["fw_ver"] != read("fw_ver"): problems.append("fw_ver %r, sysfs %r" % (d["fw_ver"], read("fw_ver")))
    p = [x for x in d["ports"] if x["port"] == 1]
    if len(p) != 1:
        problems.append("no port 1: %s" % d["ports"])
    else:
        p = p[0]
        if p["link_layer"] != "Ethernet": problems.append("link layer %r" % p["link_layer"])
        if p["link_layer"] != read("ports/1/link_layer"): problems.append("link layer is not sysfs'")
        if p["rate"] != read("ports/1/rate"): problems.append("rate %r" % p["rate"])
        if mtu and p["active_mtu"] != mtu: problems.append("active MTU %r, ibv_devinfo %d" % (p["active_mtu"], mtu))
        if p["gid_index"] is None: problems.append("no GID index")
        elif p["gid_type"] != read("ports/1/gid_attrs/types/%d" % p["gid_index"]) or not p["gid_type"]:
            problems.append("GID type %r" % p["gid_type"])
if h["nic"] is None or h["nic"]["name"] != dev: problems.append("nic %r" % h["nic"])
if not r["env"]["versions"]["libibverbs"]: problems.append("no libibverbs version")
for x in problems: print("FAIL: " + x)
print("ok   manifest of %s: %s" % (dev, json.dumps(h["rdma"])[:400]) if not problems else "")
sys.exit(1 if problems else 0)
PY
[ $? = 0 ] || exit 1

# The memlock warning: ibrc pins what it registers, so a limit of 64 KiB under the 64K messages' buffers
# warns (the run itself works: root's registrations ignore the limit); the rdma module over the shm backend
# pins nothing and does not warn.
for m in "ibrc memlock" "rdma --rdma-backend shm -"; do
    set -- $m
    want=${!#}
    if ! (ulimit -l 64 && exec timeout -k 5 60 "$N" --np 2 -x ${m% *} -p pingpong -s 1,64K -c 20 -w 2 --timeout 20 \
        -o "$W/l.json") >"$W/out" 2>"$W/err"; then
        echo "FAIL: ${m% *} under ulimit -l 64: $(tail -n 5 "$W/err")"
        exit 1
    fi
    python3 - "$W/l.json" "$want" "${m% *}" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
kinds = [w["kind"] for w in r["warnings"]]
want = sys.argv[2] == "memlock"
ok = ("memlock" in kinds) == want
print("%s %s under ulimit -l 64: warnings %s" % ("ok  " if ok else "FAIL", sys.argv[3], kinds))
sys.exit(0 if ok else 1)
PY
done
