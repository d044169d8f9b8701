// cli: the command line as two tables, as git's commands[]: the options, each declared once
// (its name, the value it takes, its help), here, and the modes (the plain trace, --check,
// --update-golden, --lint, --watch, --step, --quiz, --diff, --list), each with its handler, its lessons and the
// options it takes, in modes.c above the handlers. The help, which options exclude each
// other and the messages that refuse them are all read from the tables.
//
//     Command cmd;
//     int status = cli_parse(argc, argv, modes, modes_count, &cmd);  // modes.h; says an error
//     if (status == STATUS_OK && cmd.mode)       // no mode: --help or --version is done
//         status = cmd.mode->run(&cmd);          // once its lessons are found in the course
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "pipeline.h"

// The options, in the order of the help.
typedef enum CliOption {
    CLI_FORMAT,
    CLI_DIGITS,
    CLI_COLOR,
    CLI_EXPLAIN,
    CLI_WIDTH,
    CLI_HEATMAP,
    CLI_BRIEF,
    CLI_ONLY,
    CLI_FROM,
    CLI_TO,
    CLI_STEP,
    CLI_CHECK,
    CLI_GOLDEN,
    CLI_UPDATE_GOLDEN,
    CLI_LINT,
    CLI_DIFF,
    CLI_STRICT,
    CLI_QUIZ,
    CLI_QUIZ_SEED,
    CLI_THREADS,
    CLI_TEXT,
    CLI_SAVE,
    CLI_WEIGHTS,
    CLI_WATCH,
    CLI_LIST,
    CLI_VERSION,
    CLI_HELP,
    CLI_OPTION_COUNT,
    CLI_NO_OPTION = CLI_OPTION_COUNT,  // the plain trace's mode, chosen by no option
} CliOption;

// A set of options: bit CLI_BIT(o) for option o.
typedef uint32_t CliOptions;
#define CLI_BIT(option) ((CliOptions)1 << (option))
_Static_assert(CLI_OPTION_COUNT <= 32, "CliOptions holds a bit per option");

// The most --explain requests one run takes, and the most lessons a mode takes (--diff's two).
#define CLI_MAX_EXPLAIN 64
#define CLI_MAX_LESSONS 2

typedef struct Command Command;

typedef struct CliOptionDef {
    const char *name;   // "--format"
    const char *alias;  // another spelling, left out of the help ("--colour"), or NULL
    const char *value;  // its value as the help names it ("text|json|html", "N"); NULL: a flag
    const char *help;   // beside it in the help, its lines split at '\n'
    // Checks the value and keeps it in cmd (else says why with cli_usage_error); NULL: the
    // value is kept in cmd->value alone.
    int (*set)(Command *cmd, const char *value);
    int (*now)(void);  // --help, --version: done at once, whatever else is given
    // The option it means nothing without (--golden: --check), as a set of one, and what it is
    // for, to say so: "--quiz-seed chooses the questions of --quiz; add --quiz".
    CliOptions needs;
    const char *why;
} CliOptionDef;

typedef struct CliMode {
    CliOption option;  // the option that chooses it; CLI_NO_OPTION: the plain trace
    // What it does, to say why it refuses an option: "--diff prints its own text report;
    // leave out --save".
    const char *does;
    int (*run)(const Command *cmd);
    size_t min_lessons, max_lessons;
    CliOptions takes;  // the options it takes besides its own (--format: see formats)
    unsigned formats;  // the --format values it takes: bit CLI_FORMAT_BIT(OUTPUT_x)
} CliMode;
#define CLI_FORMAT_BIT(format) (1u << (format))

extern const CliOptionDef cli_options[CLI_OPTION_COUNT];

// The command line, read.
struct Command {
    const CliMode *mode;
    CliOptions given;
    const char *value[CLI_OPTION_COUNT];  // each option's value as given (the last one)
    // The lessons as given; main replaces them with their files (a course lesson by number).
    const char *lessons[CLI_MAX_LESSONS];
    size_t n_lessons;
    PipelineOptions opts;  // its explain points into explain below
    const char *explain[CLI_MAX_EXPLAIN];
    unsigned long long quiz_seed;
    bool fixed_width;      // --width given: a resized terminal does not change it
    bool terminal_colour;  // --color and the terminal ask for colour (opts.colour: in the trace)
    bool colour_errors;    // messages on stderr in colour
};

static inline bool cli_has(const Command *cmd, CliOption option) {
    return cmd->given & CLI_BIT(option);
}

// Reads argv into cmd: the options, the mode they choose of modes (the first whose option is
// given; the last, the plain trace, when none is) and its lessons, refusing an option a mode
// given does not take. STATUS_OK, or STATUS_USAGE_ERROR once said on stderr; cmd->mode is
// NULL when nothing is left to do (--help, --version).
int cli_parse(int argc, char **argv, const CliMode *modes, size_t n_modes, Command *cmd);
// Whether mode takes option given with the --format value format (ignored for other options).
bool cli_mode_takes(const CliMode *mode, CliOption option, OutputFormat format);
// The help, from the table of options.
void cli_help(FILE *out);

// For the handlers of the modes.
// The mistake on stderr, then the usage line; returns STATUS_USAGE_ERROR.
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// The terminal's width, else $COLUMNS, else 80; held within what --width accepts.
size_t cli_default_width(void);
// Warnings first, then the errors if there are any.
void cli_print_diagnostics(const Diag *diag, bool colour);
// Whether stderr is a terminal that takes colour (NO_COLOR unset).
bool cli_colour_stderr(void);
// STATUS_OK, or STATUS_USAGE_ERROR after saying that `what` could not be written: a full disk
// or a closed pipe must not pass for success.
int cli_flush_stdout(const char *what);
// The memory a run may use, from `machine` (the machine's bytes, 0 when unknown) and the limit
// files of a container (cgroup v2's memory.max, v1's memory.limit_in_bytes: a number of bytes,
// or "max" for none; a file that is missing or unreadable sets no limit): the lowest of them.
// *container is set when a file's limit is taken.
double cli_memory_within(double machine, const char *const *limit_files, size_t n_files, bool *container);
