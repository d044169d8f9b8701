#!/bin/sh
# tracer --watch in a real terminal (a tmux pane): save a change and see the new value, save
# a broken lesson and see its located error, fix it and see the trace again, delete the file
# and get it back, use no processor time while waiting, and end with Ctrl-C and status 0; a
# watch whose folder is deleted ends with status 2 and says why.
# The values are worked out by hand: b = a * 3. Usage: watch_tmux.sh TRACER
set -u
tracer=$1
if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIPPED: tmux is not installed (apt-get install tmux): --watch was not tested in a terminal"
    exit 77
fi
case $tracer in /*) ;; *) tracer=$PWD/$tracer ;; esac
tmp=$(mktemp -d) || exit 99
# A socket of its own in the test's folder, not a name in the shared tmux folder
sock="$tmp/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
lesson=$tmp/lesson.yaml
export TERM="${TERM:-xterm}"

# Write the lesson with a: $1 and the step b: $2, saved as most editors save: a new file
# renamed over the old one.
save_by_rename() {
    printf 'title: Watch me\ngiven:\n  a: %s\nsteps:\n  - b: %s\n' "$1" "$2" > "$lesson.new"
    mv "$lesson.new" "$lesson"
}
# The same, written in place, as nano and `cat >` save.
save_in_place() {
    printf 'title: Watch me\ngiven:\n  a: %s\nsteps:\n  - b: %s\n' "$1" "$2" > "$lesson"
}
screen() {
    tmux -S "$sock" capture-pane -p -t watch
}
fail() {
    echo "FAIL: $1; the screen shows:"
    screen
    exit 1
}
# Wait (20 s at most: a generous bound, not a measure of speed) until a line of the screen
# is exactly $1.
wait_for() {
    i=0
    while [ $i -lt 200 ]; do
        screen | grep -qxF -- "$1" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    fail "the screen never showed the line '$1'"
}
# The screen was cleared: the line $1 of the previous run is gone.
gone() {
    screen | grep -qxF -- "$1" && fail "the line '$1' of the previous run is still on the screen"
    return 0
}

save_by_rename 2 'a * 3'
tmux -S "$sock" -f /dev/null new-session -d -s watch -x 200 -y 50 \
    "NO_COLOR=1 '$tracer' --watch '$lesson'; echo \"exit status \$?\" > '$tmp/status'" || exit 99

wait_for "    = 6"
wait_for "tracer: watching $lesson (run 1): save it to trace again, Ctrl-C to stop"

save_by_rename 5 'a * 3'
wait_for "    = 15"
wait_for "tracer: watching $lesson (run 2): save it to trace again, Ctrl-C to stop"
gone "    = 6"

# A trailing operator: the error points at line 5, column 11, just past the '*' of
# "  - b: a *", where a value should follow.
save_by_rename 5 'a *'
wait_for "tracer: watching $lesson (run 3): save it to trace again, Ctrl-C to stop"
screen | grep -q "^$lesson:5:11: error: " || fail "no error located at $lesson:5:11"
wait_for " 5 |   - b: a *"
gone "    = 15"

save_in_place 7 'a * 3'
wait_for "    = 21"
wait_for "tracer: watching $lesson (run 4): save it to trace again, Ctrl-C to stop"
screen | grep -q "error:" && fail "the error of the broken lesson is still on the screen"

# Deleted: the screen is cleared of the trace that is gone, the watch goes on for the name,
# and traces the file that comes back.
rm "$lesson"
wait_for "tracer: $lesson was deleted or renamed; waiting for it to come back (Ctrl-C to stop)"
gone "    = 21"
save_by_rename 4 'a * 3'
wait_for "    = 12"
wait_for "tracer: watching $lesson (run 5): save it to trace again, Ctrl-C to stop"

# Waiting costs nothing: the tracer sleeps, and a second of waiting adds no processor ticks
# worth counting (a busy loop would add about 100).
pane=$(tmux -S "$sock" display-message -p -t watch '#{pane_pid}')
pid=$(ps -o pid= --ppid "$pane" | tr -d ' ' | head -n 1)
[ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || fail "cannot find the tracer's process"
ticks() {
    # utime and stime, fields 14 and 15, after the command name in parentheses.
    sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'
}
before=$(ticks)
sleep 1
after=$(ticks)
state=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $1 }')
[ "$state" = S ] || fail "the waiting tracer is in state '$state', not sleeping (S)"
[ $((after - before)) -le 5 ] || fail "the waiting tracer used $((after - before)) ticks in a second"

tmux -S "$sock" send-keys -t watch C-c
i=0
while [ ! -s "$tmp/status" ] && [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
[ "$(cat "$tmp/status" 2>/dev/null)" = "exit status 0" ] ||
    { echo "FAIL: after Ctrl-C: $(cat "$tmp/status" 2>/dev/null || echo 'still running')"; exit 1; }
# The folder itself deleted: nothing can come back there, so the watch ends with status 2.
mkdir "$tmp/folder"
save_by_rename 2 'a * 3'
mv "$lesson" "$tmp/folder/lesson.yaml"
tmux -S "$sock" -f /dev/null new-session -d -s gone -x 200 -y 50 \
    "NO_COLOR=1 '$tracer' --watch '$tmp/folder/lesson.yaml' 2>'$tmp/gone.err'; echo \"exit status \$?\" > '$tmp/gone.status'" ||
    exit 99
i=0
until grep -q "(run 1)" "$tmp/gone.err" 2>/dev/null || [ $i -ge 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
rm -r "$tmp/folder"
i=0
while [ ! -s "$tmp/gone.status" ] && [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
[ "$(cat "$tmp/gone.status" 2>/dev/null)" = "exit status 2" ] ||
    { echo "FAIL: with its folder deleted: $(cat "$tmp/gone.status" 2>/dev/null || echo 'still running')"; exit 1; }
expected="tracer: error: stopped watching '$tmp/folder/lesson.yaml': its folder '$tmp/folder' was deleted or moved"
tail -n 1 "$tmp/gone.err" | grep -qxF -- "$expected" ||
    { echo "FAIL: with its folder deleted, the watch ends saying:"; cat "$tmp/gone.err"; exit 1; }

echo "ok: --watch redraws on each save, shows errors in place, survives a deletion, stops on Ctrl-C"
