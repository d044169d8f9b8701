#!/bin/sh
# --save when the files cannot be written: a file size limit standing in for a full disk
# (ulimit -f, with SIGXFSZ ignored so that write() fails with EFBIG instead of killing the
# tracer), and a read-only folder. Each must end in exit status 2, the exact error, nothing
# on stdout, no manifest.json (not even an old one) and no file cut short: what is there is
# whole, and nothing is left under a temporary name.
# Usage: save_errors.sh TRACER
set -u
tracer=$1
case $tracer in
/*) ;;
*) tracer=$PWD/$tracer ;;
esac
tmp=$(mktemp -d) || exit 99
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
failures=0
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}

# small.npy (2 values, 144 bytes) fits in 8 KiB; big.npy (10,000 values, 80 KiB) does not
cat > big.yaml <<'LESSON'
title: one tensor too big for the disk
given:
  small: [1, 2]
  big: {shape: [100, 100], init: ones}
steps:
  - y: big * 2
LESSON

# An earlier, complete save leaves a manifest: a failed save must not leave it standing.
"$tracer" --save full big.yaml >/dev/null || fail "the first save did not succeed"
[ -f full/manifest.json ] || fail "the first save wrote no manifest.json"
(
    ulimit -f 16
    trap '' XFSZ
    exec "$tracer" --save full big.yaml >stdout 2>stderr
)
status=$?
[ "$status" = 2 ] || fail "full disk: exit status $status, expected 2"
[ -s stdout ] && fail "full disk: something was printed on stdout"
printf "tracer: error: --save: cannot write 'full/big.npy': File too large\n" > want
cmp -s want stderr || { fail "full disk: stderr differs:"; diff -u want stderr; }
[ -e full/manifest.json ] && fail "full disk: the old manifest.json is still there"
ls full | grep -q '\.part$' && fail "full disk: a temporary file was left: $(ls full)"
# big.npy is the complete one of the first save, never a cut one
size=$(wc -c < full/big.npy)
[ "$size" = 80128 ] || fail "full disk: big.npy has $size bytes, not the whole 80128"

# A folder the tracer may not write to (root writes anywhere: then this part cannot run).
mkdir locked
chmod a-w locked
if touch locked/probe 2>/dev/null; then
    rm -f locked/probe
    echo "SKIP read-only folder: this user writes into read-only folders (root?); the case was not run"
else
    "$tracer" --save locked big.yaml >stdout 2>stderr
    status=$?
    [ "$status" = 2 ] || fail "read-only folder: exit status $status, expected 2"
    [ -s stdout ] && fail "read-only folder: something was printed on stdout"
    printf "tracer: error: --save: cannot write 'locked/small.npy': Permission denied\n" > want
    cmp -s want stderr || { fail "read-only folder: stderr differs:"; diff -u want stderr; }
fi

[ $failures = 0 ] || exit 1
echo "--save failures end in status 2 with nothing half-written"
