#!/bin/sh
# One command-line option's exact output: run the tracer with the arguments in
# DIR/NAME.args (one per line; a line NAME=VALUE before the first argument sets an environment
# variable) and compare stdout with DIR/NAME.txt and the exit status with DIR/NAME.status
# (0 when absent); stdin is DIR/NAME.in when there is one (answers for --quiz), else empty.
# NO_COLOR, COLORTERM and COLUMNS are cleared first, so that the result does
# not depend on the terminal the tests run in. Usage: option_case.sh TRACER DIR NAME
# [--regenerate], run from the project root; --regenerate rewrites NAME.txt instead.
set -u
tracer=$1 dir=$2 name=$3 mode=${4:-}
base="$dir/$name"
expected_status=0
[ -f "$base.status" ] && expected_status=$(cat "$base.status")
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
set --
envs=""
while IFS= read -r arg || [ -n "$arg" ]; do
    case "$#:$arg" in
    0:[A-Z]*=*) envs="$envs $arg" ;;
    *) set -- "$@" "$arg" ;;
    esac
done < "$base.args"
# shellcheck disable=SC2086 # envs is a list of NAME=VALUE words
input=/dev/null
[ -f "$base.in" ] && input="$base.in"
env -u NO_COLOR -u COLORTERM -u COLUMNS $envs "$tracer" "$@" >"$tmp/stdout" 2>"$tmp/stderr" <"$input"
status=$?
if [ "$mode" = --regenerate ]; then
    cp "$tmp/stdout" "$base.txt"
    echo "wrote $base.txt"
    exit 0
fi
fail=0
if [ "$status" != "$expected_status" ]; then
    echo "exit status $status, expected $expected_status; stderr:"
    head -c 2000 "$tmp/stderr"
    fail=1
fi
if ! cmp -s "$tmp/stdout" "$base.txt"; then
    echo "stdout differs from $base.txt:"
    diff -u "$base.txt" "$tmp/stdout" | head -60
    fail=1
fi
exit $fail
