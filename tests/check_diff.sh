#!/bin/sh
# tracer --check against a golden file with one changed number: exit 1, a unified diff on
# stdout whose first hunk starts at the header of the stage that differs, and one line on
# stderr naming both files. Usage: check_diff.sh TRACER (run from the project root).
set -u
tracer=$1
lesson=lessons/02_the_cat_sat.yaml
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# Change the first weight of "The" in the golden file: 0.3261 -> 0.9999.
sed '0,/The │  0.3261/s//The │  0.9999/' golden/02_the_cat_sat.txt > "$tmp/golden.txt"
cmp -s golden/02_the_cat_sat.txt "$tmp/golden.txt" && { echo "the golden file was not changed"; exit 99; }
"$tracer" --check --golden "$tmp/golden.txt" "$lesson" > "$tmp/out" 2> "$tmp/err"
status=$?
fail=0
[ "$status" = 1 ] || { echo "exit status $status, expected 1"; fail=1; }
head -n 1 "$tmp/out" | grep -q "^--- $tmp/golden.txt$" || { echo "no '---' header"; fail=1; }
sed -n 2p "$tmp/out" | grep -q "^+++ $lesson (traced now)$" || { echo "no '+++' header"; fail=1; }
sed -n 3p "$tmp/out" | grep -q "^@@ " || { echo "no hunk header"; fail=1; }
# The hunk opens on the stage that differs, the weights (step 6), not just before the number.
sed -n 4p "$tmp/out" | grep -q "^ Step 6  weights = softmax(scaled)$" || { echo "the hunk does not start at the stage header:"; sed -n 4p "$tmp/out"; fail=1; }
# diff -u order: the golden file's line removed, then the line traced now.
grep -A1 "^-    The │  0.9999" "$tmp/out" | tail -n 1 | grep -q "^+    The │  0.3261" || { echo "no -/+ pair:"; cat "$tmp/out"; fail=1; }
grep -qx "tracer: $lesson differs from its golden file $tmp/golden.txt" "$tmp/err" || { echo "stderr:"; cat "$tmp/err"; fail=1; }
# And the real golden file still matches.
"$tracer" --check "$lesson" > "$tmp/out2" 2>&1 || { echo "the real golden file differs"; fail=1; }
[ "$fail" = 0 ] && echo "ok: --check prints a diff from the stage that differs"
exit $fail
