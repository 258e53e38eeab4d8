#!/usr/bin/env bash
# Fails when `swift format` (in the toolchain, configured by .swift-format) would change a Swift
# file: formatting is settled by the tool, not in review.
set -euo pipefail
cd "$(dirname "$0")/.."
changed=0
while IFS= read -r file; do
    if ! diff -q "$file" <(swift format "$file") >/dev/null; then
        echo "needs formatting: $file"
        changed=1
    fi
done < <(git ls-files '*.swift')
if [ "$changed" = 1 ]; then
    echo "format: run 'swift format -i -r Sources Tests Package.swift'"
    exit 1
fi
echo "format: every Swift file is formatted"
