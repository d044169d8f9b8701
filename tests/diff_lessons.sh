#!/bin/sh
# tracer --diff ORIGINAL EDITED: what a student's edit changed, stage by stage. Exit 0 for the
# same trace, 1 when they differ, 2 on trouble. The numbers below are worked out by hand.
# Usage: diff_lessons.sh TRACER (run from the project root).
set -u
tracer=$1
lesson=lessons/01_softmax_weights.yaml
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
expect_line() {  # FILE LINE: the exact line must appear
    grep -qxF -- "$2" "$1" || { echo "missing line: $2"; echo "--- got:"; cat "$1"; fail=1; }
}

# The same lesson twice: exit 0 and one line saying so.
"$tracer" --diff "$lesson" "$lesson" > "$tmp/same" 2> "$tmp/err"
[ $? = 0 ] || { echo "identical lessons: exit status is not 0"; fail=1; }
expect_line "$tmp/same" "The same trace: all 13 stages have the same values."
[ -s "$tmp/err" ] && { echo "identical lessons wrote to stderr:"; cat "$tmp/err"; fail=1; }

# Q_0[2] from 0.5 to 0.9: scores = Q_0 . K_j = 0.5 + 0.9*0.3, 0.8 + 0.9*0.4, 0.1 + 0.9*0.2.
# At 120 columns every line of a stage fits, and before and after go side by side.
sed 's/values: \[1.0, 0.0, 0.5, 0.0\]/values: [1.0, 0.0, 0.9, 0.0]/' "$lesson" > "$tmp/mine.yaml"
"$tracer" --diff --width 120 "$lesson" "$tmp/mine.yaml" > "$tmp/one" 2> "$tmp/err"
[ $? = 1 ] || { echo "one changed number: exit status is not 1"; fail=1; }
expect_line "$tmp/one" "--- $lesson"
expect_line "$tmp/one" "+++ $tmp/mine.yaml"
# The edit itself first, named by its place in the file: Q_0's values, item 2.
expect_line "$tmp/one" "Changed in the lesson:"
expect_line "$tmp/one" "  given.Q_0.values[2]: 0.5 -> 0.9"
expect_line "$tmp/one" "      [  1.0000  0.0000  0.5000  0.0000 ]   [  1.0000  0.0000  0.9000  0.0000 ]   <- changed"
expect_line "$tmp/one" "Given Q_0 [4]: 1 of 4 values changed; the largest change is at [2]: 0.5000 -> 0.9000"
expect_line "$tmp/one" "Step 1 scores [3]: 3 of 3 values changed; the largest change is at [1]: 1.0000 -> 1.1600"
expect_line "$tmp/one" "      [  0.6500  1.0000  0.2000 ]   [  0.7700  1.1600  0.2800 ]   <- changed"
# scaled = scores / 2; total = e^0.385 + e^0.58 + e^0.14 = 4.4059 (was 4.1379).
expect_line "$tmp/one" "Step 2 scaled [3]: 3 of 3 values changed; the largest change is at [1]: 0.5000 -> 0.5800"
expect_line "$tmp/one" "Step 4 total: 1 of 1 value changed; the largest change is 4.1379 -> 4.4059"
# K, V, d_k, K.T and sqrt(d_k) do not change: 8 of 13 stages differ.
expect_line "$tmp/one" "8 of the 13 stages in both lessons differ."
grep -q "^Given K\b\|^Given V\b\|^Given d_k" "$tmp/one" && { echo "unchanged givens listed"; fail=1; }
# At 80 columns the four values before and after do not fit side by side: one above the other,
# and a line too long goes on under its start.
"$tracer" --diff "$lesson" "$tmp/mine.yaml" > "$tmp/narrow" 2> "$tmp/err"
expect_line "$tmp/narrow" "Given Q_0 [4]: 1 of 4 values changed;"
expect_line "$tmp/narrow" "    the largest change is at [2]: 0.5000 -> 0.9000"
expect_line "$tmp/narrow" "      before  [  1.0000  0.0000  0.5000  0.0000 ]"
expect_line "$tmp/narrow" "      after   [  1.0000  0.0000  0.9000  0.0000 ]   <- changed"

