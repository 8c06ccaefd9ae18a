# Sourced by mkinitrd.sh and vm-run.sh: which installed kernel the Soft-RoCE guest boots.
#
# NGAUGE_RXE_KVER picks one; otherwise the newest /boot/vmlinuz-<ver> that has a matching
# /lib/modules/<ver>/modules.dep. The running kernel is irrelevant (in a container it is the
# host's). Prints nothing and returns 1 when no usable kernel is installed.
rxe_kernel_version() {
    local v
    if [ -n "${NGAUGE_RXE_KVER:-}" ]; then
        [ -r "/boot/vmlinuz-$NGAUGE_RXE_KVER" ] && [ -r "/lib/modules/$NGAUGE_RXE_KVER/modules.dep" ] || return 1
        printf '%s\n' "$NGAUGE_RXE_KVER"
        return 0
    fi
    for v in $(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -rV); do
        if [ -r "/boot/vmlinuz-$v" ] && [ -r "/lib/modules/$v/modules.dep" ] &&
           [ -n "$(find "/lib/modules/$v" -name 'rdma_rxe.ko*' -print -quit)" ]; then
            printf '%s\n' "$v"
            return 0
        fi
    done
    return 1
}
