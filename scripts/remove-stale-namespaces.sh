#!/usr/bin/env bash
# Deletes network namespaces that test runs left behind: the Swift suites name theirs
# `rt-<pid>-<n>`, the pytest suite `e2e-<pid>-…`, bench `bench-<pid>-…`, check-runtime-image.sh
# `image-<pid>-check`, measure-limits.py `limits-<pid>-m`, the fuzz corpus recorders
# (Fuzz/record-*.py) `fuzz-<pid>-…`. A namespace whose process is gone is a leftover (a killed or
# crashed run); any of a live process is kept.
# Prints what it removed and exits 1 if anything was left behind, so `make test` notices leaks.
set -uo pipefail
leaked=0
for name in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    if [[ $name =~ ^(rt|e2e|bench|image|limits|fuzz)-([0-9]+)- ]]; then
        pid=${BASH_REMATCH[2]}
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "leftover namespace removed: $name"
            ip netns delete "$name" 2>/dev/null || true
            leaked=1
        fi
    fi
done
exit $leaked
