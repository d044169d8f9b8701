#!/bin/sh
# --step in a real terminal: tmux runs the tracer in a pseudo-terminal of 100 x 60, the test
# presses keys and reads the screen after each one. Lesson 01 has 13 stages: the givens Q_0,
# K, V and d_k, then steps 1a, 1, 2a, 2, 3, 4, 5, 6 and 7, as its trace numbers them: the
# status line counts the lesson's 7 steps and a number typed goes to the step the trace
# prints with that number. Then --only, which leaves steps out of the screens but not out of
# the numbering; a screen of 80 x 20, too short for the header of lesson 02, scrolls, and a
# resized window is traced again at its width.
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
trap 'for s in "$tmp"/*.sock; do tmux -S "$s" kill-server 2>/dev/null; done; rm -rf "$tmp"' EXIT
sock=""
# session NAME COLUMNS ROWS WHAT COMMAND: end the terminal before (if any), then run COMMAND
# (the tracer's arguments and environment, in sh) in a new one of COLUMNS x ROWS, which
# stays open after the tracer exits so that its status can be read.
session() {
    [ -n "$sock" ] && tmux -S "$sock" kill-server 2>/dev/null
    sock="$tmp/$1.sock"
    after="starting $4"
    tmux -S "$sock" -f /dev/null new-session -d -x "$2" -y "$3" -c "$PWD" \
        "$5; echo \"tracer exited with status \$?\"; sleep 60"
}
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

session tmux 100 60 "in 100 x 60" "NO_COLOR=1 '$tracer' --step lessons/01_softmax_weights.yaml"
shows "given Q_0, before step 1 of 7"
shows "Softmax weights: how much"
shows "Given Q_0  [4]"
hides "Given K  [3, 4]"

press Enter
shows "given K, before step 1 of 7"
shows "Given K  [3, 4]"
hides "Given Q_0"
hides "Softmax weights: how much"

press Space
shows "given V, before step 1 of 7"
shows "Given V  [3, 4]"
hides "Given K  [3, 4]"

press b
shows "given K, before step 1 of 7"
shows "Given K  [3, 4]"
hides "Given V"

# 1 is the trace's "Step 1", not the first screen; 1a its part before it.
press 1
shows "go to step 1 (Enter)"
press Enter
shows "step 1 of 7"
shows "Step 1  scores = Q_0 @ K.T"
shows "scores[1] = Q_0 · K.T[:, 1]"
hides "Step 1a"

press 1 a
shows "go to step 1a (Enter)"
press Enter
shows "step 1a of 7"
shows "Step 1a  scores.1 = K.T"
hides "Step 1  scores"

# No stage is numbered 2b, so b after a 2 is the key b: back one stage, to the last given.
press 2 b
shows "given d_k, before step 1 of 7"
shows "Given d_k  []"

press 6 Enter
shows "step 6 of 7"
shows "Step 6  softmax_weights = softmax(scaled)"

press 9 9 Enter
shows "there is no step 99: the steps are 1 to 7"
shows "step 6 of 7"
shows "Step 6  softmax_weights = softmax(scaled)"

press 7 Enter
shows "step 7 of 7"
shows "Step 7  output_0 = weights @ V"
shows "Document check"
hides "Step 6  softmax_weights"

press Enter
shows "that was the last step"
shows "step 7 of 7"

press q
shows "tracer exited with status 0"

# --only shows two of the steps, still numbered as the lesson numbers them; a step left out
# says so, and b and Enter move between the two shown.
session tmux-only 100 60 "with --only scores,weights" "NO_COLOR=1 '$tracer' --step --only scores,weights lessons/01_softmax_weights.yaml"
shows "step 1 of 7"
shows "Step 1  scores = Q_0 @ K.T"
press 3 Enter
shows "step 3 is not shown: --only, --from or --to left it out"
shows "step 1 of 7"
press 5 Enter
shows "step 5 of 7"
shows "Step 5  weights = exps / total"
hides "Step 1  scores"
press b
shows "step 1 of 7"
press 0 Enter
shows "step 5 of 7"
press q
shows "tracer exited with status 0"

# Lesson 16's backward pass is step 27's parts, 27a to 27z, then 27.27 to 27.44: a letter or
# a point after the digits is part of the number where a stage is numbered so; 27b is a
# stage, so b there is typed, not "back".
session tmux-parts 100 60 "on lesson 16" "NO_COLOR=1 '$tracer' --step lessons/16_backward_pass.yaml"
shows "given E, before step 1 of 37"
press 2 7 b
shows "go to step 27b (Enter)"
press Enter
shows "step 27b of 37"
shows "Step 27b  dloss/dlogits = dloss/dlast_logits"
press 2 7 . 3 0 Enter
shows "step 27.30 of 37"
shows "Step 27.30  dloss/dweights_1.1 = Q_1.T @ dloss/dweights_1.2"
press 2 7 . 2 Enter
shows "there is no step 27.2: the steps are 1 to 37"
press 3 8 Enter
shows "there is no step 38: the steps are 1 to 37"
press q
shows "tracer exited with status 0"

# 20 rows: 18 for the text, a blank line and the status line. The first screen of lesson 02
# is its header (4 lines, a blank line, 18 lines of introduction with its blank line) and
# Given X (a blank line, its heading, 6 lines of box and the document's line): 32 lines.
session tmux-small 80 20 "in 80 x 20" "NO_COLOR=1 '$tracer' --step lessons/02_the_cat_sat.yaml"
shows "given X, before step 1 of 7   lines 1-18 of 32"
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
shows "given W_Q, before step 1 of 7"
shows "Given W_Q  [4, 4]"
hides "lines"

