#!/bin/sh
# One lesson's web page against golden/html/NAME.html, so that a change to the page shows in
# review. Usage: html_golden.sh TRACER NAME (run from the project root); regenerate with
# `meson compile -C build regenerate-golden`.
set -u
tracer=$1 name=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$tracer" --format html "lessons/$name.yaml" > "$tmp/page.html" || exit 1
if ! diff -u "golden/html/$name.html" "$tmp/page.html"; then
    echo "lessons/$name.yaml: its web page differs from golden/html/$name.html"
    exit 1
fi
echo "ok: lessons/$name.yaml renders as golden/html/$name.html"
