#!/bin/sh
# Golden files never depend on the terminal: --update-golden writes a lesson's golden file at
# 80 columns without colour whatever $COLUMNS says (the same bytes as the course's own golden
# file), --check compares at 80 columns whatever $COLUMNS says, a lesson with an error leaves
# the golden file as it was, and a golden file that cannot be written is said so.
# Usage: update_golden.sh TRACER, run from the project root.
set -u
tracer=$1
tmp=$(mktemp -d) || exit 99
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$tmp/course/lessons" "$tmp/course/golden"
lesson=$tmp/course/lessons/04_multi_head_attention.yaml
golden=$tmp/course/golden/04_multi_head_attention.txt
cp lessons/04_multi_head_attention.yaml "$lesson"

out=$(COLUMNS=120 "$tracer" --update-golden "$lesson" 2>"$tmp/err")
[ $? = 0 ] && [ "$out" = "$lesson: wrote $golden" ] || { echo "--update-golden said: $out $(cat "$tmp/err")"; fail=1; }
cmp -s "$golden" golden/04_multi_head_attention.txt ||
    { echo "--update-golden at COLUMNS=120 is not the course's golden file (80 columns, no colour)"; fail=1; }
COLUMNS=120 "$tracer" --check "$lesson" >/dev/null 2>&1 || { echo "--check at COLUMNS=120 differs"; fail=1; }
COLUMNS=200 "$tracer" --width 120 --update-golden --golden "$tmp/wide.txt" "$lesson" >/dev/null 2>&1
COLUMNS=40 "$tracer" --width 120 --check --golden "$tmp/wide.txt" "$lesson" >/dev/null 2>&1 ||
    { echo "--width 120 --check differs from --width 120 --update-golden"; fail=1; }
cmp -s "$tmp/wide.txt" "$golden" && { echo "--width 120 was not used by --update-golden"; fail=1; }

