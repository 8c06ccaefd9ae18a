#!/usr/bin/env bash
# vm-run.sh [--timeout SECONDS] SCRIPT [ARGS...]
#
# Boot the installed Debian kernel in QEMU (software emulation, no KVM needed) with a Soft-RoCE device
# rxe0, and run SCRIPT ARGS inside it as root, in the host's current directory, against the host's own
# files (the guest chroots into the host's root, shared read-write over 9p). See README.md.
#
# Exit status: SCRIPT's; 77 when QEMU or a kernel with rdma_rxe is not installed (Meson's "skipped");
# 99 when the harness fails (the VM does not boot, the device cannot be set up, the timeout hits).
# SCRIPT's stdout and stderr arrive on ours; the guest console goes to a log whose tail is printed on
# stderr when anything fails.
#
# Environment: NGAUGE_*, PATH, LD_LIBRARY_PATH, HOME, LANG, LC_*, TZ, TMPDIR, MESON_*, *SAN_OPTIONS,
# MALLOC_PERTURB_, RDMAV_*, IBV_* pass through to SCRIPT, and so do the names in NGAUGE_RXE_PASSENV.
# SCRIPT also sees NGAUGE_RXE=1, NGAUGE_RXE_DEVICE=rxe0, NGAUGE_RXE_GID_INDEX=1,
# NGAUGE_RXE_ADDR=198.18.77.1. Knobs: NGAUGE_RXE_TIMEOUT (seconds, default 300), NGAUGE_RXE_SMP
# (vCPUs, default 2), NGAUGE_RXE_MEM (default 2G), NGAUGE_RXE_9P_CACHE (cache mode of the shared root
# in the guest, default loose), NGAUGE_RXE_CACHE (initramfs cache directory), NGAUGE_RXE_KVER (kernel
# version), NGAUGE_RXE_QEMU (QEMU binary), NGAUGE_RXE_APPEND (more kernel arguments),
# NGAUGE_RXE_KEEP=1 (keep the run directory and console log), NGAUGE_RXE_BOOT_LIMIT (seconds the kernel has
# to start /init before the guest is booted once more, default 120), NGAUGE_RXE_ICOUNT (QEMU's -icount
# argument, e.g. "shift=2,sleep=off": the guest's clock counts executed instructions, 2^shift ns each, and
# jumps to the next timer's deadline whenever the guest idles, so a timer (netem's) fires at its deadline
# exactly on the guest's clock, whatever the host's load; single-threaded emulation, one vCPU advised).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"

usage() {
    echo "usage: vm-run.sh [--timeout SECONDS] SCRIPT [ARGS...]" >&2
    exit 2
}
skip() {
    echo "vm-run.sh: SKIP: $*" >&2
    exit 77
}
die() {
    echo "vm-run.sh: $*" >&2
    exit 99
}

timeout=${NGAUGE_RXE_TIMEOUT:-300}
while [ $# -gt 0 ]; do
    case $1 in
    --timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
    --timeout=*) timeout=${1#--timeout=}; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage
case $timeout in '' | *[!0-9]*) die "--timeout wants whole seconds, not '$timeout'" ;; esac

qemu=$(command -v "${NGAUGE_RXE_QEMU:-qemu-system-x86_64}") ||
    skip "${NGAUGE_RXE_QEMU:-qemu-system-x86_64} not installed (package qemu-system-x86)"
kver=$(rxe_kernel_version) || skip "no installed kernel with rdma_rxe (/boot/vmlinuz-* and /lib/modules/*)"
command -v "$1" >/dev/null || { echo "vm-run.sh: $1: not found" >&2; exit 127; }

cachedir=${NGAUGE_RXE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/ngauge-rxe}
initrd=$(NGAUGE_RXE_KVER=$kver "$here/mkinitrd.sh" "$cachedir") || die "could not build the initramfs"

# The run directory travels on the kernel command line, so its path must have no blanks.
tmp=${TMPDIR:-/tmp}
case $tmp in *[[:space:]]*) tmp=/tmp ;; esac
rundir=$(mktemp -d "$tmp/ngauge-rxe.XXXXXX") || die "mktemp failed in $tmp"
rundir=$(cd "$rundir" && pwd -P)
qpid= t1= t2=
cleanup() {
    [ -n "$qpid" ] && kill "$qpid" 2>/dev/null
    [ -n "$t1$t2" ] && kill $t1 $t2 2>/dev/null
    if [ "${NGAUGE_RXE_KEEP:-0}" = 1 ]; then
        echo "vm-run.sh: kept $rundir" >&2
    else
        rm -rf "$rundir"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cp "$here/guest.sh" "$rundir/guest.sh"
{
    printf 'job_cwd=%q\n' "$(pwd -P)"
    printf 'job_argv=('
    printf ' %q' "$@"
    printf ' )\n'
} >"$rundir/job"
{
    for name in $(compgen -e) ${NGAUGE_RXE_PASSENV:-}; do
        case $name in
        NGAUGE_* | PATH | LD_LIBRARY_PATH | HOME | LANG | LC_* | TZ | TMPDIR | MESON_* | *SAN_OPTIONS | \
            MALLOC_PERTURB_ | RDMAV_* | IBV_*) ;;
        *) case " ${NGAUGE_RXE_PASSENV:-} " in *" $name "*) ;; *) continue ;; esac ;;
        esac
        [ -n "${!name+set}" ] && printf 'export %s=%q\n' "$name" "${!name}"
    done
} >"$rundir/env"
: >"$rundir/stdout"
: >"$rundir/stderr"

