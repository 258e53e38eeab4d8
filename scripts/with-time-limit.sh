#!/usr/bin/env bash
# Runs one phase of `make test` under a time limit, so a hang fails the run with a clear message
# instead of holding CI until its own limit. Output is streamed as it comes (and kept in a log);
# when the limit strikes, the whole process group is stopped and the tests that had started but
# not finished are named.
#
#   scripts/with-time-limit.sh PHASE SECONDS COMMAND [ARGUMENTS…]
set -uo pipefail
phase=$1 limit=$2
shift 2
log=$(mktemp "/tmp/reachd-${phase}-XXXXXX.log")
started=$(date +%s)
# `timeout` signals the command's whole process group (test helpers and servers included);
# whatever ignores SIGTERM gets SIGKILL 15 s later.
timeout --kill-after=15 "$limit" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - started))
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    echo
    echo "TIME LIMIT: phase '$phase' was still running after ${limit} s and was stopped: $*"
    # Swift Testing prints "◇ Test NAME started." and later "✔/✘ Test NAME passed/failed";
    # pytest -v prints "FILE::TEST" when a test starts and its verdict when it ends.
    python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
started = re.findall(r"Test (\S+\(.*?\)) started", text)
ended = set(re.findall(r"Test (\S+\(.*?\)) (?:passed|failed|skipped)", text))
running = [name for name in dict.fromkeys(started) if name not in ended]
lines = text.rstrip("\n").split("\n")
if not running and lines and "::" in lines[-1] and not re.search(r"(PASSED|FAILED|SKIPPED|ERROR)", lines[-1]):
    running = [lines[-1].split()[0]]
print("still running: " + (", ".join(running) if running else "(no test had started: the phase itself hung)"))
PY
    rm -f "$log"
    exit 1
fi
rm -f "$log"
echo "phase '$phase': exit $status after ${elapsed} s"
exit "$status"