# A lesson named from its own folder (no slash): golden/ beside that folder, ../golden/NAME.txt.
rm "$golden"
case $tracer in /*) here_tracer=$tracer ;; *) here_tracer=$PWD/$tracer ;; esac
out=$(cd "$tmp/course/lessons" && "$here_tracer" --update-golden 04_multi_head_attention.yaml 2>&1)
[ "$out" = "04_multi_head_attention.yaml: wrote ../golden/04_multi_head_attention.txt" ] &&
    cmp -s "$golden" golden/04_multi_head_attention.txt ||
    { echo "--update-golden from the lesson's own folder said: $out"; fail=1; }
(cd "$tmp/course/lessons" && "$here_tracer" --check 04_multi_head_attention.yaml >/dev/null 2>&1) ||
    { echo "--check from the lesson's own folder differs"; fail=1; }

# A lesson with an error writes nothing.
printf 'title: broken\nsteps:\n  - x: nope\n' >"$tmp/course/lessons/broken.yaml"
echo "kept" >"$tmp/course/golden/broken.txt"
"$tracer" --update-golden "$tmp/course/lessons/broken.yaml" >"$tmp/out" 2>/dev/null
status=$?
[ "$status" = 1 ] && [ ! -s "$tmp/out" ] && [ "$(cat "$tmp/course/golden/broken.txt")" = kept ] ||
    { echo "a broken lesson: exit $status, and the golden file is now: $(head -c 200 "$tmp/course/golden/broken.txt")"; fail=1; }
[ -e "$tmp/course/golden/broken.txt.new" ] && { echo "a broken lesson left broken.txt.new"; fail=1; }

# A folder that cannot be written.
out=$("$tracer" --update-golden --golden "$tmp/no/such/folder.txt" "$lesson" 2>&1 >/dev/null)
status=$?
[ "$status" = 2 ] && [ "$out" = "tracer: cannot write the golden file '$tmp/no/such/folder.txt': No such file or directory" ] ||
    { echo "an unwritable golden file: exit $status: $out"; fail=1; }
# A golden path that is a folder: the file beside it is written, the rename refused and removed.
mkdir "$tmp/folder.txt"
out=$("$tracer" --update-golden --golden "$tmp/folder.txt" "$lesson" 2>&1 >/dev/null)
status=$?
[ "$status" = 2 ] && [ "$out" = "tracer: cannot write the golden file '$tmp/folder.txt': Is a directory" ] &&
    [ ! -e "$tmp/folder.txt.new" ] || { echo "a golden file that is a folder: exit $status: $out"; fail=1; }

# What is not a golden file is never written: the lesson itself, a file it reads, a link, a
# named pipe. Each is refused with status 2 before anything is written, and left as it was.
# refused NAME GOLDEN WHY [HINT]: --update-golden --golden GOLDEN of the lesson must say WHY.
refused() {
    out=$(timeout 10 "$tracer" --update-golden --golden "$2" "$lesson" 2>&1 >/dev/null)
    status=$?
    want="tracer: cannot write the golden file '$2': $3"
    [ -n "${4:-}" ] && want="$want
hint: $4"
    [ "$status" = 2 ] && [ "$out" = "$want" ] || { echo "$1: exit $status: $out"; fail=1; }
}
cp "$lesson" "$tmp/lesson.before"
refused "the lesson itself" "$lesson" "it is a file this lesson reads, and writing it would lose it" \
    "a golden file holds a trace; name a file of its own with --golden, like golden/NAME.txt"
cmp -s "$lesson" "$tmp/lesson.before" || { echo "the lesson was replaced by its own trace"; fail=1; }
ln "$lesson" "$tmp/hard_link.yaml"
refused "a hard link to the lesson" "$tmp/hard_link.yaml" "it is a file this lesson reads, and writing it would lose it" \
    "a golden file holds a trace; name a file of its own with --golden, like golden/NAME.txt"
echo "precious" >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/link.txt"
refused "a link" "$tmp/link.txt" "it is a symbolic link, which the tracer neither writes through nor replaces"
# A link planted where the tracer once wrote its temporary file is neither followed nor removed.
ln -s "$tmp/victim" "$tmp/planted.txt.new"
"$tracer" --update-golden --golden "$tmp/planted.txt" "$lesson" >/dev/null 2>&1 || { echo "a golden file beside a planted link was not written"; fail=1; }
[ "$(cat "$tmp/victim")" = precious ] && [ -L "$tmp/planted.txt.new" ] ||
    { echo "a link planted at planted.txt.new was written through or removed"; fail=1; }
cmp -s "$tmp/planted.txt" golden/04_multi_head_attention.txt || { echo "planted.txt is not the trace"; fail=1; }
mkfifo "$tmp/pipe.txt"
refused "a named pipe" "$tmp/pipe.txt" "it is a named pipe (FIFO), not a file"
[ -p "$tmp/pipe.txt" ] || { echo "the named pipe was replaced"; fail=1; }
# A golden file made read-only, to keep it, is kept (root may write anything: not tested then).
echo "kept" >"$tmp/read_only.txt"
chmod a-w "$tmp/read_only.txt"
if [ "$(id -u)" != 0 ]; then
    refused "a read-only file" "$tmp/read_only.txt" "Permission denied"
    [ "$(cat "$tmp/read_only.txt")" = kept ] || { echo "the read-only golden file was replaced"; fail=1; }
fi
[ -z "$(ls "$tmp" | grep -v -x -e course -e err -e out -e lesson.before -e hard_link.yaml -e victim -e link.txt \
    -e planted.txt -e planted.txt.new -e pipe.txt -e read_only.txt -e folder.txt -e wide.txt)" ] ||
    { echo "files were left behind: $(ls "$tmp")"; fail=1; }
[ $fail = 0 ] && echo "ok: golden files are written and compared at 80 columns without colour"
exit $fail
