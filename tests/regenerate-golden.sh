#!/bin/sh
# Rewrite golden/NAME.txt from the tracer's current output for every lesson named, and
# golden/html/NAME.html for every lesson named after --html (every page there when --html
# ends the list).
# Usage: regenerate-golden.sh TRACER SOURCE_ROOT NAME... [--html [NAME...]]; a regenerated
# golden file is read like a code change before it is committed.
set -eu
tracer=$1 root=$2
shift 2
cd "$root"
html=false
lessons=
if [ "$#" -gt 0 ] && eval "[ \"\${$#}\" = --html ]"; then
    for page in golden/html/*.html; do
        [ -e "$page" ] && set -- "$@" "$(basename "$page" .html)"
    done
fi
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
# The SHA-256 of each named lesson's JSON trace (tests/json_same.sh); the lines of the lessons
# not named stay as they were.
[ -n "$lessons" ] || exit 0
: > tests/json.sha256.new
for name in $lessons; do
    "$tracer" --format json "lessons/$name.yaml" > "$name.json.new"
    sha256sum "$name.json.new" | sed "s/\.new\$//" >> tests/json.sha256.new
    rm -f "$name.json.new"
done
if [ -f tests/json.sha256 ]; then
    awk -v named="$lessons" 'BEGIN { n = split(named, list, " "); for (i = 1; i <= n; i++) skip[list[i] ".json"] = 1 }
                             !($2 in skip)' tests/json.sha256 >> tests/json.sha256.new
fi
LC_ALL=C sort -k 2 tests/json.sha256.new > tests/json.sha256
rm -f tests/json.sha256.new
echo "wrote tests/json.sha256"
