#!/usr/bin/env bash
# bench-ab: the working tree's release reachd against BASE's, interleaved in one run, with a
# verdict per figure (bench/README.md, "A/B against an older commit"). `make bench-ab` runs this.
#
#   bash bench/ab.sh [BASE]     BASE: a commit (default origin/main if that ref exists, else HEAD~1)
#   NEW_BIN=path BASE_BIN=path bash bench/ab.sh [BASE]    skip either build
#   AB_REPS=N                   repetitions (default 5; at least 3 always run)
#
# BASE is built in a git worktree, .build-ab/base-<sha>, with its own .build (kept: the next run
# against the same BASE rebuilds warm); the working tree in .build. Needs root (network
# namespaces). Exit 0: no figure worse than its noise; 1: one is; 2: the run could not measure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
[ "$(id -u)" = 0 ] || { echo "bench/ab.sh: needs root (it creates network namespaces)" >&2; exit 2; }
git() { command git -c safe.directory="$ROOT" "$@"; }

# ---- tools (what bench/run.sh installs, less nginx: no peer here)
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v ip >/dev/null || need+=(iproute2)
command -v sysctl >/dev/null || need+=(procps)
command -v cc >/dev/null || need+=(gcc libc6-dev)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    echo "bench-ab: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# ---- which commits
BASE_REF=${1:-${BASE:-}}
if [ -z "$BASE_REF" ]; then
    if git rev-parse -q --verify 'origin/main^{commit}' >/dev/null; then BASE_REF=origin/main; else BASE_REF=HEAD~1; fi
fi
BASE_SHA=$(git rev-parse -q --verify "$BASE_REF^{commit}") || { echo "bench-ab: no commit $BASE_REF" >&2; exit 2; }
BASE_SHORT=$(git rev-parse --short=9 "$BASE_SHA")
NEW_SHORT=$(git rev-parse --short=9 HEAD)
NEW_LABEL=$NEW_SHORT
NEW_WHAT="the working tree at $NEW_SHORT"
if [ -n "$(git status --porcelain --untracked-files=no -- . ':(exclude)docs/reports')" ]; then
    NEW_LABEL="$NEW_SHORT-dirty"
    NEW_WHAT="the working tree at $NEW_SHORT with uncommitted changes"
fi
BASE_LABEL=$BASE_SHORT
BASE_WHAT="$BASE_REF ($BASE_SHORT)"
case "$BASE_SHA" in "$BASE_REF"*) BASE_WHAT="commit $BASE_SHORT" ;; esac

# ---- the two binaries: the same build users get (`make release`, the Dockerfile)
build() { swift build -c release --static-swift-stdlib "$@"; }
if [ -n "${NEW_BIN:-}" ]; then
    NEW_WHAT="$NEW_BIN (NEW_BIN)"; NEW_LABEL="new-bin"
else
    echo "bench-ab: building the working tree ($NEW_LABEL)"
    build
    NEW_BIN="$(build --show-bin-path)/reachd"
fi
if [ -n "${BASE_BIN:-}" ]; then
    BASE_WHAT="$BASE_BIN (BASE_BIN)"
    [ -n "${1:-${BASE:-}}" ] || BASE_LABEL="base-bin"
else
    WT=.build-ab/base-$BASE_SHORT
    git worktree prune
    # Reused when it is a worktree (a .git file) at that commit.
    if [ ! -f "$WT/.git" ] || [ "$(git -C "$WT" rev-parse HEAD 2>/dev/null)" != "$BASE_SHA" ]; then
        if [ -e "$WT" ]; then git worktree remove --force "$WT" 2>/dev/null || rm -rf "$WT"; git worktree prune; fi
        git worktree add --detach "$WT" "$BASE_SHA"
    fi
    # Package.resolved is git-ignored: the working tree's pins, so both builds link the same
    # dependency versions and resolve from SwiftPM's cache, offline. SwiftPM re-resolves if BASE's
    # Package.swift asks for other versions.
    [ -f "$WT/Package.resolved" ] || [ ! -f Package.resolved ] || cp Package.resolved "$WT/"
    echo "bench-ab: building $BASE_WHAT in $WT"
    (cd "$WT" && build)
    BASE_BIN="$(cd "$WT" && build --show-bin-path)/reachd"
fi
for bin in "$NEW_BIN" "$BASE_BIN"; do [ -x "$bin" ] || { echo "bench-ab: no reachd binary at $bin" >&2; exit 2; }; done
WORK=$(mktemp -d /tmp/reachd-ab-bin.XXXXXX)
cc -O2 -o "$WORK/sseclient" bench/sseclient.c
BUILD_SECONDS=$(( $(date +%s) - START ))

# ---- limits: 5,000 clients + servers in one session
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# ---- cleanup in every outcome, as bench/run.sh does: processes in our namespaces, then the
#      namespaces and their /etc/netns/<ns>/ files (scripts/remove-stale-namespaces.sh knows rb<pid>-)
export REACHD_BENCH_TAG="rb$$"
cleanup() {
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${REACHD_BENCH_TAG}-" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf /etc/netns/"${REACHD_BENCH_TAG}"-* 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# ---- the measuring gets what the build left of 10 minutes, less a margin, but never less than
#      its first 3 repetitions need (a cold build of BASE alone can take longer than 10 minutes)
BUDGET=$(( 10 * 60 - BUILD_SECONDS - 30 ))
[ "$BUDGET" -gt 300 ] || BUDGET=300
echo "bench-ab: base $BASE_WHAT, new $NEW_WHAT; built in ${BUILD_SECONDS} s, measuring budget ${BUDGET} s"
python3 bench/ab.py --base-bin "$BASE_BIN" --new-bin "$NEW_BIN" --client "$WORK/sseclient" \
    --base-label "$BASE_LABEL" --new-label "$NEW_LABEL" --base-what "$BASE_WHAT" --new-what "$NEW_WHAT" \
    --reps "${AB_REPS:-5}" --budget "$BUDGET" &
AB_PID=$!
trap 'kill -INT "$AB_PID" 2>/dev/null; wait "$AB_PID"; exit 130' INT
trap 'kill -TERM "$AB_PID" 2>/dev/null; wait "$AB_PID"; exit 143' TERM HUP
STATUS=0
wait "$AB_PID" || STATUS=$?
echo "bench-ab: total $(( $(date +%s) - START )) s (build ${BUILD_SECONDS} s)"
exit "$STATUS"
