#!/bin/sh
# Every lesson and every error case must be registered in tests/meson.build, or meson test
# would silently skip it. Usage: registered.sh FOLDER EXT NAME... (run from the project root).
set -u
dir=$1 ext=$2
shift 2
missing=0
for f in "$dir"/*."$ext"; do
    [ -e "$f" ] || continue
    name=$(basename "$f" ."$ext")
    found=0
    for n in "$@"; do [ "$n" = "$name" ] && found=1; done
    if [ $found = 0 ]; then
        echo "$f is not listed in tests/meson.build"
        missing=1
    fi
done
exit $missing
