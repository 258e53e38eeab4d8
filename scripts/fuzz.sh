#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/, declared in Package.swift when REACHD_FUZZ is set) with
# AddressSanitizer in .build-fuzz, and runs each on its corpus. Fails when any target finds a
# crash, a leak, a timeout (10 s for one input) or runs out of memory; the input is saved in
# .build-fuzz/artifacts/TARGET/ and the report printed.
#
#   scripts/fuzz.sh [--runs N] [--seconds S] [--merge] [TARGET…]
#
# --runs N      stop each target after N inputs (default: no limit)
# --seconds S   stop each target after S seconds (default: no limit; give one or both)
# --merge       instead of fuzzing: add to Fuzz/Corpus/TARGET what the runs found
#               (.build-fuzz/corpus/TARGET) that covers more (libFuzzer -merge=1; up to 2 KiB each)
#
# Each target reads Fuzz/Corpus/TARGET (seeds: real recorded input, minimized), Fuzz/Regressions/
# TARGET (every input that once found a defect: replayed first, never merged away) and writes what
# it finds new into .build-fuzz/corpus/TARGET, which persists between runs.
set -uo pipefail
cd "$(dirname "$0")/.."

runs="" seconds="" merge=false targets=()
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --merge) merge=true; shift ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(FuzzNetlink FuzzRequestRouter FuzzClient FuzzTargetSpec FuzzWebConfig)
if ! $merge && [ -z "$runs" ] && [ -z "$seconds" ]; then
    echo "give --runs N, --seconds S or both" >&2
    exit 2
fi

# The largest input each target takes: recorded netlink traffic is a few dozen kilobytes.
declare -A max_len=([FuzzNetlink]=32768 [FuzzRequestRouter]=2048 [FuzzClient]=16384 [FuzzTargetSpec]=4096 [FuzzWebConfig]=4096)

scratch=.build-fuzz
# Release with testability (the targets reach internal types through @testable import); lld,
# because gold fails on the sanitizer runtime's symbols (Fuzz/toolset.json).
build=(swift build -c release --scratch-path "$scratch" --toolset Fuzz/toolset.json
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing)
started=$(date +%s)
for target in "${targets[@]}"; do
    # The sanitizer runtime's symbols make gold and lld warn by the hundred: kept out of the log.
    REACHD_FUZZ=1 nice -n 10 "${build[@]}" --product "$target" 2>&1 | grep -v "Cannot export local symbol"
    if [ "${PIPESTATUS[0]}" != 0 ]; then
        echo "fuzz: building $target failed"
        exit 1
    fi
done
echo "fuzz: built ${targets[*]} in $(($(date +%s) - started)) s"

bin=$(REACHD_FUZZ=1 "${build[@]}" --show-bin-path)
# Swift's own crash reporter would wait for a debugger-style handshake that never comes under
# libFuzzer; libFuzzer and AddressSanitizer report crashes themselves.
export SWIFT_BACKTRACE=enable=no

failed=()
for target in "${targets[@]}"; do
    corpus=$scratch/corpus/$target seeds=Fuzz/Corpus/$target regressions=Fuzz/Regressions/$target
    artifacts=$scratch/artifacts/$target/ log=$scratch/logs/$target.log
    mkdir -p "$corpus" "$seeds" "$regressions" "$artifacts" "$(dirname "$log")"
    if $merge; then
        # Finds are kept up to 2 KiB each (libFuzzer cuts longer ones), so the committed corpus
        # stays small; the seeds already there are kept whole.
        "$bin/$target" -merge=1 -max_len=2048 "$seeds" "$corpus" >"$log" 2>&1 ||
            { echo "fuzz: merging $target failed (see $log)"; failed+=("$target"); continue; }
        echo "fuzz: $target corpus: $(ls "$seeds" | wc -l) files, $(cat "$seeds"/* | wc -c) bytes"
        continue
    fi
    options=(-max_len="${max_len[$target]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$artifacts")
    [ -n "$runs" ] && options+=(-runs="$runs")
    [ -n "$seconds" ] && options+=(-max_total_time="$seconds")
    echo "fuzz: $target ${options[*]}"
    nice -n 5 "$bin/$target" "${options[@]}" "$corpus" "$seeds" "$regressions" >"$log" 2>&1
    status=$?
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
    executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    seconds_taken=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    coverage=$(sed -n 's/.*\(cov: [0-9]* ft: [0-9]* corp: [0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$done_line")
    if [ "$status" != 0 ]; then
        echo "fuzz: $target FAILED (exit $status) after ${executed:-?} inputs; report:"
        grep -E -A40 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|invariant violated|Fatal error' "$log" | head -60
        echo "fuzz: the input is in $artifacts; the whole log in $log"
        failed+=("$target")
    else
        echo "fuzz: $target ok: ${executed:-?} inputs in ${seconds_taken:-?} s, ${speed:-?} exec/s, ${coverage:-?}"
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}"
    exit 1
fi
echo "fuzz: every target passed in $(($(date +%s) - started)) s"
