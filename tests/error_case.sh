#!/bin/sh
# One error or warning test: run the tracer on a broken (or doubtful) lesson and compare what
# it says with what it must say. Usage: error_case.sh TRACER DIR NAME, run from the project
# root, where
#   DIR/NAME.yaml    the lesson (or DIR/NAME.args: the command-line arguments, one per line;
#                    a line NAME=VALUE before the first argument sets an environment variable)
#   DIR/NAME.stderr  the exact error output
#   DIR/NAME.status  the exit status (1 when absent)
#   DIR/NAME.stdin   piped to the tracer's standard input (when present; else /dev/null)
#   DIR/reference/NAME.stderr (and .status): what the reference build says instead
#                    (-Dfast=false, TRACER_BUILD=reference), where it differs because it frees
#                    no value: a lesson past its memory, refused with no word of --only
# stdout must stay empty: a broken lesson never prints half a trace.
set -u
tracer=$1 dir=$2 name=$3
case_base="$dir/$name"
expected=$case_base
if [ "${TRACER_BUILD:-fast}" = reference ] && [ -f "$dir/reference/$name.stderr" ]; then
    expected=$dir/reference/$name
fi
expected_status=1
[ -f "$expected.status" ] && expected_status=$(cat "$expected.status")
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
envs=""
if [ -f "$case_base.args" ]; then
    # Arguments, one per line, with @DIR@ standing for the case folder and @WEIGHTS@ for the
    # folder of weight files that tests/weights/write_weights.py wrote ($TRACER_WEIGHTS).
    set --
    while IFS= read -r arg || [ -n "$arg" ]; do
        case "$#:$arg" in
        0:[A-Z]*=*) envs="$envs $arg" ;;
        *) set -- "$@" "$(printf '%s' "$arg" | sed -e "s|@DIR@|$dir|g" -e "s|@WEIGHTS@|${TRACER_WEIGHTS:-}|g")" ;;
        esac
    done < "$case_base.args"
else
    set -- "$case_base.yaml"
fi
if [ -f "$case_base.stdin" ]; then
    # DIR/NAME.stdin: what a pipe feeds the tracer's standard input.
    # shellcheck disable=SC2086 # envs is a list of NAME=VALUE words
    cat "$case_base.stdin" | env NO_COLOR=1 $envs "$tracer" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
else
    # shellcheck disable=SC2086
    env NO_COLOR=1 $envs "$tracer" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
fi
status=$?
fail=0
if [ "$status" != "$expected_status" ]; then
    echo "exit status $status, expected $expected_status"
    fail=1
fi
if [ -s "$tmp/stdout" ] && [ "$expected_status" != 0 ]; then
    echo "stdout is not empty:"
    head -c 2000 "$tmp/stdout"
    fail=1
fi
if ! cmp -s "$tmp/stderr" "$expected.stderr"; then
    echo "stderr differs from $expected.stderr:"
    diff -u "$expected.stderr" "$tmp/stderr" | head -40
    fail=1
fi
exit $fail
