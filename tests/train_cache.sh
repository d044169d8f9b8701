#!/bin/sh
# The training cache on whole lessons (run/train_cache.h): every lesson of the course that
# trains gives its golden trace both when it trains and when it reads its training back; a
# second run reads the file the first one wrote (the file is not written again); an edit of
# the narration reads it too, an edit of a number trains anew into another file; a lesson that
# takes another's trained weights shares that lesson's training; an edit of a text trained on
# trains anew; a text's validation losses are read back with its training; a file
# changed on disk is passed over and written again whole; two tracers at once keep one file;
# TRACER_CACHE=off writes nothing.
# Usage: train_cache.sh TRACER (run from the project root).
set -u
tracer=$1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}
files() { find "$1" -name '*.train' 2>/dev/null | wc -l; }
inode() { ls -i "$1"/*.train 2>/dev/null | awk '{print $1}' | sort | tr '\n' ' '; }

# Every lesson that trains: trained, then read back, both as golden.
for lesson in lessons/*.yaml; do
    grep -q '^train:' "$lesson" || continue
    name=$(basename "$lesson" .yaml)
    dir=$tmp/$name
    for run in trains reads; do
        TRACER_CACHE=$dir "$tracer" --color=never "$lesson" > "$tmp/out" 2>&1 || fail "$name ($run): exit status $?"
        cmp -s "$tmp/out" "golden/$name.txt" || fail "$name ($run): the trace differs from golden/$name.txt"
        [ "$(files "$dir")" = 1 ] || fail "$name ($run): $(files "$dir") files in the cache, not 1"
        [ $run = trains ] && first=$(inode "$dir")
    done
    [ "$(inode "$dir")" = "$first" ] || fail "$name: the second run wrote its training again instead of reading it"
done

# A lesson whose givens take another's trained weights (trained:) trains that lesson into its
# own file, which that lesson then reads back, with the same trace as without the cache; and
# lesson 30, where lesson 23 trained first, reads lesson 23's file and writes none.
dir=$tmp/shared
TRACER_CACHE=$dir "$tracer" tests/alloc/uses_trained.yaml > "$tmp/out" 2>&1 || fail "uses_trained: exit status $?"
first=$(inode "$dir")
[ "$(files "$dir")" = 1 ] || fail "uses_trained left $(files "$dir") files in the cache, not its model's one"
TRACER_CACHE=$dir "$tracer" tests/alloc/trained_model.yaml > /dev/null 2>&1
[ "$(inode "$dir")" = "$first" ] || fail "the model trained again after the lesson that takes its weights had trained it"
TRACER_CACHE=off "$tracer" tests/alloc/uses_trained.yaml > "$tmp/fresh" 2>&1
cmp -s "$tmp/out" "$tmp/fresh" || fail "uses_trained traces otherwise with the cache and without"
dir=$tmp/23_induction_head
first=$(inode "$dir")
TRACER_CACHE=$dir "$tracer" --color=never lessons/30_ablating_heads.yaml > "$tmp/out" 2>&1
cmp -s "$tmp/out" golden/30_ablating_heads.txt || fail "lesson 30 after lesson 23: the trace differs from its golden file"
[ "$(inode "$dir")" = "$first" ] || fail "lesson 30 trained lesson 23 again after lesson 23 had trained"

# Edits of lesson 21: narration and title (read back), a number of train: (another file).
lesson=lessons/21_previous_token_head.yaml
dir=$tmp/edits
TRACER_CACHE=$dir "$tracer" "$lesson" > /dev/null 2>&1
first=$(inode "$dir")
sed -e 's/^title: .*/title: "Another title"/' -e 's/say: Each token/say: Every token/' "$lesson" > "$tmp/narration.yaml"
cmp -s "$lesson" "$tmp/narration.yaml" && fail "the narration edit changed nothing"
TRACER_CACHE=$dir "$tracer" "$tmp/narration.yaml" > /dev/null 2>&1 || fail "the narration edit: exit status $?"
[ "$(inode "$dir")" = "$first" ] || fail "an edit of the narration trained again"
sed -e 's/^\(  *lr: \).*/\10.02/' "$lesson" > "$tmp/lr.yaml"
cmp -s "$lesson" "$tmp/lr.yaml" && fail "the lr edit changed nothing"
TRACER_CACHE=$dir "$tracer" "$tmp/lr.yaml" > "$tmp/lr.out" 2>&1 || fail "the lr edit: exit status $?"
[ "$(files "$dir")" = 2 ] || fail "an edit of lr did not train into a file of its own ($(files "$dir") files)"
TRACER_CACHE=off "$tracer" "$tmp/lr.yaml" > "$tmp/lr.fresh" 2>&1
cmp -s "$tmp/lr.out" "$tmp/lr.fresh" || fail "the lr edit traces otherwise with the cache and without"

# A text trained on is part of the key: the same lesson on an edited text trains again.
mkdir -p "$tmp/text"
cp tests/train/text_bigram.yaml tests/train/bytes.text "$tmp/text/"
dir=$tmp/text/cache
TRACER_CACHE=$dir "$tracer" "$tmp/text/text_bigram.yaml" > "$tmp/text/before" 2>&1 || fail "text_bigram: exit status $?"
sed -i 's/tracer/Tracer/' "$tmp/text/bytes.text"
TRACER_CACHE=$dir "$tracer" "$tmp/text/text_bigram.yaml" > "$tmp/text/after" 2>&1 || fail "text_bigram, edited text: exit status $?"
[ "$(files "$dir")" = 2 ] || fail "an edit of the text did not train into a file of its own ($(files "$dir") files)"
cmp -s "$tmp/text/before" "$tmp/text/after" && fail "an edit of the text left the trace as it was"

# A text with a held-out tail: its validation losses are stored with the training and read
# back, the same to the bit (the JSON trace) and the same text trace as its golden file; another
# fraction held out trains anew.
cp tests/train/text_validation.yaml "$tmp/text/"
cp tests/train/bytes.text "$tmp/text/bytes.text"
dir=$tmp/text/validation
for run in trains reads; do
    TRACER_CACHE=$dir "$tracer" --color=never "$tmp/text/text_validation.yaml" > "$tmp/out" 2>&1 ||
        fail "text_validation ($run): exit status $?"
    cmp -s "$tmp/out" tests/train/text_validation.txt || fail "text_validation ($run): the trace differs from its golden file"
    TRACER_CACHE=$dir "$tracer" --format json "$tmp/text/text_validation.yaml" > "$tmp/text/$run.json" 2>&1
    [ $run = trains ] && first=$(inode "$dir")
done
[ "$(inode "$dir")" = "$first" ] || fail "text_validation: the second run wrote its training again instead of reading it"
TRACER_CACHE=off "$tracer" --format json "$tmp/text/text_validation.yaml" > "$tmp/text/fresh.json" 2>&1
cmp -s "$tmp/text/reads.json" "$tmp/text/fresh.json" || fail "text_validation: the JSON read back differs from a fresh training"
grep -q '"validation": {' "$tmp/text/reads.json" || fail "text_validation: no validation in the JSON read back"
sed -i 's/validation: 0.25/validation: 0.3/' "$tmp/text/text_validation.yaml"
TRACER_CACHE=$dir "$tracer" "$tmp/text/text_validation.yaml" > /dev/null 2>&1 || fail "text_validation 0.3: exit status $?"
[ "$(files "$dir")" = 2 ] || fail "another validation: did not train into a file of its own ($(files "$dir") files)"

# A file changed on disk: passed over, trained again, written again whole.
dir=$tmp/changed
TRACER_CACHE=$dir "$tracer" "$lesson" > /dev/null 2>&1
file=$(find "$dir" -name '*.train')
printf 'X' | dd of="$file" bs=1 seek=100 conv=notrunc 2>/dev/null
TRACER_CACHE=$dir "$tracer" --color=never "$lesson" > "$tmp/out" 2>&1 || fail "a changed file: exit status $?"
cmp -s "$tmp/out" "golden/21_previous_token_head.txt" || fail "a changed file in the cache changed the trace"
TRACER_CACHE=$dir "$tracer" --color=never "$lesson" > /dev/null 2>&1
before=$(inode "$dir")
TRACER_CACHE=$dir "$tracer" --color=never "$lesson" > /dev/null 2>&1
[ "$(inode "$dir")" = "$before" ] || fail "the file written again after a change is not read back"

# Two tracers at once on a cold cache: both trace the golden file and one file is kept (the
# second waits for the first's lock, then reads; tests/test_train_cache.c tests the wait).
dir=$tmp/together
TRACER_CACHE=$dir "$tracer" --color=never "$lesson" > "$tmp/first" 2>&1 &
TRACER_CACHE=$dir "$tracer" --color=never "$lesson" > "$tmp/second" 2>&1 || fail "the second of two at once: exit status $?"
wait $! || fail "the first of two at once: exit status $?"
for run in first second; do
    cmp -s "$tmp/$run" "golden/21_previous_token_head.txt" || fail "two at once: the $run trace differs from its golden file"
done
[ "$(files "$dir")" = 1 ] || fail "two at once left $(files "$dir") files in the cache, not 1"

# Off: nothing written, anywhere under HOME either.
HOME=$tmp/home TRACER_CACHE=off "$tracer" "$lesson" > /dev/null 2>&1
[ "$(files "$tmp/home")" = 0 ] || fail "TRACER_CACHE=off wrote a file"
HOME=$tmp/home XDG_CACHE_HOME= TRACER_CACHE= "$tracer" "$lesson" > /dev/null 2>&1
[ "$(files "$tmp/home/.cache/tracer")" = 1 ] || fail "without TRACER_CACHE the cache is not ~/.cache/tracer"

[ "$failures" = 0 ] && echo "ok: the training cache reads back what training gives, and only that"
exit $((failures > 0))