# A narrower window traces the lesson again at its width and stays on the same step: at 80
# columns the operation's description fits on one line, at 60 its last words wrap.
press 1 Enter
shows "step 1 of 7"
shows "Step 1  Q = X @ W_Q"
shows "matrix product: each row of the left against each column of the right"
after="resizing the window to 60 x 20"
tmux -S "$sock" resize-window -t 0 -x 60 -y 20
shows "      column of the right"
shows "step 1 of 7"
hides "against each column of the right"
press q
shows "tracer exited with status 0"

# With --save, the files are written once, when the stepping begins: a resize lays the trace
# out again without writing them again (each write renames a new file into place, so the
# manifest's inode would change).
session tmux-save 80 24 "with --save in 80 x 24" "NO_COLOR=1 '$tracer' --step --save '$tmp/saved' lessons/02_the_cat_sat.yaml"
shows "given X, before step 1 of 7"
press 1 Enter
shows "Step 1  Q = X @ W_Q"
before=$(ls -i "$tmp/saved/manifest.json" "$tmp/saved/Q.npy")
after="resizing the window to 60 x 20, with --save"
tmux -S "$sock" resize-window -t 0 -x 60 -y 20
shows "      column of the right"
now=$(ls -i "$tmp/saved/manifest.json" "$tmp/saved/Q.npy")
if [ "$before" != "$now" ]; then
    echo "a resize wrote the --save files again: before $before, after $now"
    exit 1
fi
press q
shows "tracer exited with status 0"

# In colour (NO_COLOR unset), the other keys: arrows and Page Up, a leading 0 that is not a
# step, Backspace, B at the first step, keys the tracer does not know, a taller window, and
# Ctrl-D to quit. Then a lesson that does not load.
session tmux-keys 80 20 "in colour in 80 x 20" "'$tracer' --step lessons/02_the_cat_sat.yaml"
shows "given X, before step 1 of 7   lines 1-18 of "
press Up
shows "given X, before step 1 of 7   lines 1-18 of "
press j
shows "lines 2-19 of "
press PPage
shows "lines 1-18 of "
press 0 1
shows "go to step 1"
press BSpace 2
shows "go to step 2"
press Enter
shows "step 2 of 7"
shows "Step 2  K = X @ W_K"
press B
shows "step 1 of 7"
# Escape sequences the tracer does not know (Escape then x; the right arrow, ESC [ C) do
# nothing: still step 1.
press Escape x
press Right
press Enter
shows "step 2 of 7"
press B
shows "step 1 of 7"
# Back through the five givens to the first screen, where B stays.
press B B B B B
shows "given X, before step 1 of 7   lines 1-18 of "
press B
shows "given X, before step 1 of 7   lines 1-18 of "
# A taller window of the same width is not traced again: the same step shows more lines.
after="resizing the window to 80 x 24"
tmux -S "$sock" resize-window -t 0 -x 80 -y 24
shows "given X, before step 1 of 7   lines 1-22 of "
press C-d
shows "tracer exited with status 0"

# A lesson that does not load: its located error, and no step at all.
session tmux-broken 100 20 "on a broken lesson" "NO_COLOR=1 '$tracer' --step tests/errors/claim_no_expression.yaml"
shows "tracer exited with status 1"
shows "claim_no_expression.yaml:8:5: error: a claim must be one"
hides "step 1 of"
hides "before step"
# More keys: Page Down to the end and Page Up back, Ctrl-H as Backspace, Ctrl-J as Enter, a
# number longer than any step (what is typed past 15 characters is dropped), and Q to quit.
# --width fixes the width: a narrower window is traced again, still at 80 columns.
session tmux-width 80 20 "with --width 80 in 80 x 20" "NO_COLOR=1 '$tracer' --step --width 80 lessons/02_the_cat_sat.yaml"
shows "given X, before step 1 of 7   lines 1-18 of 32"
press NPage
shows "lines 15-32 of 32"
press PPage
shows "lines 1-18 of 32"
press 3 4 C-h
shows "go to step 3 (Enter)"
press C-j
shows "step 3 of 7"
shows "Step 3  V = X @ W_V"
press 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8
shows "go to step 123456789012345 (Enter)"
press Enter
shows "there is no step 123456789012345: the steps are 1 to 7"
press 1 Enter
shows "step 1 of 7"
after="resizing the window to 60 x 20"
tmux -S "$sock" resize-window -t 0 -x 60 -y 20
shows "step 1 of 7"
# The 80-column line, wrapped by the 60-column terminal (not by the tracer at 60 columns).
shows "matrix product: each row of the left against each colu"
hides "      column of the right"
press Q
shows "tracer exited with status 0"

# A window of 3 rows is too short for a page: the pager lays it out for 80 x 24, as for a
# terminal that cannot say its size, so the first screen (the header and Q_0) fits its page
# and the status line offers Enter, not scrolling, its keys named in short to fit the 79
# columns of an 80-column one.
session tmux-short 100 3 "in 100 x 3" "NO_COLOR=1 '$tracer' --step lessons/01_softmax_weights.yaml"
shows " given Q_0, before step 1 of 7   Enter next, b back, number+Enter jumps, q quit"
hides "Enter/space"
hides "lines 1-"
press q
shows "tracer exited with status 0"

# Keys from the terminal, but the trace into a pipe: --step refuses, naming its output.
session tmux-pipe 100 20 "with its output into a pipe" "NO_COLOR=1 '$tracer' --step lessons/01_softmax_weights.yaml | cat"
shows "tracer: --step waits for keys in a terminal, but its output is not one"
echo "--step showed the header, each stage in the lesson's numbering, back, jumps, --only, scrolling, a resize and quit as expected"
