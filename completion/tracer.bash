# bash completion for tracer(1): options, their values, stage names and lessons.
#
# Everything is asked of the tracer itself, so new options complete without a change here:
# options come from `tracer --help`, where an option written `--name a|b|c` completes the
# words a, b and c, `--name FILE` a file, `--name DIR` a folder, and `--name STAGE...` or
# `--name NAME` (--explain, --only, --from, --to) the stages of the lesson on the command line
# (from `tracer --list LESSON`), after the last comma of `NAME,...`; a lesson completes as a
# .yaml file or as the number or name of an installed lesson (from `tracer --list`).

# "OPTION PLACEHOLDER" per line of the help: "--format text|json", "--check".
_tracer_options() {
    "$1" --help 2>/dev/null | awk '/^  +-/ {
        sub(/,$/, "", $1)
        arg = (NF > 1 && ($2 ~ /\|/ || $2 ~ /^[A-Z]/)) ? $2 : ""
        print $1, arg
    }'
}

_tracer() {
    local tracer=${COMP_WORDS[0]/#\~/$HOME}
    local cur=${COMP_WORDS[COMP_CWORD]} option="" i
    # --option=value: readline splits at '=', so the option is one or two words back.
    if [[ $cur == = ]]; then
        option=${COMP_WORDS[COMP_CWORD - 1]} cur=""
    elif [[ ${COMP_WORDS[COMP_CWORD - 1]} == = ]]; then
        option=${COMP_WORDS[COMP_CWORD - 2]}
    elif ((COMP_CWORD > 1)); then
        option=${COMP_WORDS[COMP_CWORD - 1]}
    fi

    local -A takes=()
    local options=() name arg
    while read -r name arg; do
        options+=("$name")
        [[ -n $arg ]] && takes[$name]=$arg
    done < <(_tracer_options "$tracer")

    local IFS=$'\n'
    COMPREPLY=()
    if [[ $option == -* && -n ${takes[$option]+set} ]]; then
        local placeholder=${takes[$option]}
        case $placeholder in
        *\|*)
            mapfile -t COMPREPLY < <(compgen -W "${placeholder//|/$'\n'}" -- "$cur")
            ;;
        STAGE* | NAME*)
            # The lesson: the first word that is neither an option nor an option's value.
            local lesson="" word skip=0
            for ((i = 1; i < COMP_CWORD; i++)); do
                word=${COMP_WORDS[i]}
                if ((skip)); then
                    skip=0
                elif [[ $word == -* ]]; then
                    [[ -n ${takes[$word]+set} && ${COMP_WORDS[i + 1]} != = ]] && skip=1
                elif [[ $word != = && ${COMP_WORDS[i - 1]} != = ]]; then
                    lesson=$word
                    break
                fi
            done
            # NAME,...: a list of stages; complete the one after the last comma.
            local before=""
            if [[ $placeholder == *,... && $cur == *,* ]]; then
                before=${cur%,*},
                cur=${cur##*,}
            fi
            [[ -n $lesson ]] &&
                mapfile -t COMPREPLY < <(compgen -P "$before" -W "$("$tracer" --list "$lesson" 2>/dev/null | awk '{ print $1 }')" -- "$cur")
            ;;
        FILE* | PATH*)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
        DIR*)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            ;;
        esac
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "${options[*]}" -- "$cur")
        return 0
    fi
    # A lesson: a file, or an installed lesson by number (when a digit is typed) or by name.
    compopt -o filenames 2>/dev/null
    local file
    while read -r file; do
        [[ $file == *.yaml || $file == *.yml || -d $file ]] && COMPREPLY+=("$file")
    done < <(compgen -f -- "$cur")
    if [[ $cur != */* ]]; then
        # --list prints "NUMBER NAME TITLE", or "NAME TITLE" for a lesson without a number.
        local lessons
        if [[ $cur == [0-9]* ]]; then
            lessons=$("$tracer" --list 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }')
        else
            lessons=$("$tracer" --list 2>/dev/null | awk '{ print ($1 ~ /^[0-9]+$/ ? $2 : $1) }')
        fi
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$lessons" -- "$cur")
    fi
    return 0
}
complete -F _tracer tracer
