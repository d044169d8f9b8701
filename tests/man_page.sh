#!/bin/sh
# The manual page renders without a warning, with man and with groff's warnings all on, and
# documents every option of tracer --help, as the README and the guide do.
# Usage: man_page.sh TRACER MAN_PAGE README GUIDE_CHAPTER...
set -u
tracer=$1 page=$2
shift 2
if ! command -v groff >/dev/null 2>&1 || ! command -v man >/dev/null 2>&1; then
    echo "SKIPPED: groff or man is missing (apt-get install groff-base man-db): the manual page was not checked"
    exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
groff -man -ww -z "$page" 2>"$tmp/groff"
if [ $? != 0 ] || [ -s "$tmp/groff" ]; then
    echo "groff -man -ww warns about $page:"
    cat "$tmp/groff"
    fail=1
fi
MANWIDTH=80 man -l "$page" >"$tmp/man" 2>"$tmp/man.err"
if [ $? != 0 ] || [ -s "$tmp/man.err" ]; then
    echo "man -l $page:"
    cat "$tmp/man.err"
    fail=1
fi
grep -q "^TRACER(1) " "$tmp/man" || { echo "man -l did not render the page's header"; fail=1; }
# Every option, as roff writes it (\-\-name) in the page and as `--name` in the README or guide.
for option in $("$tracer" --help | awk '/^  +--/ { print $1 }'); do
    # roff writes every hyphen of an option as \-: --quiz-seed is \-\-quiz\-seed.
    name=$(printf '%s' "${option#--}" | sed 's/-/\\\\-/g')
    # The entry: the line after a .TP names the option.
    if ! awk '/^\.TP/ { getline; print }' "$page" | grep -q "\\\\-\\\\-$name\\b"; then
        echo "$option is in tracer --help but has no entry under OPTIONS in doc/tracer.1.in;"
        echo "  add one: .TP, then .B \\-\\-$name (or .BI \\-\\-$name \" value\"), then a line saying what it does"
        fail=1
    fi
    cat "$@" | grep -q -- "\`$option" || { echo "$option is in tracer --help but not in the README or the guide (doc/)"; fail=1; }
done
[ $fail = 0 ] && echo "ok: the manual page renders without warnings and documents every option"
exit $fail
