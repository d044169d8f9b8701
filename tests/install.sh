#!/bin/sh
# meson install into a staging folder, then the installed tracer run from an unrelated folder:
# --version, --list, a lesson by number and by name, --check of every lesson against its
# installed golden file, and the files a user expects (man page, completion, schema, the
# guide, whose links between chapters lead to installed files). Then
# the staged tree is moved, and the tracer still finds its course beside its binary.
# Usage: install.sh MESON BUILD_DIR VERSION (run from the project root).
set -u
meson=$1 build=$2 version=$3
src=$PWD
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset TRACER_COURSE
fail=0
no() {
    echo "FAIL: $*"
    fail=1
}

"$meson" install -C "$build" --no-rebuild --destdir "$tmp/stage" >"$tmp/install.log" 2>&1 ||
    { echo "meson install failed:"; cat "$tmp/install.log"; exit 1; }
bin=$(find "$tmp/stage" -path '*/bin/tracer' -type f)
[ -x "$bin" ] || { echo "no bin/tracer was installed:"; cat "$tmp/install.log"; exit 1; }
prefix=$(dirname "$(dirname "$bin")")
share=$prefix/share
for f in man/man1/tracer.1 bash-completion/completions/tracer tracer/lessons/lesson.schema.json tracer/trace.schema.json \
    tracer/lessons/README.md tracer/lessons/02_the_cat_sat.yaml tracer/golden/02_the_cat_sat.txt; do
    [ -f "$share/$f" ] || no "share/$f was not installed"
