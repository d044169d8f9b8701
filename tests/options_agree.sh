#!/bin/sh
# The command line's tables of options and modes (tracer/cli/cli.c and modes.c, printed by
# tests/option_table.c) against what a user reads and types:
#   - tracer --help shows every option of the table with its value, in its order, and no other;
#   - the manual page has an entry (.TP) under OPTIONS for every option, and for no other;
#   - bash completion completes every option and no other, and the words of a value such as
#     text|json|html;
#   - the tracer refuses every option a mode of the table does not take (and every option
#     given without the one it needs), exit 2, with a message that names both, writing nothing.
# Usage: options_agree.sh TRACER OPTION_TABLE MAN_PAGE COMPLETION_SCRIPT, run from the project
# root (lessons/ is the course).
set -u
tracer=$1 table_program=$2 page=$3 script=$4
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
"$table_program" >"$tmp/table" || { echo "$table_program failed"; exit 1; }
sed -n 's/^option //p' "$tmp/table" >"$tmp/options"
cut -d' ' -f1 "$tmp/options" >"$tmp/names"
[ -s "$tmp/names" ] || { echo "the table has no options"; exit 1; }

# The help: "  --name VALUE   help", or the name and value on a line of their own.
"$tracer" --help | awk '/^  +-/ { print ($2 ~ /^([A-Z]|[a-z]+\|)/) ? $1 " " $2 : $1 }' >"$tmp/help"
if ! cmp -s "$tmp/options" "$tmp/help"; then
    echo "tracer --help does not show the table's options (-: the table, +: the help):"
    diff -u "$tmp/options" "$tmp/help" | tail -n +3
    fail=1
fi

# The manual page: the line after each .TP under OPTIONS names an option (roff writes a hyphen
# as \-; -h before --help is its other spelling).
awk '/^\.SH/ { in_options = ($2 == "OPTIONS") } in_options && /^\.TP/ { getline; print }' "$page" |
    sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | awk '!seen[$0]++' | sort >"$tmp/man"
sort "$tmp/names" >"$tmp/names.sorted"
if ! cmp -s "$tmp/names.sorted" "$tmp/man"; then
    echo "the entries under OPTIONS in $page are not the table's options (-: the table, +: the page):"
    diff -u "$tmp/names.sorted" "$tmp/man" | tail -n +3
    echo "  an entry is .TP, then .B \\-\\-name (or .BI \\-\\-name \" value\"), then what it does"
    fail=1
fi

# Bash completion, as readline calls it.
if command -v bash >/dev/null 2>&1; then
    bash -s "$tracer" "$script" "$tmp/options" <<'BASH' || fail=1
tracer=$1
source "$2" || exit 1
complete_words() {
    COMP_WORDS=("$tracer" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    _tracer
    ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
fail=0
want=$(cut -d' ' -f1 "$3" | sort | tr '\n' ' ')
got=$(complete_words --)
if [[ $got != "$want" ]]; then
    echo "tracer --<TAB> completes '$got', the table has '$want'"
    fail=1
fi
while read -r name value; do
    [[ $value == *\|* ]] || continue
    want=$(tr '|' '\n' <<<"$value" | sort | tr '\n' ' ')
    got=$(complete_words "$name" '')
    if [[ $got != "$want" ]]; then
        echo "tracer $name <TAB> completes '$got', the table has '$want'"
        fail=1
    fi
done <"$3"
exit $fail
BASH
else
    echo "bash is not installed: completion was not compared with the table"
fi

# The refusals. A value each option can take, so that only the combination is wrong.
sample() {
    case $1 in
    --digits) echo 2 ;;
    --color) echo never ;;
    --explain | --only | --from | --to) echo weights ;;
    --width) echo 60 ;;
    --golden) echo golden/02_the_cat_sat.txt ;;
    --quiz-seed) echo 3 ;;
    --threads) echo 1 ;;
    --save) echo "$tmp/saved" ;;
    --weights) echo lessons ;;
    --text) echo "The dog ran" ;;
    *) echo "options_agree.sh has no value to give $1: add one to sample()" >&2; return 1 ;;
    esac
}
lesson=lessons/02_the_cat_sat.yaml
refusals=0
# refused PATTERN... -- ARGUMENTS: the tracer refuses the arguments with a first line of
# stderr that matches one of the patterns (shell patterns), and writes nothing.
refused() {
    patterns=""
    while [ "$1" != -- ]; do patterns="$patterns
$1"; shift; done
    shift
    NO_COLOR=1 "$tracer" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    status=$?
    first=$(head -n 1 "$tmp/err")
    matched=0
    old_ifs=$IFS
    IFS='
'
    for pattern in $patterns; do
        # shellcheck disable=SC2254 # the pattern is meant as a pattern
        case $first in $pattern) matched=1 ;; esac
    done
    IFS=$old_ifs
    if [ "$status" != 2 ] || [ -s "$tmp/out" ] || [ -e "$tmp/saved" ] || [ $matched = 0 ]; then
        echo "tracer $*: exit $status, $(wc -c <"$tmp/out") bytes out; expected 2, nothing written, and:$patterns"
        echo "  it said: $first"
        fail=1
    fi
    rm -rf "$tmp/saved"
    refusals=$((refusals + 1))
}
while read -r kind mode option format; do
    [ "$kind" = refuse ] || continue
    if [ "$option" = --format ]; then
        given="--format $format"
        set -- --format "$format"
    elif grep -q -- "^$option " "$tmp/options"; then
        given=$option
        value=$(sample "$option") || { fail=1; continue; }
        set -- "$option" "$value"
    else
        given=$option
        set -- "$option"
    fi
    lessons=$lesson
    if [ "$mode" = --diff ] || [ "$option" = --diff ]; then lessons="$lesson $lesson"; fi
    # Two modes given together: either may be the one that refuses the other.
    # shellcheck disable=SC2086 # lessons is one or two words
    refused "tracer: $mode *; leave out $given" "tracer: $given *; leave out $mode" -- "$mode" "$@" $lessons
done <"$tmp/table"
# An option that any of several options makes mean something names the first of them.
previous=
while read -r kind option needed; do
    [ "$kind" = needs ] && [ "$option" != "$previous" ] || continue
    previous=$option
    value=$(sample "$option") || { fail=1; continue; }
    refused "tracer: $option *; add $needed" -- "$option" "$value" "$lesson"
done <"$tmp/table"
[ $refusals -gt 0 ] || { echo "the table refuses nothing"; fail=1; }
[ $fail = 0 ] && echo "ok: the help, the manual page and completion show the table's $(wc -l <"$tmp/names") options; $refusals refusals name what to leave out or add"
exit $fail
