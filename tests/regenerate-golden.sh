#!/bin/sh
# Rewrite golden/NAME.txt from the tracer's current output for every lesson named.
# Usage: regenerate-golden.sh TRACER SOURCE_ROOT NAME... ; a regenerated golden file is read
# like a code change before it is committed.
set -eu
tracer=$1 root=$2
shift 2
cd "$root"
for name in "$@"; do
    NO_COLOR=1 "$tracer" --color=never --width 80 "lessons/$name.yaml" > "golden/$name.txt.new"
    mv "golden/$name.txt.new" "golden/$name.txt"
    echo "wrote golden/$name.txt"
done
