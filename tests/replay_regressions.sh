#!/bin/sh
# Every input the fuzzer ever crashed on (tests/fuzz/regressions/) through the real tracer:
# each must end in a trace or a clean error (exit 0, 1 or 2), never a crash or a sanitizer
# report. This runs in every build, not only the clang fuzz build. Usage: replay_regressions.sh TRACER
set -u
tracer=$1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
for f in tests/fuzz/regressions/*; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    NO_COLOR=1 timeout 60 "$tracer" "$f" >"$tmp/out" 2>"$tmp/err" </dev/null
    status=$?
    case $status in
    0 | 1 | 2) ;;
    *) echo "FAIL $f: exit status $status"; fail=1 ;;
    esac
    if grep -q "Sanitizer\|runtime error\|internal error" "$tmp/err"; then
        echo "FAIL $f: a sanitizer or assertion report:"
        head -n 20 "$tmp/err"
        fail=1
    fi
done
[ "$n" -gt 0 ] || { echo "no regression inputs found"; exit 1; }
[ "$fail" = 0 ] && echo "ok: $n fuzzer findings replayed, each a trace or a clean error"
exit $fail
