# Sourced by the scripts that run inside the Soft-RoCE guest (selftest.sh, verbs-suite.sh).

# wait_listen PORT PID: until something listens on TCP PORT, or PID exits, or 30 s pass.
wait_listen() {
    local hex i f sl local_addr rem st rest
    hex=$(printf '%04X' "$1")
    for ((i = 0; i < 300; i++)); do
        kill -0 "$2" 2>/dev/null || return 1
        for f in /proc/net/tcp /proc/net/tcp6; do
            while read -r sl local_addr rem st rest; do
                [ "$st" = 0A ] && [ "${local_addr##*:}" = "$hex" ] && return 0
            done <"$f"
        done
        sleep 0.1
    done
    return 1
}
