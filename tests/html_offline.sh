#!/bin/sh
# The web pages work offline and show a lesson's text as text, without a browser: no page
# names anything to fetch (src=, <link>, url(), @import, http addresses outside the lesson's
# own escaped text), and tests/html/escape.yaml's markup comes out escaped.
# Usage: html_offline.sh TRACER LESSON.yaml... (run from the project root)
set -u
tracer=$1
shift
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
for lesson in "$@"; do
    "$tracer" --format html "$lesson" > "$tmp/page.html" || { echo "$lesson: the tracer failed"; fail=1; continue; }
    if grep -n -i -E 'src=|<link|url\(|@import|https?://' "$tmp/page.html"; then
        echo "$lesson: the page refers to something outside itself (above)"
        fail=1
    fi
    [ "$(grep -c '<script>' "$tmp/page.html")" = 1 ] || { echo "$lesson: not exactly one inline script"; fail=1; }
done
"$tracer" --format html tests/html/escape.yaml > "$tmp/escape.html" || { echo "escape.yaml: the tracer failed"; exit 1; }
expect() {
    grep -qF "$1" "$tmp/escape.html" || { echo "escape.yaml: no '$1' in the page"; fail=1; }
}
expect '<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>'
expect '<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>'
expect 'Source: &lt;a href=&quot;http://example.invalid/&quot;&gt;a link&lt;/a&gt; &amp; more'
expect '<th scope="col">&lt;b&gt;cat&lt;/b&gt;</th>'
expect '<th scope="row">&quot;quoted&quot; &amp; &#39;single&#39;</th>'
expect '<p class="about">&lt;img src=x onerror=alert(3)&gt;</p>'
expect '<p class="say">&lt;/details&gt;&lt;img src=x onerror=alert(2)&gt;</p>'
expect 'an ampersand &amp;amp; an entity'
# Claims print under their stage with their verdict in words, and the summary counts them.
expect '&lt;i&gt;rows&lt;/i&gt; sum to 1 <code>allclose(sum(y), 1)</code> <strong class="badge agrees">holds</strong>'
expect 'the first is &lt;b&gt;big&lt;/b&gt; <code>y[0] &gt; 0.5</code> <strong class="badge disagrees">fails</strong> 0.2689 &gt; 0.5000 is false'
expect '<p>1 of 2 claims hold.</p>'
# Nothing of the lesson's markup survives as a tag.
if grep -n -E '<(script>alert|b>|img|a href=.http|i>)' "$tmp/escape.html"; then
    echo "escape.yaml: the lesson's markup came out as markup (above)"
    fail=1
fi
[ "$fail" = 0 ] && echo "ok: $# pages refer to nothing outside themselves, and a lesson's markup shows as text"
exit $fail
