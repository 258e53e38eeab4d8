# What bench/run.sh (`make bench`) and bench/ab.sh (`make bench-ab`) both do before and after
# their Python measures: one copy, so the two runs build, clean up and forward signals alike.
# Sourced, never run; each function says what its caller relies on.

# Refuses to go on without root: every server runs in a network namespace the bench creates.
# $1: the script's name for the message; $2: its exit status.
bench_require_root() {
    [ "$(id -u)" = 0 ] || { echo "$1: needs root (it creates network namespaces)" >&2; exit "$2"; }
}

# Installs from Debian what is missing: wrk, iproute2, procps, a C compiler, python3, and with
# "peers" nginx and its nchan module (Debian 12: the nchan module's ABI matches the `nginx`
# package), and blackbox_exporter with the Prometheus that scrapes it (phase fleet); with
# "instructions" valgrind (bench-ab's instruction counts, bench/instructions.py). $1: the
# prefix of the message.
bench_install_missing() {
    local need=()
    if [ "${2:-}" = instructions ]; then
        command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || need+=(valgrind)
        command -v strip >/dev/null || need+=(binutils)
    fi
    if [ "${2:-}" = peers ]; then
        command -v nginx >/dev/null || need+=(nginx)
        [ -f /usr/lib/nginx/modules/ngx_nchan_module.so ] || need+=(libnginx-mod-nchan)
        command -v prometheus-blackbox-exporter >/dev/null || need+=(prometheus-blackbox-exporter)
        command -v prometheus >/dev/null || need+=(prometheus)
    fi
    command -v wrk >/dev/null || need+=(wrk)
    command -v ip >/dev/null || need+=(iproute2)
    command -v sysctl >/dev/null || need+=(procps)
    command -v cc >/dev/null || need+=(gcc libc6-dev)
    command -v python3 >/dev/null || need+=(python3)
    if [ ${#need[@]} -gt 0 ]; then
        echo "$1: installing ${need[*]}"
        # policy-rc.d-less machines would start the system nginx (and prometheus, blackbox_exporter)
        # on install; the bench never uses them: its own run as processes in its namespaces.
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    fi
}

# The release build users get from `make run`, `make release` and the Dockerfile: the Swift
# runtime linked statically. Arguments go to `swift build` (`--show-bin-path`).
bench_release_build() {
    swift build -c release --static-swift-stdlib "$@"
}

# Up to 10,000 clients and the servers share this session's open-file limit.
bench_raise_file_limit() {
    ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
}

# Tags this run's namespaces `rb<pid>-*` (REACHD_BENCH_TAG, read by nsutil.py;
# scripts/remove-stale-namespaces.sh knows the prefix) and, on every exit, kills the processes
# left in them, deletes them and the /etc/netns/<ns>/ files `ip netns exec` mounts over /etc,
# and removes the directory $1 (the compiled clients).
bench_clean_up_on_exit() {
    export REACHD_BENCH_TAG="rb$$"
    BENCH_WORK=$1
    trap bench_clean_up EXIT
}

bench_clean_up() {
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${REACHD_BENCH_TAG}-" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf /etc/netns/"${REACHD_BENCH_TAG}"-* 2>/dev/null || true
    rm -rf "$BENCH_WORK"
}

# Runs the command in the background so that a signal reaches this script at once: it is passed
# on to the command (bench.py and ab.py clean up after themselves), then the EXIT trap sweeps
# whatever is left. The command's exit status is left in BENCH_STATUS.
bench_run_forwarding_signals() {
    "$@" &
    BENCH_CHILD=$!
    trap 'kill -INT "$BENCH_CHILD" 2>/dev/null; wait "$BENCH_CHILD"; exit 130' INT
    trap 'kill -TERM "$BENCH_CHILD" 2>/dev/null; wait "$BENCH_CHILD"; exit 143' TERM HUP
    BENCH_STATUS=0
    wait "$BENCH_CHILD" || BENCH_STATUS=$?
}
