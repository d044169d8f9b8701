#!/bin/sh
# tracer --check against a golden file with one changed number: exit 1, a summary of the
# stages that differ, then a unified diff on stdout whose first hunk starts at the header of
# the stage that differs, and one line on stderr naming both files. Usage: check_diff.sh TRACER (run from the project root).
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
# First the summary: one stage of the 14 (4 givens, 7 steps, 3 intermediates) differs.
printf 'What differs in %s from %s:\n  Step 6 weights: changed\n1 of 14 stages changed.\n\n' \
    "$lesson" "$tmp/golden.txt" > "$tmp/summary"
head -n 4 "$tmp/out" | cmp -s - "$tmp/summary" || { echo "the summary is not:"; cat "$tmp/summary"; echo "but:"; head -n 4 "$tmp/out"; fail=1; }
sed -n 5p "$tmp/out" | grep -q "^--- $tmp/golden.txt$" || { echo "no '---' header"; fail=1; }
sed -n 6p "$tmp/out" | grep -q "^+++ $lesson (traced now)$" || { echo "no '+++' header"; fail=1; }
sed -n 7p "$tmp/out" | grep -q "^@@ " || { echo "no hunk header"; fail=1; }
# The hunk opens on the stage that differs, the weights (step 6), not just before the number.
sed -n 8p "$tmp/out" | grep -q "^ Step 6  weights = softmax(scaled)$" || { echo "the hunk does not start at the stage header:"; sed -n 8p "$tmp/out"; fail=1; }
# diff -u order: the golden file's line removed, then the line traced now.
grep -A1 "^-    The │  0.9999" "$tmp/out" | tail -n 1 | grep -q "^+    The │  0.3261" || { echo "no -/+ pair:"; cat "$tmp/out"; fail=1; }
grep -qx "tracer: $lesson differs from its golden file $tmp/golden.txt" "$tmp/err" || { echo "stderr:"; cat "$tmp/err"; fail=1; }
# And the real golden file still matches, and --check says so.
"$tracer" --check "$lesson" > "$tmp/out2" 2>&1 || { echo "the real golden file differs"; fail=1; }
grep -qx "$lesson matches golden/02_the_cat_sat.txt" "$tmp/out2" || { echo "no 'matches' line:"; cat "$tmp/out2"; fail=1; }
[ "$fail" = 0 ] && echo "ok: --check prints a diff from the stage that differs"
exit $fail
