#!/bin/sh
# Bash completion for the tracer, as readline would call it: options, their values, the stage
# names of the lesson on the command line, lesson files and installed lessons by number and
# name (tests/options_agree.sh holds the options and their values to the table of options). Usage: completion.sh TRACER COMPLETION_SCRIPT (run from the project root, where
# lessons/ is the course).
set -u
tracer=$1 script=$2
if ! command -v bash >/dev/null 2>&1; then
    echo "SKIPPED: bash is not installed: its completion was not tested"
    exit 77
fi
TRACER_COURSE=$PWD
export TRACER_COURSE
# Each case: the words typed (the last one is being completed), then the completions
# expected, sorted, after '::'. Worked out from lessons/ and the help by hand:
# 02_the_cat_sat.yaml has the steps scores: Q @ K.T and scaled: scores / sqrt(d_k), so the
# stages starting with "sc" are scaled, its intermediate scaled.1 (sqrt(d_k)), scores and
# scores.1 (K.T).
bash -s "$tracer" "$script" <<'EOF'
tracer=$1
source "$2" || exit 1
fail=0
check() {
    local words=() expected=() arg seen=0
    for arg in "$@"; do
        if [[ $arg == "::" ]]; then seen=1
        elif ((seen)); then expected+=("$arg")
        else words+=("$arg"); fi
    done
    COMP_WORDS=("$tracer" "${words[@]}")
    COMP_CWORD=${#words[@]}
    COMPREPLY=()
    _tracer
    local got want
    got=$( ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
    want=$( ((${#expected[@]})) && printf '%s\n' "${expected[@]}" | sort | tr '\n' ' ')
    if [[ $got != "$want" ]]; then
        echo "tracer ${words[*]}<TAB>: got '$got', expected '$want'"
        fail=1
    fi
}
check --ch :: --check
check --wa :: --watch
check --format '' :: html json text
check --format = '' :: html json text
check --format = j :: json
check --color a :: always auto
check --digits '' ::
check lessons/02_the_cat_sat.yaml --explain sc :: scaled scaled.1 scores scores.1
check --digits 3 02 --explain w :: weights
check --digits = 3 the_cat_sat --explain = out :: output
check --only sc ::
check the_cat_sat --only sc :: scaled scaled.1 scores scores.1
check the_cat_sat --only weights,sc :: weights,scaled weights,scaled.1 weights,scores weights,scores.1
check --width 60 the_cat_sat --from = we :: weights
check the_cat_sat --to out :: output
check --explain sc ::
# The numbers of the course's lessons that start with a digit: 01 ... 09, then 10 ...
numbers() { local f; for f in lessons/"$1"*_*.yaml; do f=${f##*/}; echo "${f%%_*}"; done; }
check 0 :: $(numbers 0)
check 1 :: $(numbers 1)
check the_c :: the_cat_sat
check layer :: layernorm layernorm_vs_batchnorm
check lessons/02_the :: lessons/02_the_cat_sat.yaml
check tests/numerics/log :: tests/numerics/log_zero.yaml
check --golden golden/02 :: golden/02_the_cat_sat.txt
check --save te :: tests
check --threads '' ::
((fail == 0)) && echo "ok: options, values, stages and lessons complete"
exit $fail
EOF