done
# The guide: the README and every chapter under share/doc/tracer, as laid out in the source,
# so that each relative link between them leads to an installed file; the manual page names it.
[ -f "$share/doc/tracer/README.md" ] || no "share/doc/tracer/README.md (the guide's start) was not installed"
for chapter in "$src"/doc/*.md; do
    [ -f "$share/doc/tracer/doc/$(basename "$chapter")" ] || no "the guide's doc/$(basename "$chapter") was not installed"
done
for page in "$share/doc/tracer/README.md" "$share/doc/tracer"/doc/*.md; do
    for link in $(grep -o '](\(doc/\)\{0,1\}[a-z-]*\.md' "$page" | sed 's/^](//'); do
        [ -f "$(dirname "$page")/$link" ] || no "$page links to $link, which was not installed"
    done
done
grep -q "share/doc/tracer" "$share/man/man1/tracer.1" || no "the manual page does not say where the guide is installed"
# The installed lessons name the installed schema, as editors will read it.
schema=$(head -n 1 "$share/tracer/lessons/02_the_cat_sat.yaml" | sed -n 's/^# yaml-language-server: \$schema=//p')
[ -n "$schema" ] && [ -f "$share/tracer/lessons/$schema" ] || no "the installed lessons do not lead to the schema"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 99
n_lessons=$(ls "$src"/lessons/*.yaml | wc -l)

run_installed() {
    [ "$("$bin" --version)" = "tracer $version" ] || no "--version says '$("$bin" --version)', not 'tracer $version'"
    "$bin" --list >list.txt 2>list.err || { no "--list failed:"; cat list.err; }
    [ "$(wc -l <list.txt)" = "$n_lessons" ] || { no "--list does not show the $n_lessons lessons:"; cat list.txt; }
    awk '$1 == "02" && $2 == "the_cat_sat" { $1 = $2 = ""; sub(/^ +/, ""); print }' list.txt >title.txt
    [ "$(cat title.txt)" = "The cat sat: one attention head, every tensor" ] ||
        { no "--list does not give lesson 02 its title:"; cat list.txt; }
    head -n 1 list.txt | grep -q "^01  softmax_weights  " || no "--list does not start with lesson 01"
    "$bin" 02 >02.txt 2>02.err || { no "tracer 02 failed:"; cat 02.err; }
    cmp -s 02.txt "$src/golden/02_the_cat_sat.txt" || no "tracer 02 differs from golden/02_the_cat_sat.txt"
    "$bin" the_cat_sat >cat.txt 2>&1 && cmp -s cat.txt 02.txt || no "tracer the_cat_sat differs from tracer 02"
    "$bin" 2 >2.txt 2>&1 && cmp -s 2.txt 02.txt || no "tracer 2 differs from tracer 02"
    # TRACER_COURSE set but empty is as unset: the installed course.
    TRACER_COURSE= "$bin" 02 >empty.txt 2>&1 && cmp -s empty.txt 02.txt || no "TRACER_COURSE= tracer 02 differs"
    # A whole name wins over a part of a longer one: 03_layernorm, not 13_layernorm_vs_batchnorm.
    "$bin" layernorm >ln.txt 2>&1 && cmp -s ln.txt "$src/golden/03_layernorm.txt" || no "tracer layernorm is not lesson 03"
    "$bin" batchnorm >bn.txt 2>&1 && cmp -s bn.txt "$src/golden/13_layernorm_vs_batchnorm.txt" ||
        no "tracer batchnorm is not lesson 13"
    # Each installed lesson matches its installed golden file.
    course=$(cd "$(dirname "$bin")/../share/tracer" && pwd -P)
    for lesson in "$src"/lessons/*.yaml; do
        name=$(basename "$lesson" .yaml)
        number=${name%%_*}
        grep -q '^download:' "$lesson" && continue  # it runs on files the course does not ship
        "$bin" --check "$number" >check.txt 2>&1 || { no "tracer --check $number:"; head -20 check.txt; }
        [ "$(cat check.txt)" = "$course/lessons/$name.yaml matches $course/golden/$name.txt" ] ||
            { no "tracer --check $number says:"; cat check.txt; }
    done
    # --diff takes the original from the course: lesson 01 against a copy of itself is the same.
    cp "$course/lessons/01_softmax_weights.yaml" mine.yaml
    "$bin" --diff 01 mine.yaml >diff.txt 2>&1 || { no "tracer --diff 01 mine.yaml (an unchanged copy):"; cat diff.txt; }
    return 0
}
run_installed
# Staged, moved, unpacked elsewhere: the course is found beside the binary.
mv "$tmp/stage" "$tmp/moved"
bin=$(echo "$bin" | sed "s|^$tmp/stage|$tmp/moved|")
run_installed

# A teacher's own course in TRACER_COURSE: lessons in file-name order, one without a title
# listed with its error instead, one without a number, a block-scalar title on one line.
mkdir -p "$tmp/course/lessons"
printf 'title: Intro\nsteps:\n  - a: 1 + 1\n' >"$tmp/course/lessons/01_intro.yaml"
printf 'steps:\n  - a: 1 + 1\n' >"$tmp/course/lessons/02_broken.yaml"
printf 'title: |\n  An extra\n  lesson\nsteps:\n  - b: 2\n' >"$tmp/course/lessons/extra.yaml"
cat >expected.txt <<'EOF'
01  intro   Intro
02  broken  (broken: line 1: the lesson has no title:)
    extra   An extra lesson
EOF
TRACER_COURSE=$tmp/course "$bin" --list >list.txt 2>&1 || no "--list of a teacher's course failed"
cmp -s list.txt expected.txt || { no "--list of a teacher's course:"; cat list.txt; }
TRACER_COURSE=$tmp/course "$bin" extra >extra.txt 2>&1 || { no "tracer extra failed:"; cat extra.txt; }

# No course at all: say where it was looked for and what to do.
TRACER_COURSE=$tmp/nowhere "$bin" 02 >out.txt 2>err.txt
status=$?
cat >expected.txt <<EOF
tracer: error: there is no file called '02', and no course to look it up in: cannot read '$tmp/nowhere/lessons': No such file or directory
hint: give the path of a lesson file, or set TRACER_COURSE to a folder that holds lessons/
EOF
[ $status = 2 ] || no "without a course, tracer 02 exits $status, not 2"
cmp -s err.txt expected.txt || { no "without a course, tracer 02 says:"; cat err.txt; }
[ -s out.txt ] && no "without a course, tracer 02 printed on stdout"

[ $fail = 0 ] && echo "ok: the installed tracer runs, lists and checks its course from anywhere, even moved"
exit $fail
