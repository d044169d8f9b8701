#!/bin/sh
# No fused multiply-add anywhere in the tracer's code: a fused a * b + c rounds once where the
# reference loop rounds twice, and the AVX2 and AVX-512 paths of the matrix product are built
# for CPUs that have FMA. -ffp-contract=off (meson.build) is what keeps them out; this reads
# the machine code to be sure. Usage: no_fma.sh LIBRARY.a... (skipped without objdump).
set -u
if ! command -v objdump >/dev/null 2>&1; then
    echo "SKIP: objdump (binutils) is not installed; the machine code was not checked for FMA"
    exit 77
fi
status=0
for library in "$@"; do
    found=$(objdump -d --no-show-raw-insn "$library" | grep -E '^\s+[0-9a-f]+:\s+v?f(n)?m(add|sub)[0-9a-z]*\s' | head -5)
    if [ -n "$found" ]; then
        echo "fused multiply-add instructions in $library:"
        echo "$found"
        status=1
    else
        echo "no fused multiply-add in $library ($(objdump -d --no-show-raw-insn "$library" | grep -c 'vmulpd') vector multiplies read)"
    fi
done
exit $status
