#!/bin/sh
# tracer --watch --check with its output in a file, not a terminal: nothing clears a screen,
# and each save is compared with the golden file again (b = a * 3: 6 in the golden file, 15
# after the save). SIGINT, as Ctrl-C sends it, ends the watch with status 0.
# Usage: watch_check.sh TRACER
set -u
tracer=$1
tmp=$(mktemp -d) || exit 99
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
lesson=$tmp/lesson.yaml
save() {
    printf 'title: Watch me\ngiven:\n  a: %s\nsteps:\n  - b: a * 3\n' "$1" > "$lesson.new"
    mv "$lesson.new" "$lesson"
}
# Wait (20 s at most: a generous bound, not a measure of speed) for a line of stderr.
wait_for() {
    i=0
    until grep -qF -- "$1" "$tmp/err" 2>/dev/null; do
        [ $i -ge 200 ] && { echo "FAIL: stderr never said '$1':"; cat "$tmp/err"; exit 1; }
        sleep 0.1
        i=$((i + 1))
    done
}
save 2
"$tracer" --color=never "$lesson" > "$tmp/golden.txt" || exit 99
# Started with stdin closed, as a service may be: the watch's inotify descriptor is then 0,
# the lowest free one, and must be taken for one all the same.
"$tracer" --watch --check --golden "$tmp/golden.txt" "$lesson" > "$tmp/out" 2> "$tmp/err" <&- &
pid=$!
wait_for "(run 1)"
save 5
wait_for "(run 2)"
kill -INT "$pid"
wait "$pid"
status=$?
pid=
fail=0
[ "$status" = 0 ] || { echo "FAIL: exit status $status after SIGINT"; fail=1; }
grep -qxF "$lesson matches $tmp/golden.txt" "$tmp/out" || { echo "FAIL: the first run does not match"; fail=1; }
grep -qxF -- "-    = 6" "$tmp/out" && grep -qxF -- "+    = 15" "$tmp/out" ||
    { echo "FAIL: the second run shows no diff from 6 to 15"; fail=1; }
grep -q "$(printf '\033')" "$tmp/out" && { echo "FAIL: escape sequences written to a file"; fail=1; }
grep -qxF "tracer: $lesson differs from its golden file $tmp/golden.txt" "$tmp/err" ||
    { echo "FAIL: stderr does not say the second run differs"; fail=1; }
[ $fail = 0 ] || { echo "stdout:"; cat "$tmp/out"; echo "stderr:"; cat "$tmp/err"; exit 1; }
echo "ok: --watch --check compared each save with the golden file and stopped on SIGINT"
