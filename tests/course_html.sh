#!/bin/sh
# The whole course as web pages for a course site: OUTDIR/NAME.html for every lesson named,
# in course order, each with links to the index and to the lessons before and after it, and
# OUTDIR/index.html listing them in order with what each shows (from lessons/README.md).
# Usage: course_html.sh TRACER SOURCE_ROOT OUTDIR NAME...
set -eu
tracer=$1 root=$2 out=$3
shift 3
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"

# A lesson's title as its page wrote it (already escaped), on one line.
page_title() {
    sed -n '/<title>/,/<\/title>/p' "$1" | tr '\n' ' ' | sed 's|.*<title>\(.*\)</title>.*|\1|; s/ *$//'
}

# What a student sees in the lesson, from the course table of lessons/README.md, as HTML.
description() {
    awk -F'|' -v name="\`$1\`" '{ gsub(/^ +| +$/, "", $3); if ($3 == name) { print $4; exit } }' lessons/README.md |
        sed 's/^ *//; s/ *$//; s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/`\([^`]*\)`/<code>\1<\/code>/g'
}

names=$*
prev=
set -- "$@" ""
while [ "$1" != "" ]; do
    name=$1
    next=$2
    shift
    "$tracer" --format html "lessons/$name.yaml" > "$out/$name.html.new"
    nav="<nav class=\"course\" aria-label=\"Course\"><a href=\"index.html\">Course index</a>"
    [ -n "$prev" ] && nav="$nav <a href=\"$prev.html\" rel=\"prev\">← $prev</a>"
    [ -n "$next" ] && nav="$nav <a href=\"$next.html\" rel=\"next\">$next →</a>"
    nav="$nav</nav>"
    awk -v nav="$nav" '{ print } $0 == "<body>" { print nav }' "$out/$name.html.new" > "$out/$name.html"
    rm "$out/$name.html.new"
    echo "wrote $out/$name.html"
    prev=$name
done

{
    cat <<'HEAD'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tracer">
<title>Attention, traced: the course</title>
<style>
body{margin:0 auto;max-width:48rem;padding:0 1rem 3rem;font:16px/1.5 system-ui,sans-serif;color:#1a1a1a}
h1{font-size:1.8rem;margin:1.5rem 0 .5rem}
li{margin:.6rem 0}
a{color:#08306b;font-weight:bold}
code{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.92em}
.what{display:block;color:#5a5a5a}
</style>
</head>
<body>
<h1>Attention, traced: the course</h1>
<p>Every lesson is one page: each tensor of its computation with its formula, shapes and
values, in order. Hover over a number for its exact value; <kbd>j</kbd> and <kbd>k</kbd>
move stage by stage.</p>
<ol>
HEAD
    for name in $names; do
        page=$out/$name.html
        printf '<li><a href="%s.html">%s</a> <code>%s</code><span class="what">%s</span></li>\n' \
            "$name" "$(page_title "$page")" "$name" "$(description "$name")"
    done
    printf '</ol>\n</body>\n</html>\n'
} > "$out/index.html"
echo "wrote $out/index.html: open it in a browser"
