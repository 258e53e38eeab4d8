#!/usr/bin/env bash
# reachd's benchmark, side by side with its peers (see bench/README.md). `make bench` runs this.
#
#   bash bench/run.sh            full run (about 12 minutes); writes docs/reports/benchmarks.md
#                                and bench/results/latest.json
#   bash bench/run.sh --quick    smoke run (N=1000 only, 50 flaps, 10 s idle); writes
#                                bench/results/quick.{md,json} and leaves docs/reports/ alone
#   REACHD_BIN=path/to/reachd bash bench/run.sh   use that binary instead of building one
#
# Needs root (network namespaces). Installs what is missing from Debian: nginx with the nchan
# module, wrk, a C compiler, iproute2, procps.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
SUDO=""
[ "$(id -u)" = 0 ] || { echo "bench/run.sh: needs root (it creates network namespaces)" >&2; exit 1; }

# Only a full run of every phase rewrites docs/reports/benchmarks.md; --quick and --only write to
# bench/results/.
PARTIAL=0
for arg in "$@"; do case "$arg" in --quick|--only|--only=*|--fanout-ns*|--reps*) PARTIAL=1 ;; esac; done

# ---- peers and tools (Debian 12: the nchan module's ABI matches the `nginx` package)
need=()
command -v nginx >/dev/null || need+=(nginx)
[ -f /usr/lib/nginx/modules/ngx_nchan_module.so ] || need+=(libnginx-mod-nchan)
command -v wrk >/dev/null || need+=(wrk)
command -v ip >/dev/null || need+=(iproute2)
command -v sysctl >/dev/null || need+=(procps)
command -v cc >/dev/null || need+=(gcc libc6-dev)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    echo "bench: installing ${need[*]}"
    # policy-rc.d-less machines would start the system nginx on install; the bench never uses it.
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# ---- reachd (release) and the C client
BUILD_START=$(date +%s)
PREBUILT=1
if [ -z "${REACHD_BIN:-}" ]; then
    PREBUILT=0
    # The build users get from `make run` and the Dockerfile: Swift runtime linked statically.
    swift build -c release --static-swift-stdlib
    REACHD_BIN="$(swift build -c release --static-swift-stdlib --show-bin-path)/reachd"
fi
[ -x "$REACHD_BIN" ] || { echo "bench: no reachd binary at $REACHD_BIN" >&2; exit 1; }
WORK=$(mktemp -d /tmp/reachd-bench-bin.XXXXXX)
cc -O2 -o "$WORK/sseclient" bench/sseclient.c
cc -O2 -pthread -o "$WORK/floor" bench/floor.c
BUILD_SECONDS=$(( $(date +%s) - BUILD_START ))

# ---- limits: 10,000 clients + servers in one session
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# ---- cleanup in every outcome: processes in our namespaces, then the namespaces and their
#      /etc/netns/<ns>/ files
export REACHD_BENCH_TAG="rb$$"
cleanup() {
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${REACHD_BENCH_TAG}-" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    # What `ip netns exec` bind-mounts over /etc (hosts, resolv.conf) for our namespaces.
    rm -rf /etc/netns/"${REACHD_BENCH_TAG}"-* 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# ---- the whole run must fit in 17 minutes: the measuring gets what the build left, less a margin
# (15 minutes left too little after a build for the dual-stack targets and the DNS check, the
# phases issue 18 added: the first full run with a build skipped the dual-stack comparison)
ELAPSED=$(( $(date +%s) - START ))
BUDGET=$(( 17 * 60 - ELAPSED - 45 ))
[ "$BUDGET" -gt 120 ] || BUDGET=120

ARGS=(--reachd "$REACHD_BIN" --client "$WORK/sseclient" --floor "$WORK/floor" --budget "$BUDGET" --build-seconds "$ELAPSED")
[ "$PREBUILT" = 0 ] || ARGS+=(--prebuilt)
if [ "$PARTIAL" = 0 ]; then
    ARGS+=(--markdown "$ROOT/docs/reports/benchmarks.md")
fi
# In the background so that a signal reaches this script at once: it is passed on to bench.py,
# which cleans up after itself, and then the EXIT trap sweeps whatever is left.
python3 bench/bench.py "${ARGS[@]}" "$@" &
BENCH_PID=$!
trap 'kill -INT "$BENCH_PID" 2>/dev/null; wait "$BENCH_PID"; exit 130' INT
trap 'kill -TERM "$BENCH_PID" 2>/dev/null; wait "$BENCH_PID"; exit 143' TERM HUP
STATUS=0
wait "$BENCH_PID" || STATUS=$?
echo "bench: total $(( $(date +%s) - START )) s"
exit "$STATUS"
