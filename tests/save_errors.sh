#!/bin/sh
# --save's file names first: a gradient's '/' written '.', and a block's result saved under its
# name and again under the name results: gives it, listed as an alias in manifest.json.
# Then --save when the files cannot be written, or links are planted where they go: a file size limit standing in for a full disk
# (ulimit -f, with SIGXFSZ ignored so that write() fails with EFBIG instead of killing the
# tracer), a read-only folder, a link or a folder where a file goes, and a stage whose file is
# one the lesson reads. Each must end in exit status 2, the exact error, nothing on stdout, no
# manifest.json (not even an old one) and no file cut short: what is there is whole, and
# nothing is left under a temporary name.
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

cat > names.yaml <<'LESSON'
title: The names of saved files
given:
  W: [[1.0, 2.0], [3.0, 4.0]]
  x: [[1.0, -1.0]]
blocks:
  layer:
    inputs: [x, W]
    results: [y]
    steps:
      - y: x @ W
steps:
  - use: layer
    as: first
    inputs: {x: x, W: W}
    results: {out: y}
  - loss: sum(out * out)
  - g: grad(loss, W)
LESSON
"$tracer" --save names names.yaml > /dev/null 2>&1 || fail "names: exit status $?"
# the stages: W, x, first.y (= out), loss.1 = out * out, loss, and the gradients of loss by
# loss.1, first.y and W, then g
expected="W.npy dloss.dW.npy dloss.dfirst.y.npy dloss.dloss.1.npy first.y.npy g.npy loss.1.npy loss.npy manifest.json out.npy x.npy"
[ "$(ls names | tr '\n' ' ')" = "$expected " ] || fail "names: the files are $(ls names | tr '\n' ' ')"
cmp -s names/out.npy names/first.y.npy || fail "names: out.npy is not first.y.npy's values"
cmp -s names/g.npy names/dloss.dW.npy || fail "names: g.npy is not dloss.dW.npy's values"
grep -q '"name": "first.y", .*"aliases": {"out": "out.npy"}' names/manifest.json ||
    fail "names: manifest.json does not list out.npy as first.y's alias"
grep -q '"name": "dloss/dW", .*"file": "dloss.dW.npy"' names/manifest.json ||
    fail "names: manifest.json does not name dloss/dW's file dloss.dW.npy"

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
[ "$(ls full | tr '\n' ' ')" = "big.npy small.npy y.npy " ] || fail "full disk: a temporary file was left: $(ls full)"
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
# where a file must go. expect NAME STDERR [LESSON] runs --save into NAME with LESSON
# (big.yaml when absent).
expect() {
    "$tracer" --save "$1" "${3:-big.yaml}" >stdout 2>stderr
    status=$?
    [ "$status" = 2 ] || fail "$1: exit status $status, expected 2"
    [ -s stdout ] && fail "$1: something was printed on stdout"
    printf '%s\n' "$2" > want
    cmp -s want stderr || { fail "$1: stderr differs:"; diff -u want stderr; }
    [ -e "$1/manifest.json" ] && [ ! -d "$1/manifest.json" ] && fail "$1: a manifest.json was written"
}
# The whole file cannot take its name: a folder has it (and keeps it). Every file is looked at
# before any is written, so nothing is written.
mkdir -p name_taken/y.npy/inside
expect name_taken "tracer: error: --save: cannot write 'name_taken/y.npy': Is a directory"
[ -d name_taken/y.npy/inside ] || fail "name_taken: the folder in the way was touched"
[ "$(ls name_taken)" = y.npy ] || fail "name_taken: files were written or left: $(ls name_taken)"
# The old manifest cannot be removed: it is a folder.
mkdir -p manifest_taken/manifest.json
expect manifest_taken "tracer: error: --save: cannot replace 'manifest_taken/manifest.json': Is a directory"
[ -e manifest_taken/small.npy ] && fail "manifest_taken: a stage was written after the manifest could not go"

# Links planted in the folder are never written through nor replaced: a link where a stage's
# file goes is refused, and a link under the name an earlier tracer wrote its temporary file
# as (small.npy.part) is left alone, for the temporary file's name is new each time.
mkdir planted
echo "keep me" > victim.txt
echo "keep me too" > victim2.txt
ln -s ../victim.txt planted/small.npy.part
ln -s ../victim2.txt planted/y.npy
expect planted "tracer: error: --save: cannot write 'planted/y.npy': it is a symbolic link, which the tracer neither writes through nor replaces
hint: save into a folder of its own, such as --save trace/"
[ "$(cat victim.txt)" = "keep me" ] || fail "planted links: victim.txt was written through small.npy.part"
[ "$(cat victim2.txt)" = "keep me too" ] || fail "planted links: victim2.txt was written through y.npy"
[ "$(ls planted | tr '\n' ' ')" = "small.npy.part y.npy " ] || fail "planted links: files were written: $(ls planted)"
rm planted/y.npy
"$tracer" --save planted big.yaml >stdout 2>stderr || fail "planted links: the save did not succeed: $(cat stderr)"
[ "$(cat victim.txt)" = "keep me" ] || fail "planted links: victim.txt was written through small.npy.part"
[ -L planted/small.npy.part ] || fail "planted links: the link small.npy.part was removed"
for f in small.npy big.npy y.npy; do
    [ -f "planted/$f" ] && [ ! -L "planted/$f" ] || fail "planted links: planted/$f is not a file of its own"
done

# A stage whose file is one the lesson reads: the given X read from here/X.npy, saved into
# here/ again, would be written over the file it is read from. Nothing is written.
"$tracer" --save here big.yaml >/dev/null || fail "the save of big.yaml did not succeed"
rm here/manifest.json
printf 'title: reads its own save\ngiven:\n  small: {file: small.npy}\nsteps:\n  - twice: small * 2\n' > here/again.yaml
cp here/small.npy small.before
expect here "tracer: error: --save: cannot write 'here/small.npy': it is a file this lesson reads, and writing it would lose it
hint: save into a folder of its own, such as --save trace/" here/again.yaml
cmp -s here/small.npy small.before || fail "input: here/small.npy, which the lesson reads, was written"
[ -e here/twice.npy ] && fail "input: twice.npy was written though the save was refused"
# The same through a hard link, another name of the same file.
mkdir linked
ln here/small.npy linked/small.npy
expect linked "tracer: error: --save: cannot write 'linked/small.npy': it is a file this lesson reads, and writing it would lose it
hint: save into a folder of its own, such as --save trace/" here/again.yaml

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
echo "--save failures end in status 2 with nothing half-written, and no link or input is written"
