#!/bin/sh
# The JSON trace of every lesson, streamed as it is rendered, is byte for byte the JSON the
# tracer wrote when it built the whole document in memory first: tests/json.sha256 holds the
# SHA-256 of each, written by that version (regenerate-golden rewrites it, on purpose only).
# Usage: json_same.sh TRACER SUMS NAME..., run from the project root.
set -u
tracer=$1 sums=$2
shift 2
failures=0
for name in "$@"; do
    want=$(grep "  $name\.json\$" "$sums" | cut -d' ' -f1)
    got=$("$tracer" --format json "lessons/$name.yaml" | sha256sum | cut -d' ' -f1)
    if [ -z "$want" ]; then
        echo "$name: no SHA-256 in $sums"
        failures=$((failures + 1))
    elif [ "$got" != "$want" ]; then
        echo "$name: the JSON trace differs from the recorded one (sha256 $got, recorded $want)"
        failures=$((failures + 1))
    fi
done
[ $failures = 0 ] || exit 1
echo "$# lessons: the same JSON, byte for byte"
