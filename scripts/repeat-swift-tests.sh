#!/usr/bin/env bash
# Runs the whole Swift test suite N times in a row (default 30) while two busy loops keep both
# cores loaded, and reports how many runs passed, the slowest run, hangs (runs stopped by the
# per-run time limit) and leftover namespaces. The proof for "the suite cannot hang".
#
#   scripts/repeat-swift-tests.sh [RUNS] [LIMIT_SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30} limit=${2:-600}
swift build --build-tests >/dev/null || exit 1
yes >/dev/null & load1=$!
yes >/dev/null & load2=$!
trap 'kill $load1 $load2 2>/dev/null' EXIT
passed=0 hung=0 slowest=0 leftovers=0
for run in $(seq 1 "$runs"); do
    started=$(date +%s.%N)
    timeout --kill-after=10 "$limit" swift test --skip-build >"/tmp/reachd-repeat-$run.log" 2>&1
    status=$?
    seconds=$(echo "$(date +%s.%N) - $started" | bc)
    left=$(ip netns list 2>/dev/null | grep -c '^rt-' || true)
    [ "$status" = 0 ] && passed=$((passed + 1))
    { [ "$status" = 124 ] || [ "$status" = 137 ]; } && hung=$((hung + 1))
    leftovers=$((leftovers + left))
    if (($(echo "$seconds > $slowest" | bc))); then slowest=$seconds; fi
    echo "run $run: exit $status in ${seconds} s, namespaces left: $left"
    [ "$status" = 0 ] && rm -f "/tmp/reachd-repeat-$run.log"
    bash scripts/remove-stale-namespaces.sh >/dev/null
done
echo "repeat: $passed/$runs passed, $hung hung, slowest ${slowest} s, leftover namespaces $leftovers"
[ "$passed" = "$runs" ]