# 9p passthrough stores the guest's owners and modes for real, which needs a root QEMU; as an ordinary
# user, "none" lets files be created with the user's identity (ownership changes then fail quietly).
model=passthrough
[ "$(id -u)" = 0 ] || model=none

kernel=$cachedir/vmlinux   # PVH boot, see mkinitrd.sh
[ -s "$kernel" ] || kernel=/boot/vmlinuz-$kver
smp=${NGAUGE_RXE_SMP:-2}
ninep_cache=${NGAUGE_RXE_9P_CACHE:-loose}
accel=tcg
[ "$smp" -gt 1 ] && accel=tcg,thread=multi
icount=()
if [ -n "${NGAUGE_RXE_ICOUNT:-}" ]; then
    accel=tcg
    icount=(-icount "$NGAUGE_RXE_ICOUNT")
fi

# The emulated kernel has been seen to stall in its own boot (TCG, two vCPUs: once in CI, at "clocksource:
# Switched to clocksource hpet", for the whole timeout). Its boot is not what is tested: a guest that has not
# started /init within boot_limit seconds is said so, with its console's last line, and booted once more.
boot_limit=${NGAUGE_RXE_BOOT_LIMIT:-120}
start=$(date +%s.%N)
for attempt in 1 2; do
    left=$((timeout - ${SECONDS:-0}))
    [ "$left" -gt 10 ] || left=10
    timeout -k 10 "$left" "$qemu" \
        -accel "$accel" "${icount[@]}" -cpu max -smp "$smp" -m "${NGAUGE_RXE_MEM:-2G}" \
        -nographic -no-reboot -net none \
        -kernel "$kernel" -initrd "$initrd" \
        -append "console=ttyS0 panic=-1 mitigations=off ngauge.9pcache=$ninep_cache ngauge.rundir=$rundir ${NGAUGE_RXE_APPEND:-}" \
        -virtfs "local,path=/,mount_tag=host,security_model=$model,id=host,multidevs=remap" \
        -virtfs "local,path=$rundir,mount_tag=run,security_model=$model,id=run" \
        </dev/null >"$rundir/console.log" 2>&1 &
    qpid=$!
    [ "$attempt" = 2 ] && break
    # Until /init starts (the kernel says "Run /init"), or QEMU ends, or the limit.
    booted=0
    for _ in $(seq $((boot_limit * 4))); do
        if grep -q "Run /init as init process" "$rundir/console.log" 2>/dev/null; then booted=1; break; fi
        kill -0 "$qpid" 2>/dev/null || { booted=1; break; }
        sleep 0.25
    done
    [ "$booted" = 1 ] && break
    echo "vm-run.sh: the guest did not start /init within ${boot_limit}s (its console's last line:" \
        "$(tail -n 1 "$rundir/console.log" | tr -d '\r')); booting it again" >&2
    kill "$qpid" 2>/dev/null
    wait "$qpid" 2>/dev/null
done

# Relay SCRIPT's output as the guest writes it; tail reads to the end once QEMU has gone.
tail -n +1 -f --pid="$qpid" "$rundir/stdout" &
t1=$!
tail -n +1 -f --pid="$qpid" "$rundir/stderr" >&2 &
t2=$!
wait "$qpid"
qrc=$?
qpid=
wait "$t1" "$t2"
t1= t2=
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

console_tail() {
    if [ "${NGAUGE_RXE_KEEP:-0}" = 1 ]; then
        echo "vm-run.sh: last lines of the guest console ($rundir/console.log):" >&2
    else
        echo "vm-run.sh: last lines of the guest console (NGAUGE_RXE_KEEP=1 keeps all of it):" >&2
    fi
    tail -n 40 "$rundir/console.log" | sed 's/^/  | /' >&2
}

if [ -s "$rundir/status" ]; then
    rc=$(cat "$rundir/status")
    if [ "$rc" != 0 ]; then
        console_tail
        echo "vm-run.sh: $1 exited with status $rc (VM ran ${elapsed}s)" >&2
    fi
    exit "$rc"
fi
console_tail
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    die "timed out after ${timeout}s (set --timeout or NGAUGE_RXE_TIMEOUT)"
fi
marker=$(sed -n 's/^NGAUGE-RXE-EXIT \([0-9]*\).*/\1/p' "$rundir/console.log" | tail -n 1)
if [ -n "$marker" ]; then
    die "the guest could not run $1 (guest exit $marker, see the console above)"
fi
die "the VM failed (QEMU exit status $qrc, no exit marker from the guest)"
