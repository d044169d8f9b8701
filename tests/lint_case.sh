#!/bin/sh
# One --lint case: run `tracer --lint DIR/NAME.yaml` and compare its report with what it must
# say: DIR/NAME.stderr (the warnings and the stale numbers, located), DIR/NAME.txt (the summary
# on stdout) and DIR/NAME.status (the exit status, 1 when absent). The values the messages
# state are worked out with numpy in the comments of each case. Usage: lint_case.sh TRACER DIR
# NAME, run from the project root.
set -u
tracer=$1 dir=$2 name=$3
base="$dir/$name"
expected_status=1
[ -f "$base.status" ] && expected_status=$(cat "$base.status")
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
env NO_COLOR=1 "$tracer" --lint "$base.yaml" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
status=$?
fail=0
if [ "$status" != "$expected_status" ]; then
    echo "exit status $status, expected $expected_status"
    fail=1
fi
for stream in stdout:txt stderr:stderr; do
    got=$tmp/${stream%%:*} want=$base.${stream#*:}
    if ! cmp -s "$got" "$want"; then
        echo "${stream%%:*} differs from $want:"
        diff -u "$want" "$got" | head -60
        fail=1
    fi
done
exit $fail