# A change of shape: a fourth key and value (K and V [4, 4], scores [4]), and a new step.
sed -e 's/tokens: \[The, cat, sat\]/tokens: [The, cat, sat, down]/' \
    -e 's/      - \[0.1, 0.6, 0.2, 0.3\]/      - [0.1, 0.6, 0.2, 0.3]\n      - [0.0, 0.0, 1.0, 0.0]/' \
    -e 's/      - \[0.2, 0.1, 0.4, 0.3\]/      - [0.2, 0.1, 0.4, 0.3]\n      - [1.0, 1.0, 1.0, 1.0]/' \
    -e 's/^outro:/  - extra: output_0 * 2\noutro:/' -e '/document:/d' "$lesson" > "$tmp/four.yaml"
"$tracer" --diff --width 120 "$lesson" "$tmp/four.yaml" > "$tmp/shape" 2> "$tmp/err"
[ $? = 1 ] || { echo "different shapes: exit status is not 1"; cat "$tmp/err"; fail=1; }
expect_line "$tmp/shape" "Given K [4, 4]: the shape changed from [3, 4] to [4, 4]"
# The new key (0, 0, 1, 0) scores Q_0 . K_3 = 0.5.
expect_line "$tmp/shape" "      [  0.6500  1.0000  0.2000 ]   [  0.6500  1.0000  0.2000  0.5000 ]   <- changed"
expect_line "$tmp/shape" "Only in $tmp/four.yaml: Step 8 extra [4]"
# The edit, key by key: the new token, K's and V's fourth rows, the 10 documents it deleted and
# the new step, 14 changes of which the first 12 are listed.
expect_line "$tmp/shape" "  labels.tokens: [The, cat, sat] -> [The, cat, sat, down]"
expect_line "$tmp/shape" "  given.K.values[3]: added: [0.0, 0.0, 1.0, 0.0]"
expect_line "$tmp/shape" "  and 2 more"

# Trouble: a broken lesson is reported as an error, with status 2.
printf 'title: broken\nsteps:\n  - y: nothing_here + 1\n' > "$tmp/broken.yaml"
"$tracer" --diff "$lesson" "$tmp/broken.yaml" > "$tmp/out" 2> "$tmp/err"
[ $? = 2 ] || { echo "a broken lesson: exit status is not 2"; fail=1; }
[ -s "$tmp/out" ] && { echo "a broken lesson printed a comparison"; fail=1; }
grep -q "^$tmp/broken.yaml:3:.*error: unknown name 'nothing_here'" "$tmp/err" || { echo "no located error:"; cat "$tmp/err"; fail=1; }
"$tracer" --diff "$lesson" > "$tmp/out" 2> "$tmp/err"
[ $? = 2 ] || { echo "one lesson only: exit status is not 2"; fail=1; }

# A full disk is trouble too, not a comparison.
if [ -w /dev/full ]; then
    "$tracer" --diff "$lesson" "$lesson" > /dev/full 2> "$tmp/err"
    [ $? = 2 ] || { echo "a full disk: exit status is not 2"; fail=1; }
    grep -q "^tracer: cannot write the comparison: No space left on device$" "$tmp/err" ||
        { echo "a full disk:"; cat "$tmp/err"; fail=1; }
fi

# A text with its last quarter held out against the same lesson without it: the validation
# loss after training on one side only (2.4002, the value train_torch.py measures again in
# PyTorch), beside the last training losses.
cp tests/train/text_validation.yaml tests/train/bytes.text "$tmp/"
sed 's/, validation: 0.25//' tests/train/text_validation.yaml > "$tmp/whole.yaml"
"$tracer" --diff "$tmp/text_validation.yaml" "$tmp/whole.yaml" > "$tmp/held" 2> "$tmp/err"
[ $? = 1 ] || { echo "validation left out: exit status is not 1"; fail=1; }
expect_line "$tmp/held" "  train.data.ids.validation: removed (was 0.25)"
expect_line "$tmp/held" "  validation after training: 2.4002 -> none"

[ "$fail" = 0 ] && echo "ok: --diff reports what an edit changed"
exit $fail
