#!/usr/bin/env bash
# Deletes network namespaces that test runs left behind: the Swift suites name theirs
# `rt-<pid>-<n>`, the pytest suite `e2e-<pid>-…`, bench/run.sh `rb<pid>-<n>`, check-runtime-image.sh
# `image-<pid>-check`, measure-limits.py `limits-<pid>-m`, the fuzz corpus recorders
# (Fuzz/record-*.py) `fuzz-<pid>-…`. A namespace whose process is gone is a leftover (a killed or
# crashed run); any of a live process is kept. So is its /etc/netns/<name> directory (the
# resolv.conf `ip netns exec` binds), removed with it.
# Prints what it removed and exits 1 if anything was left behind, so `make test` notices leaks.
# With --before (the first step of `make test`): removes what an earlier, interrupted run left
# (a machine restarted mid-run keeps /etc/netns and may keep the namespace names) and exits 0 —
# that is not this run's leak, and the phases after it must start from a clean kernel.
set -uo pipefail
before=0
[[ ${1:-} == --before ]] && before=1
pattern='^(rt-|e2e-|rb|image-|limits-|fuzz-)([0-9]+)-'
leaked=0
for name in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    if [[ $name =~ $pattern ]] && ! kill -0 "${BASH_REMATCH[2]}" 2>/dev/null; then
        echo "leftover namespace removed: $name"
        ip netns delete "$name" 2>/dev/null || true
        leaked=1
    fi
done
for dir in /etc/netns/*/; do
    [[ -d $dir ]] || continue
    name=$(basename "$dir")
    if [[ $name =~ $pattern ]] && ! kill -0 "${BASH_REMATCH[2]}" 2>/dev/null; then
        echo "leftover /etc/netns/$name removed"
        rm -rf -- "/etc/netns/$name"
        leaked=1
    fi
done
if ((before)); then
    ((leaked)) && echo "(left by an earlier run that did not finish; this run starts clean)"
    exit 0
fi
exit $leaked
