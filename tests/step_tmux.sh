#!/bin/sh
# --step in a real terminal: tmux runs the tracer in a pseudo-terminal of 100 x 60, the test
# presses keys and reads the screen after each one. Lesson 01 has 13 stages: the givens Q_0,
# K, V and d_k, then steps 1a, 1, 2a, 2, 3, 4, 5, 6 and 7. Then a screen of 80 x 20, too short
# for the header of lesson 02, scrolls, and a resized window is traced again at its width.
# Usage: step_tmux.sh TRACER, run from the project root.
# Skipped (exit 77) when tmux is not installed.
set -u
tracer=$1
if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIPPED: tmux is not installed (apt-get install tmux), so --step was not tried in a terminal"
    exit 77
fi
case "$tracer" in /*) ;; *) tracer="$PWD/$tracer" ;; esac
tmp=$(mktemp -d) || exit 99
sock="$tmp/tmux.sock"
trap 'for s in "$tmp"/*.sock; do tmux -S "$s" kill-server 2>/dev/null; done; rm -rf "$tmp"' EXIT
tmux -S "$sock" -f /dev/null new-session -d -x 100 -y 60 -c "$PWD" \
    "NO_COLOR=1 '$tracer' --step lessons/01_softmax_weights.yaml; echo \"tracer exited with status \$?\"; sleep 60"

after="starting"
# Wait up to 10 s for the screen to show text (fixed strings), then keep it in $tmp/screen.
shows() {
    i=0
    while [ $i -lt 100 ]; do
        tmux -S "$sock" capture-pane -p -t 0 >"$tmp/screen" 2>/dev/null
        grep -qF -- "$1" "$tmp/screen" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    echo "after $after, the screen never showed '$1'; it shows:"
    cat "$tmp/screen"
    exit 1
}
# Text that must not be on the screen just read: the screen is cleared between stages.
hides() {
    if grep -qF -- "$1" "$tmp/screen"; then
        echo "after $after, the screen still shows '$1':"
        cat "$tmp/screen"
        exit 1
    fi
}
press() {
    after="pressing $*"
    tmux -S "$sock" send-keys -t 0 "$@"
}

shows "step 1 of 13"
shows "Softmax weights: how much"
shows "Given Q_0  [4]"
hides "Given K  [3, 4]"

press Enter
shows "step 2 of 13"
shows "Given K  [3, 4]"
hides "Given Q_0"
hides "Softmax weights: how much"

press Space
shows "step 3 of 13"
shows "Given V  [3, 4]"
hides "Given K  [3, 4]"

press b
shows "step 2 of 13"
shows "Given K  [3, 4]"
hides "Given V"

press 6
shows "go to step 6"
press Enter
shows "step 6 of 13"
shows "Step 1  scores = Q_0 @ K.T"
shows "scores[1] = Q_0 · K.T[:, 1]"

press 9 9 Enter
shows "there is no step 99: the steps are 1 to 13"
shows "Step 1  scores = Q_0 @ K.T"

press 1 3 Enter
shows "step 13 of 13"
shows "Step 7  output_0 = weights @ V"
shows "Document check"
hides "Step 6  softmax_weights"

press Enter
shows "that was the last step"
shows "step 13 of 13"

press q
shows "tracer exited with status 0"

# 20 rows: 18 for the text, a blank line and the status line. The first screen of lesson 02
# is its header (4 lines, a blank line, 18 lines of introduction with its blank line) and
# Given X (a blank line, its heading, 6 lines of box and the document's line): 32 lines.
tmux -S "$sock" kill-server 2>/dev/null
sock="$tmp/tmux-small.sock"
after="starting in 80 x 20"
tmux -S "$sock" -f /dev/null new-session -d -x 80 -y 20 -c "$PWD" \
    "NO_COLOR=1 '$tracer' --step lessons/02_the_cat_sat.yaml; echo \"tracer exited with status \$?\"; sleep 60"
shows "step 1 of 14   lines 1-18 of 32"
shows "The cat sat: one attention head"
hides "Given X"
press Down
shows "lines 2-19 of 32"
hides "The cat sat: one attention head"
press NPage
shows "lines 15-32 of 32"
shows "Given X  [3, 4]"
shows "sat │  0.2000  0.1000  0.4000  0.3000 │"
press k
shows "lines 14-31 of 32"
press Enter
shows "step 2 of 14"
shows "Given W_Q  [4, 4]"
hides "lines"

# A narrower window traces the lesson again at its width and stays on the same step: at 80
# columns the operation's description fits on one line, at 60 its last words wrap.
press 6 Enter
shows "step 6 of 14"
shows "matrix product: each row of the left against each column of the right"
after="resizing the window to 60 x 20"
tmux -S "$sock" resize-window -t 0 -x 60 -y 20
shows "      column of the right"
shows "step 6 of 14"
hides "against each column of the right"
press q
shows "tracer exited with status 0"

# In colour (NO_COLOR unset), the other keys: arrows and Page Up, a leading 0 that is not a
# step, Backspace, B at the first step, keys the tracer does not know, a taller window, and
# Ctrl-D to quit. Then a lesson that does not load.
tmux -S "$sock" kill-server 2>/dev/null
sock="$tmp/tmux-keys.sock"
after="starting in colour in 80 x 20"
tmux -S "$sock" -f /dev/null new-session -d -x 80 -y 20 -c "$PWD" \
    "'$tracer' --step lessons/02_the_cat_sat.yaml; echo \"tracer exited with status \$?\"; sleep 60"
shows "step 1 of 14   lines 1-18 of "
press Up
shows "step 1 of 14   lines 1-18 of "
press j
shows "lines 2-19 of "
press PPage
shows "lines 1-18 of "
press 0 1
shows "go to step 1"
press BSpace 2
shows "go to step 2"
press Enter
shows "step 2 of 14"
press B
shows "step 1 of 14"
press B
shows "step 1 of 14"
# Escape sequences the tracer does not know (Escape then x; the right arrow, ESC [ C) do
# nothing: still step 1, still its first lines.
press Escape x
press Right
press Enter
shows "step 2 of 14"
press B
shows "step 1 of 14   lines 1-18 of "
# A taller window of the same width is not traced again: the same step shows more lines.
after="resizing the window to 80 x 24"
tmux -S "$sock" resize-window -t 0 -x 80 -y 24
shows "step 1 of 14   lines 1-22 of "
press C-d
shows "tracer exited with status 0"

# A lesson that does not load: its located error, and no step at all.
tmux -S "$sock" kill-server 2>/dev/null
sock="$tmp/tmux-broken.sock"
after="starting on a broken lesson"
tmux -S "$sock" -f /dev/null new-session -d -x 100 -y 20 -c "$PWD" \
    "NO_COLOR=1 '$tracer' --step tests/errors/claim_no_expression.yaml; echo \"tracer exited with status \$?\"; sleep 60"
shows "tracer exited with status 1"
shows "claim_no_expression.yaml:8:5: error: a claim must be one"
hides "step 1 of"
# More keys: Page Down to the end and Page Up back, Ctrl-H as Backspace, Ctrl-J as Enter, a
# number longer than any step (its digits past 15 are dropped), and Q to quit. --width fixes
# the width: a narrower window is traced again, still at 80 columns.
# A new session (the last one ended) called $1, of $2 x $3, running the command $4 and then
# saying the status it exited with.
session() {
    tmux -S "$sock" kill-server 2>/dev/null
    sock="$tmp/tmux-$1.sock"
    after="starting $1"
    tmux -S "$sock" -f /dev/null new-session -d -x "$2" -y "$3" -c "$PWD" \
        "$4; echo \"tracer exited with status \$?\"; sleep 60"
}
session width-80 80 20 "NO_COLOR=1 '$tracer' --step --width 80 lessons/02_the_cat_sat.yaml"
shows "step 1 of 14   lines 1-18 of 32"
press NPage
shows "lines 15-32 of 32"
press PPage
shows "lines 1-18 of 32"
press 3 4 C-h
shows "go to step 3 (Enter)"
press C-j
shows "step 3 of 14"
press 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8
shows "go to step 123456789012345 (Enter)"
press Enter
shows "there is no step 123456789012345: the steps are 1 to 14"
press 6 Enter
shows "step 6 of 14"
after="resizing the window to 60 x 20"
tmux -S "$sock" resize-window -t 0 -x 60 -y 20
shows "step 6 of 14"
# The 80-column line, wrapped by the 60-column terminal (not by the tracer at 60 columns).
shows "matrix product: each row of the left against each colu"
hides "      column of the right"
press Q
shows "tracer exited with status 0"

# Keys from the terminal, but the trace into a pipe: --step refuses, naming its output.
session pipe 100 20 "NO_COLOR=1 '$tracer' --step lessons/01_softmax_weights.yaml | cat"
shows "tracer: --step waits for keys in a terminal, but its output is not one"
echo "--step showed the header, each stage, back, jumps, scrolling, a resize and quit as expected"
