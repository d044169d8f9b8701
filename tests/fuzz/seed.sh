#!/bin/sh
# Fill a fuzz corpus folder with every lesson, hostile case, numerics lesson, seed of the
# surfaces that read files and text (seeds/: their sizes are even, so that they run with
# --weights) and regression input: the fuzzer starts from real lessons and real mistakes.
# Usage: seed.sh CORPUS_DIR, run from the project root.
set -eu
corpus=$1
mkdir -p "$corpus"
for f in lessons/*.yaml tests/errors/*.yaml tests/numerics/*.yaml tests/grad/*.yaml tests/fuzz/seeds/* tests/fuzz/regressions/*; do
    [ -f "$f" ] || continue
    name=$(printf '%s' "$f" | tr '/' '_')
    cp "$f" "$corpus/$name"
done
echo "$(ls "$corpus" | wc -l) inputs in $corpus"
