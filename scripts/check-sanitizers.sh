#!/usr/bin/env bash
# Builds the Swift tests with one sanitizer, in a scratch directory of their own, and runs the
# whole suite (root: the kernel tests make namespaces). Fails on any sanitizer report, even when
# every test passes: a data race or a leak is a bug without a failing test.
#
#   scripts/check-sanitizers.sh thread    ThreadSanitizer, in .build-tsan
#   scripts/check-sanitizers.sh address   AddressSanitizer with LeakSanitizer, in .build-asan
#
# ThreadSanitizer: halt_on_error=0, so one run lists every race (the process still exits 66
# when there was one); history_size=7, the longest per-thread history (4M accesses): TSan drops
# a race whose earlier access has left that history (it cannot show its stack), and with the
# default it missed the self-check's deliberate race about half the time.
# Tests/sanitizers/tsan_mutex_annotations.c is preloaded: it shows TSan the slow path of Swift's
# own Mutex, which it cannot see (why: that file). No race is suppressed.
# AddressSanitizer stops at the first error (its default); LeakSanitizer checks at exit, with
# Tests/sanitizers/lsan-suppressions.txt (XCTest's runner only, each entry says why).
set -uo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:-}
case $sanitizer in
    thread) scratch=.build-tsan ;;
    address) scratch=.build-asan ;;
    *)
        echo "usage: $0 thread|address" >&2
        exit 2
        ;;
esac
toolchain=$(dirname "$(readlink -f "$(command -v swift)")")
tsan_options="halt_on_error=0 history_size=7 second_deadlock_stack=1"
log=$(mktemp "/tmp/reachd-sanitize-$sanitizer-XXXXXX.log")
trap 'rm -f "$log"' EXIT

# Prints how many sanitizer reports a log holds. (A report in an exit test's child process goes
# to its own, unobserved output; the child then exits non-zero and that test fails.)
count_reports() {
    grep -cE "^WARNING: ThreadSanitizer|^==[0-9]+==ERROR: (AddressSanitizer|LeakSanitizer)" "$1"
}

# The annotations' self-check: a contended Mutex alone must be clean with them, and a real race
# beside it must still be reported (exactly that one). Without them the Mutex alone is reported
# (TSan cannot see its slow path); if it no longer is, the toolchain may have fixed that.
check_mutex_annotations() {
    local program=$scratch/ContendedMutex preload=$PWD/$scratch/tsan_mutex_annotations.so output
    "$toolchain/clang" -O1 -Wall -Wextra -Werror -shared -fPIC -o "$preload" \
        Tests/sanitizers/tsan_mutex_annotations.c || return 1
    swiftc -sanitize=thread -g Tests/sanitizers/ContendedMutex.swift -o "$program" || return 1
    output=$(TSAN_OPTIONS=$tsan_options "$program" guarded 2>&1)
    if ! grep -q "WARNING: ThreadSanitizer" <<<"$output"; then
        echo "note: a contended Mutex was not reported without the annotations this time" \
            "(no contention, or the toolchain now shows TSan its slow path: then they can go)"
    fi
    output=$(LD_PRELOAD=$preload TSAN_OPTIONS=$tsan_options "$program" guarded 2>&1)
    if [ $? != 0 ] || grep -q "WARNING: ThreadSanitizer" <<<"$output"; then
        echo "$output"
        echo "FAILED: the annotations do not show TSan Mutex's slow path (a lock-only counter was reported)"
        return 1
    fi
    output=$(LD_PRELOAD=$preload TSAN_OPTIONS=$tsan_options "$program" unguarded 2>&1)
    if [ "$(grep -c "WARNING: ThreadSanitizer" <<<"$output")" != 1 ]; then
        echo "$output"
        echo "FAILED: with the annotations, TSan must report the one real race beside the Mutex"
        return 1
    fi
    echo "Mutex annotations: a contended Mutex is clean with them, a real race beside it is still reported"
}

started=$(date +%s)
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" || exit 1
built=$(date +%s)

if [ "$sanitizer" = thread ]; then
    check_mutex_annotations || exit 1
    environment=(
        LD_PRELOAD="$PWD/$scratch/tsan_mutex_annotations.so"
        TSAN_OPTIONS="$tsan_options"
    )
else
    environment=(
        ASAN_OPTIONS="detect_leaks=1 detect_stack_use_after_return=1"
        LSAN_OPTIONS="suppressions=$PWD/Tests/sanitizers/lsan-suppressions.txt print_suppressions=0"
    )
fi
checked=$(date +%s)
env "${environment[@]}" swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
finished=$(date +%s)

reports=$(count_reports "$log")
echo "sanitize-$sanitizer: build $((built - started)) s, self-check $((checked - built)) s," \
    "tests $((finished - checked)) s; swift test exit $status, $reports sanitizer report(s)"
[ "$status" = 0 ] && [ "$reports" = 0 ]
