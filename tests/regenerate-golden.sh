#!/bin/sh
# Rewrite golden/NAME.txt from the tracer's current output for every lesson named, and
# golden/html/NAME.html for every lesson named after --html.
# Usage: regenerate-golden.sh TRACER SOURCE_ROOT NAME... [--html NAME...]; a regenerated
# golden file is read like a code change before it is committed.
set -eu
tracer=$1 root=$2
shift 2
cd "$root"
html=false
lessons=
for name in "$@"; do
    if [ "$name" = --html ]; then
        html=true
        continue
    fi
    if $html; then
        mkdir -p golden/html
        "$tracer" --format html "lessons/$name.yaml" > "golden/html/$name.html.new"
        mv "golden/html/$name.html.new" "golden/html/$name.html"
        echo "wrote golden/html/$name.html"
    else
        lessons="$lessons $name"
        "$tracer" --update-golden "lessons/$name.yaml"
    fi
done
# The SHA-256 of each lesson's JSON trace (tests/json_same.sh).
for name in $lessons; do
    "$tracer" --format json "lessons/$name.yaml" > "$name.json.new"
    sha256sum "$name.json.new" | sed "s/\.new\$//"
    rm -f "$name.json.new"
done > tests/json.sha256.new
mv tests/json.sha256.new tests/json.sha256
echo "wrote tests/json.sha256"
