#!/bin/sh
# --save when the files cannot be written, or links are planted where they go: a file size limit standing in for a full disk
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
# A coverage build's runtime cannot write its counts under the same size limit and says so
# ("libgcov profiling error: ..."): that line is the build's, not the tracer's.
grep -v -E '^(libgcov )?profiling' stderr > stderr.tracer || true
cmp -s want stderr.tracer || { fail "full disk: stderr differs:"; diff -u want stderr.tracer; }
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

# The same failures with no permission needed, so they run as root too: a folder standing
# where a file must go. expect NAME STDERR runs --save into NAME with big.yaml.
expect() {
    "$tracer" --save "$1" big.yaml >stdout 2>stderr
    status=$?
    [ "$status" = 2 ] || fail "$1: exit status $status, expected 2"
    [ -s stdout ] && fail "$1: something was printed on stdout"
    printf '%s\n' "$2" > want
    cmp -s want stderr || { fail "$1: stderr differs:"; diff -u want stderr; }
    [ -e "$1/manifest.json" ] && [ ! -d "$1/manifest.json" ] && fail "$1: a manifest.json was written"
}
# The temporary file cannot be opened: a folder has its name.
mkdir -p part_taken/small.npy.part
expect part_taken "tracer: error: --save: cannot write 'part_taken/small.npy': Is a directory"
# The whole file cannot take its name: a folder has it (and keeps it, with no .part beside).
mkdir -p name_taken/y.npy/inside
expect name_taken "tracer: error: --save: cannot write 'name_taken/y.npy': Is a directory"
[ -d name_taken/y.npy/inside ] || fail "name_taken: the folder in the way was touched"
[ -e name_taken/y.npy.part ] && fail "name_taken: y.npy.part was left behind"
[ -f name_taken/big.npy ] || fail "name_taken: big.npy, written before y.npy, is missing"
# The old manifest cannot be removed: it is a folder.
mkdir -p manifest_taken/manifest.json
expect manifest_taken "tracer: error: --save: cannot replace 'manifest_taken/manifest.json': Is a directory"
[ -e manifest_taken/small.npy ] && fail "manifest_taken: a stage was written after the manifest could not go"

# Links planted in the folder are never written through: a link in place of a temporary file
# is removed and the file made anew, and a link in place of a stage's file is replaced by it.
mkdir planted
echo "keep me" > victim.txt
echo "keep me too" > victim2.txt
ln -s ../victim.txt planted/small.npy.part
ln -s ../victim2.txt planted/y.npy
"$tracer" --save planted big.yaml >stdout 2>stderr || fail "planted links: the save did not succeed: $(cat stderr)"
[ "$(cat victim.txt)" = "keep me" ] || fail "planted links: victim.txt was written through small.npy.part"
[ "$(cat victim2.txt)" = "keep me too" ] || fail "planted links: victim2.txt was written through y.npy"
for f in small.npy y.npy; do
    [ -f "planted/$f" ] && [ ! -L "planted/$f" ] || fail "planted links: planted/$f is not a file of its own"
done
[ -e planted/small.npy.part ] && fail "planted links: small.npy.part was left behind"

# Names past the 4096 bytes a path may have: a folder of 4078 bytes (made in parts of 100)
# holds small.npy.part (4078 + 15) but not manifest.json.part (4078 + 20); one of 4085 bytes
# does not hold manifest.json (4085 + 14); and one of 4106 bytes cannot be made.
deep=d
while [ ${#deep} -lt 3900 ]; do
    deep="$deep/$(printf '%099d' 0)"
done
long=$deep/$(printf "%0$((4078 - ${#deep} - 1))d" 0)
longer=$deep/$(printf "%0$((4085 - ${#deep} - 1))d" 0)
[ ${#long} = 4078 ] && [ ${#longer} = 4085 ] || fail "the long folder names are ${#long} and ${#longer} bytes"
mkdir -p "$long" "$longer" || exit 99
# A path this long is shown by its last 200 bytes, so that the reason is never cut off.
end_of() { printf '%s' "$1" | tail -c 200; }
expect "$long" "tracer: error: --save: cannot write '...$(end_of "$long/manifest.json")': File name too long"
[ -f "$long/y.npy" ] || fail "long: y.npy, which fits, was not written"
expect "$longer" "tracer: error: --save: cannot write '...$(end_of "$longer")': File name too long"
expect "$longer/01234567890123456789" \
    "tracer: error: --save: cannot create the folder '...$(end_of "$longer/01234567890123456789")': File name too long"

[ $failures = 0 ] || exit 1
echo "--save failures end in status 2 with nothing half-written, and no link is written through"
