#!/bin/sh
# The course as web pages: course_html.sh writes one page per lesson and an index that links
# them all, in course order with what each shows, and each page links to its neighbours and
# back to the index.
# Usage: course_check.sh COURSE_HTML TRACER SOURCE_ROOT NAME...
set -u
script=$1 tracer=$2 root=$3
shift 3
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
sh "$script" "$tracer" "$root" "$tmp/html" "$@" > "$tmp/log" || { cat "$tmp/log"; echo "course_html.sh failed"; exit 1; }
fail=0
# The index's links, in order, are exactly the lessons given.
grep -o '<li><a href="[^"]*"' "$tmp/html/index.html" | sed 's/.*href="//; s/"$//' > "$tmp/links"
printf '%s.html\n' "$@" > "$tmp/expected"
cmp -s "$tmp/links" "$tmp/expected" || { echo "the index links:"; diff "$tmp/expected" "$tmp/links"; fail=1; }
prev=
for name in "$@"; do
    page=$tmp/html/$name.html
    [ -s "$page" ] || { echo "no page $name.html"; fail=1; continue; }
    grep -q '<a href="index.html">Course index</a>' "$page" || { echo "$name.html: no link to the index"; fail=1; }
    if [ -n "$prev" ]; then
        grep -q "<a href=\"$prev.html\" rel=\"prev\">" "$page" || { echo "$name.html: no link to $prev"; fail=1; }
        grep -q "<a href=\"$name.html\" rel=\"next\">" "$tmp/html/$prev.html" || { echo "$prev.html: no link to $name"; fail=1; }
    fi
    # The index shows each lesson's title as its page does.
    title=$(sed -n 's|^<h1>\(.*\)</h1>$|\1|p' "$page")
    grep -qF ">$title</a> <code>$name</code>" "$tmp/html/index.html" || { echo "index.html: no title '$title' for $name"; fail=1; }
    # And what the lesson shows, from the course table of lessons/README.md.
    grep -qF "<code>$name</code><span class=\"what\"></span>" "$tmp/html/index.html" &&
        { echo "index.html: $name has no description: is it in the table of lessons/README.md?"; fail=1; }
    prev=$name
done
[ "$fail" = 0 ] && echo "ok: the index links $# lessons in order, each page its neighbours"
exit $fail
