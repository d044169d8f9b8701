#!/bin/sh
# The JSON trace of a lesson is the same bytes at 1, 2 and 3 threads: the fast layer splits
# products and the loops of the forward and backward pass among threads, and each value must
# come out as on one thread. Usage: threads_same.sh TRACER LESSON.yaml
set -u
tracer=$1 lesson=$2
want=$("$tracer" --format json --threads 1 "$lesson" | sha256sum | cut -d' ' -f1)
[ -n "$want" ] || exit 1
for threads in 2 3; do
    got=$("$tracer" --format json --threads "$threads" "$lesson" | sha256sum | cut -d' ' -f1)
    if [ "$got" != "$want" ]; then
        echo "$lesson: the JSON trace at $threads threads differs from the one at 1 thread"
        exit 1
    fi
done
echo "$lesson: the same JSON at 1, 2 and 3 threads"
