#!/bin/bash
# guest.sh RUNDIR — the guest half of vm-run.sh. The initramfs's /init runs it inside the Soft-RoCE VM,
# as root, chrooted into the host's root filesystem (shared over 9p), from a copy in RUNDIR.
#
# It builds the verbs device, then runs the job vm-run.sh wrote to RUNDIR/job with the environment of
# RUNDIR/env, its stdout and stderr going to RUNDIR/stdout and RUNDIR/stderr (which vm-run.sh relays),
# and records its exit status in RUNDIR/status. Exit 99 without a status file = the harness failed.
#
# Network: one veth pair v0/v1 in the guest's only namespace, 198.18.77.1/24 on v0 (the benchmarking range
# 198.18.0.0/15 of RFC 2544: tests never configure a private-range address), and the Soft-RoCE
# device rxe0 on v0. Both ends of a test use rxe0 and GID index 1 (the IPv4-mapped RoCE v2 GID): rxe
# loops the packets back inside the device. Nothing leaves the VM (QEMU is started without a NIC).
set -u
rundir=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

fail() {
    echo "ngauge-rxe: $*" >&2
    exit 99
}

# Each exec of a host binary costs a few hundred ms under emulation: one `ip -batch`, builtins below.
ip -batch - <<'IP' || fail "cannot set up the veth pair v0/v1 (veth module?)"
link set lo up
link add v0 type veth peer name v1
addr add 198.18.77.1/24 dev v0
link set v0 up
link set v1 up
IP
rdma link add rxe0 type rxe netdev v0 || fail "rdma link add rxe0 failed (rdma_rxe, crc32_generic loaded?)"

# The GID table fills from netdev events; wait for the IPv4-mapped entry (::ffff:198.18.77.1).
gid_file=/sys/class/infiniband/rxe0/ports/1/gids/1
gid=
for ((i = 0; i < 50; i++)); do
    read -r gid <"$gid_file" 2>/dev/null
    case $gid in *ffff:c612:4d01) break ;; esac
    sleep 0.1
done
case $gid in
*ffff:c612:4d01) ;;
*) fail "rxe0 GID index 1 is not ::ffff:198.18.77.1 but $gid" ;;
esac
[ -e /dev/infiniband/uverbs0 ] || fail "/dev/infiniband/uverbs0 missing (ib_uverbs loaded?)"

# Verbs pins the buffers it registers; the default RLIMIT_MEMLOCK (8 MiB) is too small for tests.
ulimit -l unlimited || fail "ulimit -l unlimited failed"
ulimit -c 0

# shellcheck source=/dev/null
. "$rundir/job" || fail "cannot read $rundir/job"

# The guest's /tmp is its own tmpfs (see /init). Host paths under /tmp that the job names (its
# directory, SCRIPT, an argument, TMPDIR) are bound in from the host's /tmp, by their top directory.
host_tmp=/run/ngauge-rxe/host-tmp
declare -A bound=()
bind_host_tmp() {
    local top
    case $1 in /tmp/?*) ;; *) return 0 ;; esac
    top=${1#/tmp/}
    top=${top%%/*}
    [ -z "${bound[$top]:-}" ] && [ -e "$host_tmp/$top" ] && [ ! -e "/tmp/$top" ] || return 0
    bound[$top]=1
    if [ -d "$host_tmp/$top" ]; then mkdir "/tmp/$top"; else : >"/tmp/$top"; fi
    mount --bind "$host_tmp/$top" "/tmp/$top" || fail "cannot bind the host's /tmp/$top"
}
job_tmpdir=$(. "$rundir/env" && echo "${TMPDIR:-}")
for p in "$job_cwd" "$job_tmpdir" "${job_argv[@]}"; do
    bind_host_tmp "$p"
done
(
    # shellcheck source=/dev/null
    . "$rundir/env"
    export NGAUGE_RXE=1 NGAUGE_RXE_DEVICE=rxe0 NGAUGE_RXE_GID_INDEX=1 NGAUGE_RXE_ADDR=198.18.77.1
    cd "$job_cwd" || exit 99
    exec "${job_argv[@]}"
) </dev/null >"$rundir/stdout" 2>"$rundir/stderr"
rc=$?
echo "$rc" >"$rundir/status"
exit "$rc"
