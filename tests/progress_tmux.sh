#!/bin/sh
# Progress on a terminal, and none elsewhere. tmux runs the tracer in a pseudo-terminal: lesson
# 23 trains 800 steps (about 3 s) with an empty training cache, and its standard error, the
# terminal, shows "training N/800  loss ..." while it trains; the line is wiped when training
# ends, and the trace on standard output is its golden file, byte for byte. --diff against a copy
# with another lr trains the copy, and says which lesson the line is about. Then the same
# training with standard error in a file (standard output still the terminal) and in a pipe:
# not a byte of progress in either.
# Usage: progress_tmux.sh TRACER, run from the project root.
# Skipped (exit 77) when tmux is not installed.
set -u
tracer=$1
if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIPPED: tmux is not installed (apt-get install tmux), so progress was not tried in a terminal"
    exit 77
fi
case "$tracer" in /*) ;; *) tracer="$PWD/$tracer" ;; esac
tmp=$(mktemp -d) || exit 99
trap 'for s in "$tmp"/*.sock; do tmux -S "$s" kill-server 2>/dev/null; done; rm -rf "$tmp"' EXIT
lesson=lessons/23_induction_head.yaml
golden=golden/23_induction_head.txt
sed 's/^  lr: 0\.01$/  lr: 0.001/' "$lesson" > "$tmp/lr.yaml"
grep -q '^  lr: 0.001$' "$tmp/lr.yaml" || { echo "lesson 23 has no line '  lr: 0.01' to edit"; exit 1; }
sock=""
# session NAME WHAT COMMAND: a terminal of 100 x 30 running COMMAND (in sh, from the project
# root), which stays open after it, saying the command's status.
session() {
    [ -n "$sock" ] && tmux -S "$sock" kill-server 2>/dev/null
    sock="$tmp/$1.sock"
    what="$2"
    tmux -S "$sock" -f /dev/null new-session -d -x 100 -y 30 -c "$PWD" \
        "$3; echo \"tracer exited with status \$?\"; sleep 120"
}
# Wait up to SECONDS for the screen to show a line matching the regular expression, then keep
# the screen in $tmp/screen.
shows() {
    i=0
    while [ $i -lt $(($2 * 20)) ]; do
        tmux -S "$sock" capture-pane -p -t 0 >"$tmp/screen" 2>/dev/null
        grep -qE -- "$1" "$tmp/screen" && return 0
        sleep 0.05
        i=$((i + 1))
    done
    echo "$what: the screen never showed '$1' in $2 s; it shows:"
    cat "$tmp/screen"
    exit 1
}
hides() {
    if grep -qE -- "$1" "$tmp/screen"; then
        echo "$what: the screen still shows '$1':"
        cat "$tmp/screen"
        exit 1
    fi
}
same_as_golden() {
    if ! cmp -s "$1" "$golden"; then
        echo "$what: the trace is not $golden:"
        diff "$golden" "$1" | head -n 20
        exit 1
    fi
}

env="NO_COLOR=1 COLUMNS=80 TRACER_CACHE='$tmp/cache'"
session train "lesson 23 trained in a terminal" "$env '$tracer' $lesson > '$tmp/out'"
shows '^training [0-9]+/800  loss [0-9]+\.[0-9]{4}  [0-9.]+ steps/s *$' 20
shows 'tracer exited with status 0' 120
hides 'training'
same_as_golden "$tmp/out"

# The original was trained into the cache above: only the copy trains.
session diff "--diff with another lr" "$env '$tracer' --diff $lesson '$tmp/lr.yaml' > '$tmp/diff'"
shows '^edited: training [0-9]+/800  loss ' 20
shows 'tracer exited with status 1' 120
hides 'training'

env="NO_COLOR=1 COLUMNS=80 TRACER_CACHE=off"
# Standard output is the terminal here: whether to show progress is standard error's choice.
session file "standard error in a file" "$env '$tracer' $lesson 2> '$tmp/err'"
shows 'tracer exited with status 0' 120
if [ -s "$tmp/err" ]; then
    echo "$what: standard error holds:"
    od -c "$tmp/err" | head -n 10
    exit 1
fi

session pipe "standard error in a pipe" "$env '$tracer' $lesson 2>&1 | cat > '$tmp/out'"
shows 'tracer exited with status 0' 120
what="standard error and output in one pipe"
same_as_golden "$tmp/out"
echo "ok: progress shown while lesson 23 trains in a terminal, wiped after, none in a file or a pipe"
