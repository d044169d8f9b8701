#!/bin/sh
# A student's edit is never blamed on the document. For each edited lesson under tests/edits/
# (a course lesson with one thing changed, as a student would): the trace says what follows
# the edit (or what it set aside), runs in one go (status 0), and never says the document goes
# wrong by itself. Usage: edits_honest.sh TRACER NAME... (run from the project root).
set -u
tracer=$1
shift
fail=0
for name in "$@"; do
    out=$("$tracer" --color=never "tests/edits/$name.yaml" 2>/dev/null)
    status=$?
    [ "$status" = 0 ] || { echo "$name: exit status $status, expected 0"; fail=1; continue; }
    printf '%s\n' "$out" | grep -q "follows your edit\|document: not compared" ||
        { echo "$name: the trace does not say what follows the edit"; fail=1; }
    printf '%s\n' "$out" | grep -q "^You changed " || { echo "$name: the summary does not name the edit first"; fail=1; }
    if printf '%s\n' "$out" | grep -n "goes wrong by itself at\|goes wrong here by itself\|in the given"; then
        echo "$name: the trace blames the document for the edit"
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "ok: $# edited lessons follow the edit and never blame the document"
exit $fail
