#!/usr/bin/env bash
# reachd's benchmark, side by side with its peers (see bench/README.md). `make bench` runs this.
#
#   bash bench/run.sh            full run (about 29 minutes); writes docs/reports/benchmarks.md
#                                and bench/results/latest.json
#   bash bench/run.sh --quick    smoke run (N=1000 only, 50 flaps, 10 s idle); writes
#                                bench/results/quick.{md,json} and leaves docs/reports/ alone
#   bash bench/run.sh --quick --seconds 2    the same with every measuring window at most 2 s:
#                                shows each phase runs after a change to bench/
#   REACHD_BIN=path/to/reachd bash bench/run.sh   use that binary instead of building one
#   bash bench/run.sh --only fleet --fleet-sizes 100,1000   reachd next to blackbox_exporter,
#                                at those sizes (bench/README.md, *The fleet phase*)
#
# Needs root (network namespaces). Installs what is missing from Debian: nginx with the nchan
# module, prometheus-blackbox-exporter and prometheus, wrk, a C compiler, iproute2, procps.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
. bench/common.sh
bench_require_root bench/run.sh 1

# Only a full run of every phase rewrites docs/reports/benchmarks.md; --quick, --only and
# --seconds write to bench/results/.
PARTIAL=0
for arg in "$@"; do case "$arg" in --quick|--only|--only=*|--fanout-ns*|--reps*|--seconds*|--fleet-*) PARTIAL=1 ;; esac; done

# ---- peers and tools
bench_install_missing bench peers

# ---- reachd (release) and the C client
BUILD_START=$(date +%s)
PREBUILT=1
if [ -z "${REACHD_BIN:-}" ]; then
    PREBUILT=0
    bench_release_build
    REACHD_BIN="$(bench_release_build --show-bin-path)/reachd"
fi
[ -x "$REACHD_BIN" ] || { echo "bench: no reachd binary at $REACHD_BIN" >&2; exit 1; }
WORK=$(mktemp -d /tmp/reachd-bench-bin.XXXXXX)
cc -O2 -o "$WORK/sseclient" bench/sseclient.c
cc -O2 -pthread -o "$WORK/floor" bench/floor.c
BUILD_SECONDS=$(( $(date +%s) - BUILD_START ))

# ---- limits, and cleanup in every outcome (bench/common.sh)
bench_raise_file_limit
bench_clean_up_on_exit "$WORK"

# ---- the whole run must fit in 31 minutes: the measuring gets what the build left, less a margin
# (15 minutes left too little after a build for the dual-stack targets and the DNS check, the
# phases issue 18 added: the first full run with a build skipped the dual-stack comparison; 17
# left too little once the uplinks phase of issue 26 came, about 1.6 minutes more; 19 became 31
# with the fleet phase of issue 28, about 12 minutes at every size)
ELAPSED=$(( $(date +%s) - START ))
BUDGET=$(( 31 * 60 - ELAPSED - 45 ))
[ "$BUDGET" -gt 120 ] || BUDGET=120

ARGS=(--reachd "$REACHD_BIN" --client "$WORK/sseclient" --floor "$WORK/floor" --budget "$BUDGET" --build-seconds "$ELAPSED")
[ "$PREBUILT" = 0 ] || ARGS+=(--prebuilt)
if [ "$PARTIAL" = 0 ]; then
    ARGS+=(--markdown "$ROOT/docs/reports/benchmarks.md")
fi
bench_run_forwarding_signals python3 bench/bench.py "${ARGS[@]}" "$@"
echo "bench: total $(( $(date +%s) - START )) s"
exit "$BENCH_STATUS"
