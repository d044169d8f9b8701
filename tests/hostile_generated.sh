#!/bin/sh
# Hostile lessons too large, too binary or too tied to the machine to keep in git: an 8 MiB
# file, 100,000 brackets, a 3 MiB expression, a PNG and an executable, NUL bytes, invalid
# UTF-8, an escape character, UTF-16, an unreadable file, a read error, a pipe, a full disk,
# three tokenizer folders in one lesson, named pipes and devices where files are read, and text
# from files that a terminal would act on.
# Each is written to a temporary folder, run there (so messages name it by its short name),
# and its exit status and whole stderr are compared with what the tracer must say.
#
# Usage: hostile_generated.sh TRACER
set -u
tracer=$1
case $tracer in
/*) ;;
*) tracer=$PWD/$tracer ;;
esac
root=$PWD
tmp=$(mktemp -d) || exit 99
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
mkdir out
failures=0

# run NAME ARGS...: trace with a time limit ($limit seconds); stdout, stderr and the status go to
# out/NAME.*
limit=30
run() {
    name=$1
    shift
    NO_COLOR=1 timeout $limit "$tracer" "$@" >"out/$name.stdout" 2>"out/$name.stderr" </dev/null
    echo $? >"out/$name.status"
}

# expect NAME STATUS, the exact stderr on stdin. A failed run (status 1 or 2) must print
# nothing on stdout.
expect() {
    name=$1 status=$2
    cat >"out/$name.expected"
    got=$(cat "out/$name.status")
    ok=1
    if [ "$got" != "$status" ]; then
        echo "FAIL $name: exit status $got, expected $status"
        [ "$got" = 124 ] && echo "  (killed after $limit s: the tracer hangs on this input)"
        ok=0
    fi
    if [ "$status" != 0 ] && [ -s "out/$name.stdout" ]; then
        echo "FAIL $name: stdout is not empty"
        ok=0
    fi
    if ! cmp -s "out/$name.expected" "out/$name.stderr"; then
        echo "FAIL $name: stderr differs:"
        diff -u "out/$name.expected" "out/$name.stderr" | head -20 | cut -c1-200
        ok=0
    fi
    [ $ok = 1 ] && echo "ok   $name" || failures=$((failures + 1))
}

# repeat N TEXT: TEXT written N times (N spaces turned into the text, for single characters)
repeat() {
    printf "%$1s" '' | tr ' ' "$2"
}

steps='steps:
  - a: 1 + 1
'

# ---------------------------------------------------------------- size

# 8 MiB in one scalar: refused before it is parsed, as a file or through a pipe.
{ printf 'title: '; repeat 8388608 x; printf '\n%s' "$steps"; } >big_scalar.yaml
run big_scalar big_scalar.yaml
expect big_scalar 2 <<'EOF'
tracer: error: cannot read lesson 'big_scalar.yaml': it is larger than 4 MiB
hint: a lesson is a page or two; split it into several lessons
EOF
NO_COLOR=1 timeout 30 "$tracer" /dev/stdin <big_scalar.yaml >out/big_pipe.stdout 2>out/big_pipe.stderr
echo $? >out/big_pipe.status
expect big_pipe 2 <<'EOF'
tracer: error: cannot read lesson '/dev/stdin': it is larger than 4 MiB
hint: a lesson is a page or two; split it into several lessons
EOF

# Exactly 4 MiB (4,194,304 bytes, a comment filling the rest) is at the limit, not past it.
{ printf 'title: t\n%s#' "$steps"; repeat $((4194304 - 31)) x; printf '\n'; } >limit.yaml
[ "$(wc -c <limit.yaml)" = 4194304 ] || { echo "FAIL limit: limit.yaml is not 4 MiB"; failures=$((failures + 1)); }
run limit limit.yaml
expect limit 0 </dev/null

# A 3 MiB title is under the limit: it is a lesson like any other.
{ printf 'title: '; repeat 3145728 x; printf '\n%s' "$steps"; } >long_title.yaml
run long_title long_title.yaml
expect long_title 0 </dev/null

# 100,000 nested brackets: libyaml's scanner is quadratic in depth; the loader stops at 32.
{ printf 'title: t\nsteps:\n  - a: '; repeat 100000 '['; repeat 100000 ']'; echo; } >brackets.yaml
run brackets brackets.yaml
{
    echo 'brackets.yaml:3:37: error: nesting deeper than 32 levels; a lesson never needs this'
    printf ' 3 |   - a: %s...\n' "$(repeat 153 '[')"
    printf '   | %36s^\n' ''
    echo 'hint: the deepest part of a lesson, a rank-4 list of numbers inside given:, is 7 levels deep'
} | expect brackets 1

# A 3 MiB expression on one line: 1 + 1 + ... is as deep as it is long when checked.
{ printf 'title: t\nsteps:\n  - a: 1'; repeat 1572864 '+' | sed 's/+/+1/g'; echo; } >long_expression.yaml
run long_expression long_expression.yaml
{
    echo 'long_expression.yaml:3:519: error: this expression is too long: it chains more than 256 operations'
    printf ' 3 | ...%s...\n' "$(repeat 80 '+' | sed 's/+/1+/g')"
    printf '   | %62s^\n' ''
    echo 'hint: split it into several steps: a step can use the results of the steps above it'
} | expect long_expression 1

# 200,000 keys in one mapping: duplicates are found by hashing, not by comparing pairs.
{ printf 'title: t\n%s' "$steps"; i=0; while [ $i -lt 2000 ]; do
    printf 'k%d_%%d: 1\n' $i; i=$((i + 1)); done; } >keys.fmt
awk 'NR <= 3 { print; next } { for (j = 0; j < 100; j++) printf($0 "\n", j) }' keys.fmt >many_keys.yaml
run many_keys many_keys.yaml
expect many_keys 1 <<'EOF'
many_keys.yaml:4:1: error: unknown key 'k0_0' at the top of the lesson
 4 | k0_0: 1
   | ^~~~
hint: the top-level keys are title, source, intro, outro, digits, labels, given, blocks, steps, claims, download and train
EOF

# Long lessons must stay linear: 100,000 steps that all use X, and 50,000 givens that all
# name one of 50,000 label lists (each was quadratic once: minutes, then 21 s).
awk 'BEGIN { print "title: t\ngiven:\n  X: 1\nsteps:"; for (i = 0; i < 100000; i++) printf("  - s%d: X + 1\n", i) }' \
    >many_steps.yaml
run many_steps many_steps.yaml
expect many_steps 0 </dev/null
awk 'BEGIN { print "title: t\nlabels:"; for (i = 0; i < 50000; i++) printf("  l%d: [a]\n", i)
             print "given:"; for (i = 0; i < 50000; i++) printf("  g%d:\n    values: [[1]]\n    rows: l49999\n", i)
             print "steps:\n  - a: g0" }' >many_label_refs.yaml
run many_label_refs many_label_refs.yaml
expect many_label_refs 0 </dev/null

# Three tokenizers in one lesson, each read from a folder of its own (copies of
# tests/tokenizer/tiny): the list of those read grows past its first two. "The" and " cat" are
# ids 258 and 260 in tiny's encoder.json, so x + y + z is 774 and 780.
for k in a b c; do cp -R "$root/tests/tokenizer/tiny" "tiny_$k"; done
{ printf 'title: t\ngiven:\n'
  for k in a b c; do printf '  %s: {text: "The cat", tokenizer: tiny_%s/}\n' "$k" "$k"; done
  printf 'steps:\n  - s: a + b + c\n'; } >three_tokenizers.yaml
run three_tokenizers three_tokenizers.yaml
expect three_tokenizers 0 </dev/null
if ! grep -qF "│  774   780 │" out/three_tokenizers.stdout; then
    echo "FAIL three_tokenizers: a + b + c is not 774, 780:"
    tail -n 8 out/three_tokenizers.stdout
    failures=$((failures + 1))
fi

# Backward passes must stay bounded too: one grad through 10,000 chained steps and 10,000
# grads of it share one pass (its finite-difference checks stop at their budget), while a
# grad of every one of 5,000 chained steps, each a backward pass of its own, is refused.
awk 'BEGIN { print "title: t\ngiven:\n  x: [1.0, 2.0]\nsteps:\n  - l0: sum(x)"
             for (i = 1; i < 10000; i++) printf("  - l%d: l%d * 1.0\n", i, i - 1)
             for (i = 0; i < 10000; i++) printf("  - g%d: grad(l9999, x)\n", i) }' >many_grads.yaml
run many_grads many_grads.yaml
expect many_grads 0 </dev/null
awk 'BEGIN { print "title: t\ngiven:\n  x: [1.0, 2.0]\nsteps:\n  - l0: sum(x)"
             for (i = 1; i < 5000; i++) printf("  - l%d: l%d * 1.0\n  - g%d: grad(l%d, x)\n", i, i - 1, i, i) }' \
    >chained_grads.yaml
run chained_grads chained_grads.yaml
expect chained_grads 1 <<'EOF'
chained_grads.yaml:341:11: error: the lesson's backward passes would visit more than 4,194,304 stages
 341 |   - g168: grad(l168, x)
     |           ^~~~~~~~~~~~~
hint: every grad of a new number lays out a backward pass all the way to it; differentiate fewer numbers (one loss), by as many tensors as needed
EOF

# ---------------------------------------------------------------- bytes that are not a lesson

# The first bytes of a PNG image: binary, with NULs near the start.
printf '\211PNG\r\n\032\n\000\000\000\rIHDR\000\000\000\020\000\000\000\020\010\006' >image.png
run png image.png
expect png 1 <<'EOF'
image.png:1:1: error: this file is not text: it looks like a binary file
 1 | ?PNG
   | ^
hint: a lesson is a YAML text file; check the file name (is it an image, an archive or a program?)
EOF

# The tracer itself, a program: only the first line of the message is fixed. Its first MiB
# only, so that a sanitizer build (larger than a lesson may be) still tests the binary check.
head -c 1048576 "$tracer" > program
run program program
head -n 1 out/program.stderr >out/program.first
mv out/program.first out/program.stderr
expect program 1 <<'EOF'
program:1:1: error: this file is not text: it looks like a binary file
EOF

printf 'title: t\ngiven:\n  X: [1, 2]\000\nsteps:\n  - a: X + 1\n' >nul.yaml
run nul nul.yaml
expect nul 1 <<'EOF'
nul.yaml:3:12: error: a NUL byte is not allowed in a lesson
 3 |   X: [1, 2] 
   |            ^
hint: the file may be binary or saved as UTF-16; save the lesson as UTF-8 text
EOF

# café in Latin-1, then a UTF-8 sequence cut off by the end of the file.
printf 'title: caf\351\nsteps:\n  - a: 1\n' >latin1.yaml
run latin1 latin1.yaml
expect latin1 1 <<'EOF'
latin1.yaml:1:11: error: the text here is not valid UTF-8
 1 | title: caf?
   |           ^
hint: save the lesson as UTF-8 (it may have been saved as Latin-1 or Windows-1252)
EOF
printf 'title: t\nsteps:\n  - a: 1 # caf\303' >cut_utf8.yaml
run cut_utf8 cut_utf8.yaml
expect cut_utf8 1 <<'EOF'
cut_utf8.yaml:3:15: error: the text here is not valid UTF-8
 3 |   - a: 1 # caf?
   |               ^
hint: save the lesson as UTF-8 (it may have been saved as Latin-1 or Windows-1252)
EOF

# An escape character (a terminal colour code) must not reach the terminal.
printf 'title: \033[31mred\nsteps:\n  - a: 1\n' >escape.yaml
run escape escape.yaml
expect escape 1 <<'EOF'
escape.yaml:1:8: error: the invisible character U+001B is not allowed in a lesson
 1 | title: ?[31mred
   |        ^
hint: delete it: most editors do not even show it
EOF

printf '\377\376t\000i\000t\000l\000e\000:\000 \000t\000\n\000' >utf16.yaml
run utf16 utf16.yaml
expect utf16 1 <<'EOF'
utf16.yaml: error: this lesson is saved as UTF-16; the tracer reads UTF-8
hint: save the lesson as UTF-8 text
EOF

# ---------------------------------------------------------------- the outside world

lesson='title: t
given:
  X: [1, 2]
steps:
  - a: X + 1
'
printf '%s' "$lesson" >good.yaml

# A file the tracer may not read. root reads anything, so run as nobody when root.
cp good.yaml unreadable.yaml
chmod 000 unreadable.yaml
as_user=
if [ "$(id -u)" = 0 ]; then
    chmod 755 "$tmp"
    if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
        as_user='setpriv --reuid=65534 --regid=65534 --clear-groups'
    fi
fi
if [ "$(id -u)" != 0 ] || [ -n "$as_user" ]; then
    # In a coverage build (-Db_coverage=true) the gcov runtime writes its counts when the
    # tracer exits, and nobody may not write them in the build folder: it would complain on
    # stderr. GCOV_PREFIX sends them to a folder nobody may write (ignored by other builds).
    mkdir gcov && chmod 777 gcov
    NO_COLOR=1 GCOV_PREFIX="$tmp/gcov" $as_user "$tracer" unreadable.yaml >out/unreadable.stdout 2>out/unreadable.stderr
    echo $? >out/unreadable.status
    expect unreadable 2 <<'EOF'
tracer: error: cannot read lesson 'unreadable.yaml': Permission denied
EOF
else
    echo "skip unreadable: running as root, and setpriv cannot drop to nobody"
fi

# A read error in the middle of reading (the tracer's own memory at address 0).
if [ -r /proc/self/mem ]; then
    run read_error /proc/self/mem
    expect read_error 2 <<'EOF'
tracer: error: cannot read lesson '/proc/self/mem': Input/output error
EOF
fi

# A lesson through a pipe traces like the file.
run good good.yaml
NO_COLOR=1 "$tracer" /dev/stdin <good.yaml >out/pipe.stdout 2>out/pipe.stderr
echo $? >out/pipe.status
sed 's|^Lesson: stdin$|Lesson: good.yaml|' out/pipe.stdout >out/pipe.renamed
expect pipe 0 </dev/null
if ! cmp -s out/pipe.renamed out/good.stdout; then
    echo "FAIL pipe: the trace of a lesson read through a pipe differs from the file's"
    diff -u out/good.stdout out/pipe.renamed | head -20
    failures=$((failures + 1))
fi

# A lesson through a real pipe, from another program, traces like the file too.
cat good.yaml | NO_COLOR=1 "$tracer" /dev/stdin >out/real_pipe.stdout 2>out/real_pipe.stderr
echo $? >out/real_pipe.status
expect real_pipe 0 </dev/null
sed 's|^Lesson: stdin$|Lesson: good.yaml|' out/real_pipe.stdout >out/real_pipe.renamed
cmp -s out/real_pipe.renamed out/good.stdout ||
    { echo "FAIL real_pipe: the trace differs from the file's"; failures=$((failures + 1)); }

# Named pipes (FIFOs, with no program writing them) and devices where the tracer reads a file:
# each is refused at once, never waited on (opening a pipe waits for a writer; reading a
# device may never end). Each runs under a limit of 10 s: a hang fails.
limit=10
mkfifo pipe.yaml
run fifo_lesson pipe.yaml
expect fifo_lesson 2 <<'EOF'
tracer: error: cannot read lesson 'pipe.yaml': it is a named pipe (FIFO), not a file
hint: a lesson is a YAML file; a pipe is read as standard input: tracer /dev/stdin < lesson.yaml
EOF
run device_lesson /dev/zero
expect device_lesson 2 <<'EOF'
tracer: error: cannot read lesson '/dev/zero': it is a device, not a file
hint: a lesson is a YAML file; a pipe is read as standard input: tracer /dev/stdin < lesson.yaml
EOF
# --list reads the title of every lesson of the course: a pipe among them is listed as broken.
mkdir -p course/lessons
printf 'title: A good lesson\nsteps:\n  - a: 1\n' >course/lessons/01_good.yaml
mkfifo course/lessons/02_pipe.yaml
TRACER_COURSE=course run fifo_list --list
expect fifo_list 0 </dev/null
cat >out/fifo_list.want <<'EOF'
01  good  A good lesson
02  pipe  (broken: cannot read lesson 'course/lessons/02_pipe.yaml': it is a named pipe (FIFO), not a file)
EOF
cmp -s out/fifo_list.want out/fifo_list.stdout ||
    { echo "FAIL fifo_list: the list differs:"; diff -u out/fifo_list.want out/fifo_list.stdout; failures=$((failures + 1)); }
# A given's .npy, .safetensors and .json files, and a tokenizer's two files.
mkfifo w.npy w.safetensors config.json
printf 'title: t\ngiven:\n  W: {file: w.npy}\nsteps:\n  - a: W + 1\n' >fifo_npy.yaml
printf 'title: t\ngiven:\n  W: {file: w.safetensors, tensor: w}\nsteps:\n  - a: W + 1\n' >fifo_safetensors.yaml
printf 'title: t\ngiven:\n  n_head: {file: config.json}\nsteps:\n  - a: n_head + 1\n' >fifo_json.yaml
run fifo_npy fifo_npy.yaml
expect fifo_npy 1 <<'EOF'
fifo_npy.yaml:3:13: error: cannot read 'w.npy': it is a named pipe (FIFO), not a file
 3 |   W: {file: w.npy}
   |             ^~~~~
hint: the tracer reads only regular files (a pipe or a device could keep it waiting): copy it into one
EOF
run fifo_safetensors fifo_safetensors.yaml
expect fifo_safetensors 1 <<'EOF'
fifo_safetensors.yaml:3:13: error: cannot read 'w.safetensors': it is a named pipe (FIFO), not a file
 3 |   W: {file: w.safetensors, tensor: w}
   |             ^~~~~~~~~~~~~
hint: the tracer reads only regular files (a pipe or a device could keep it waiting): copy it into one
EOF
run fifo_json fifo_json.yaml
expect fifo_json 1 <<'EOF'
fifo_json.yaml:3:18: error: cannot read 'config.json': it is a named pipe (FIFO), not a file
 3 |   n_head: {file: config.json}
   |                  ^~~~~~~~~~~
hint: the tracer reads only regular files (a pipe or a device could keep it waiting): copy it into one
EOF
mkdir fifo_vocab fifo_merges
cp "$root/tests/tokenizer/tiny/vocab.bpe" fifo_vocab/
mkfifo fifo_vocab/encoder.json
cp "$root/tests/tokenizer/tiny/encoder.json" fifo_merges/
mkfifo fifo_merges/vocab.bpe
for which in vocab merges; do
    printf 'title: t\ngiven:\n  ids: {text: "The cat", tokenizer: fifo_%s/}\nsteps:\n  - a: ids + 1\n' $which \
        >fifo_$which.yaml
    run fifo_$which fifo_$which.yaml
done
expect fifo_vocab 1 <<'EOF'
fifo_vocab.yaml:3:37: error: cannot read 'fifo_vocab/encoder.json': it is a named pipe (FIFO), not a file
 3 |   ids: {text: "The cat", tokenizer: fifo_vocab/}
   |                                     ^~~~~~~~~~~
hint: the tracer reads only regular files (a pipe or a device could keep it waiting): copy it into one
EOF
expect fifo_merges 1 <<'EOF'
fifo_merges.yaml:3:37: error: cannot read 'fifo_merges/vocab.bpe': it is a named pipe (FIFO), not a file
 3 |   ids: {text: "The cat", tokenizer: fifo_merges/}
   |                                     ^~~~~~~~~~~~
hint: the tracer reads only regular files (a pipe or a device could keep it waiting): copy it into one
EOF
# The golden file --check reads.
mkfifo golden_pipe.txt
run fifo_golden --check --golden golden_pipe.txt good.yaml
expect fifo_golden 2 <<'EOF'
tracer: cannot read the golden file 'golden_pipe.txt': it is a named pipe (FIFO), not a file
hint: remove it, then write it with: tracer --update-golden --golden golden_pipe.txt good.yaml
EOF
limit=30

# ---------------------------------------------------------------- text from files

# Names and keys read from a file reach the terminal through one filter: an escape character
# (ESC [ 2 J clears the screen, ESC ] 0 ; sets the window's title), a bell, a byte that is not
# UTF-8 and an override are written as escapes. st NAME HEADER VALUES: a .safetensors file of
# that header and values; st_file NAME: of the header already in NAME.header, and no values.
st_file() {
    n=$(wc -c <"$1.header")
    { for shift in 0 8 16 24; do printf "\\$(printf %03o $(((n >> shift) & 255)))"; done
      printf '\000\000\000\000'; cat "$1.header"; } >"$1"
}
st() {
    printf '%s' "$2" >"$1.header"
    st_file "$1"
    printf "$3" >>"$1"
}
# npy NAME DICT: an .npy file of version 1 with that header dict (under 117 bytes), one double.
npy() {
    printf "$2" >"$1.header"
    n=$(wc -c <"$1.header")
    { printf '\223NUMPY\001\000\166\000'; cat "$1.header"; printf "%$((117 - n))s\n" ''; printf '\000\000\000\000\000\000\000\000'; } >"$1"
}
st esc.safetensors '{"w\u001b[2J\u0007": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}' '\000\000\200\077'
st bytes.safetensors "$(printf '{"w\377": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}')" '\000\000\200\077'
npy key.npy "{'descr': '<f8', '\033]0;pwned\007': 1, 'fortran_order': False, 'shape': (1,), }"
npy dtype.npy "{'descr': '<\033[2J', 'fortran_order': False, 'shape': (1,), }"
printf '{"n_hea\\u202ed": 12}' >override.json
for f in esc.safetensors bytes.safetensors; do
    printf 'title: t\ngiven:\n  W: {file: %s, tensor: w}\nsteps:\n  - a: W + 1\n' $f >"text_$f.yaml"
done
for f in key.npy dtype.npy; do
    printf 'title: t\ngiven:\n  W: {file: %s}\nsteps:\n  - a: W + 1\n' $f >"text_$f.yaml"
done
printf 'title: t\ngiven:\n  n_head: {file: override.json}\nsteps:\n  - a: n_head + 1\n' >text_override.yaml
run text_escape text_esc.safetensors.yaml
expect text_escape 1 <<'EOF'
text_esc.safetensors.yaml:3:38: error: 'esc.safetensors' has no tensor 'w'
 3 |   W: {file: esc.safetensors, tensor: w}
   |                                      ^
hint: its tensors are named like 'w\x1B[2J\x07'
EOF
run text_bytes text_bytes.safetensors.yaml
expect text_bytes 1 <<'EOF'
text_bytes.safetensors.yaml:3:40: error: 'bytes.safetensors' has no tensor 'w'
 3 |   W: {file: bytes.safetensors, tensor: w}
   |                                        ^
hint: its tensors are named like 'w\xFF'
EOF
run text_npy_key text_key.npy.yaml
expect text_npy_key 1 <<'EOF'
text_key.npy.yaml:3:13: error: 'key.npy' is broken: its header has a key '\x1B]0;pwned\x07' that .npy files do not have
 3 |   W: {file: key.npy}
   |             ^~~~~~~
hint: write it again with numpy.save
EOF
run text_npy_dtype text_dtype.npy.yaml
expect text_npy_dtype 1 <<'EOF'
text_dtype.npy.yaml:3:13: error: 'dtype.npy' stores its values as <\x1B[2J, which the tracer does not read
 3 |   W: {file: dtype.npy}
   |             ^~~~~~~~~
hint: the tracer reads F64, F32, F16, BF16, I64 and I32 (in .npy: f8, f4, f2, i8 and i4); convert the tensor to one of them
EOF
run text_override text_override.yaml
expect text_override 1 <<'EOF'
text_override.yaml:3:18: error: 'override.json' has no number 'n_head'
 3 |   n_head: {file: override.json}
   |                  ^~~~~~~~~~~~~
hint: a given takes the number the file holds under its own name, like n_hea\u202Ed
EOF
# A header of 200,000 empty tensors (11 MB, within the 100 MiB a header may have) is refused
# at its 1,048,576th value, before its tree takes more memory (1.8 million took 1.9 GB).
awk 'BEGIN { printf "{"; for (i = 0; i < 200000; i++)
             printf "%s\"t%d\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [0, 0]}", i ? ", " : "", i
             printf "}" }' >empty.safetensors.header
st_file empty.safetensors
printf 'title: t\ngiven:\n  W: {file: empty.safetensors, tensor: t0}\nsteps:\n  - a: W\n' >empty_tensors.yaml
TRACER_MEMORY=512M run empty_tensors empty_tensors.yaml
expect empty_tensors 1 <<'EOF'
empty_tensors.yaml:3:13: error: 'empty.safetensors' is broken: its header holds more than 1,048,576 values (names, sizes and offsets), more than the tracer reads: a model's file holds a few thousand
 3 |   W: {file: empty.safetensors, tensor: t0}
   |             ^~~~~~~~~~~~~~~~~
hint: write it again with safetensors' save_file
EOF
# A lesson's own name, and a course's file names in --list.
cp good.yaml "$(printf 'bell\007.yaml')"
run text_lesson_name "$(printf 'bell\007.yaml')"
expect text_lesson_name 0 </dev/null
grep -qxF 'Lesson: bell\x07.yaml' out/text_lesson_name.stdout ||
    { echo "FAIL text_lesson_name: the lesson's name is not escaped"; failures=$((failures + 1)); }
mkdir -p named/lessons
cp good.yaml "named/lessons/$(printf '01_\033[2Jclear.yaml')"
TRACER_COURSE=named run text_list --list
expect text_list 0 </dev/null
printf '01  \\x1B[2Jclear  t\n' >out/text_list.want
cmp -s out/text_list.want out/text_list.stdout ||
    { echo "FAIL text_list:"; diff -u out/text_list.want out/text_list.stdout; failures=$((failures + 1)); }
# A golden file --check compares with is a file like any other.
"$tracer" --update-golden --golden escaped_golden.txt good.yaml >/dev/null
printf 'Given X \033]0;pwned\007\n' >>escaped_golden.txt
run text_golden --check --golden escaped_golden.txt good.yaml
[ "$(cat out/text_golden.status)" = 1 ] || { echo "FAIL text_golden: exit status $(cat out/text_golden.status)"; failures=$((failures + 1)); }
grep -qxF -- '-Given X \x1B]0;pwned\x07' out/text_golden.stdout ||
    { echo "FAIL text_golden: the golden file's line is not escaped:"; tail -n 3 out/text_golden.stdout | cat -A; failures=$((failures + 1)); }

# A full disk: the trace, the JSON, the help and the version must not pass for success.
for format in text json; do
    NO_COLOR=1 "$tracer" --format $format good.yaml >/dev/full 2>out/full_$format.stderr
    echo $? >out/full_$format.status
    : >out/full_$format.stdout
    expect full_$format 2 <<'EOF'
tracer: cannot write the trace: No space left on device
EOF
done
# A trace larger than stdout's buffer fails while it streams, not at the final flush.
printf 'title: long\ngiven:\n  x: {shape: [64, 64], init: ones}\nsteps:\n  - y: x @ x\n' >long.yaml
NO_COLOR=1 "$tracer" long.yaml >/dev/full 2>out/full_long.stderr
echo $? >out/full_long.status
: >out/full_long.stdout
expect full_long 2 <<'EOF'
tracer: cannot write the trace: No space left on device
EOF
for what in help version; do
    "$tracer" --$what >/dev/full 2>out/full_$what.stderr
    echo $? >out/full_$what.status
    : >out/full_$what.stdout
    echo "tracer: cannot write the $what: No space left on device" >out/full_$what.want
    expect full_$what 2 <out/full_$what.want  # not piped: expect counts failures in this shell
done

if [ $failures != 0 ]; then
    echo "$failures generated hostile case(s) failed"
    exit 1
fi
