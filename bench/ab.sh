#!/usr/bin/env bash
# bench-ab: the working tree's release reachd against BASE's, interleaved in one run, with a
# verdict per figure (bench/README.md, "A/B against an older commit"). `make bench-ab` runs this.
#
#   bash bench/ab.sh [BASE]     BASE: a commit (default origin/main if that ref exists, else HEAD~1)
#   NEW_BIN=path BASE_BIN=path bash bench/ab.sh [BASE]    skip either build
#   AB_REPS=N                   repetitions (default 5; at least 3 always run)
#   AUTH=1 bash bench/ab.sh     the working tree's reachd without and with basic auth (/status rows)
#   AB_INSTRUCTIONS=0           skip the instruction counts that follow the wall-clock phases
#                               (bench/instructions.py under callgrind, 3-4 minutes)
#
# BASE is built in a git worktree, .build-ab/base-<sha>, with its own .build (kept: the next run
# against the same BASE rebuilds warm); the working tree in .build. Needs root (network
# namespaces). Exit 0: no figure worse than its noise and no instruction count above 1.02× base's;
# 1: one is; 2: the run could not measure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
. bench/common.sh
bench_require_root bench/ab.sh 2
git() { command git -c safe.directory="$ROOT" "$@"; }

# ---- tools (what bench/run.sh installs, less nginx: no peer here; valgrind for the instruction counts)
INSTRUCTION_ARGS=()
if [ "${AB_INSTRUCTIONS:-1}" = 0 ]; then
    INSTRUCTION_ARGS=(--no-instructions)
    bench_install_missing bench-ab
else
    bench_install_missing bench-ab instructions
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
build() { bench_release_build "$@"; }
if [ -n "${NEW_BIN:-}" ]; then
    NEW_WHAT="$NEW_BIN (NEW_BIN)"; NEW_LABEL="new-bin"
else
    echo "bench-ab: building the working tree ($NEW_LABEL)"
    build
    NEW_BIN="$(build --show-bin-path)/reachd"
fi
AUTH_ARGS=()
if [ -n "${AUTH:-}" ] && [ "$AUTH" != 0 ]; then
    # One binary on both sides: what basic auth costs, not what a commit changed.
    BASE_BIN=$NEW_BIN
    BASE_WHAT="$NEW_WHAT without a web config"; BASE_LABEL="$NEW_LABEL-auth-off"
    NEW_WHAT="$NEW_WHAT with basic auth (one bcrypt user, cost 10)"; NEW_LABEL="$NEW_LABEL-auth-on"
    AUTH_ARGS=(--auth)
elif [ -n "${BASE_BIN:-}" ]; then
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

# ---- limits, and cleanup in every outcome (bench/common.sh)
bench_raise_file_limit
bench_clean_up_on_exit "$WORK"

# ---- the wall-clock measuring gets what the build left of 10 minutes, less a margin, but never
#      less than its first 3 repetitions need (a cold build of BASE alone can take longer than 10
#      minutes); the instruction counts come after it, outside this budget
BUDGET=$(( 10 * 60 - BUILD_SECONDS - 30 ))
[ "$BUDGET" -gt 300 ] || BUDGET=300
echo "bench-ab: base $BASE_WHAT, new $NEW_WHAT; built in ${BUILD_SECONDS} s, measuring budget ${BUDGET} s"
bench_run_forwarding_signals python3 bench/ab.py --base-bin "$BASE_BIN" --new-bin "$NEW_BIN" --client "$WORK/sseclient" \
    --base-label "$BASE_LABEL" --new-label "$NEW_LABEL" --base-what "$BASE_WHAT" --new-what "$NEW_WHAT" \
    --reps "${AB_REPS:-5}" --budget "$BUDGET" "${AUTH_ARGS[@]}" "${INSTRUCTION_ARGS[@]}"
echo "bench-ab: total $(( $(date +%s) - START )) s (build ${BUILD_SECONDS} s)"
exit "$BENCH_STATUS"
