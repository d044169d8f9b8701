// cli: the table of options, and reading a command line with it and a table of modes.
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "config.h"
#include "backend.h"
#include "files.h"
#include "given_file.h"
#include "render.h"

// ---------------------------------------------------------------- checking values

static int set_format(Command *cmd, const char *value) {
    static const char *const names[] = {[OUTPUT_TEXT] = "text", [OUTPUT_JSON] = "json", [OUTPUT_HTML] = "html"};
    for (size_t f = 0; f < ARRAY_LEN(names); f++)
        if (!strcmp(value, names[f])) {
            cmd->opts.format = (OutputFormat)f;
            return STATUS_OK;
        }
    return cli_usage_error("--format must be text, json or html, not '%s'", value);
}

// A whole number from lo to hi in *out; false for anything else ("", "3x", "-1", too large).
static bool whole_number(const char *value, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (*value == '\0' || *end != '\0' || errno || n < lo || n > hi)
        return false;
    *out = n;
    return true;
}

static int set_digits(Command *cmd, const char *value) {
    long d;
    if (!whole_number(value, 0, 12, &d))
        return cli_usage_error("--digits must be a whole number from 0 to 12, not '%s'", value);
    cmd->opts.digits = (int)d;
    return STATUS_OK;
}

static int set_color(Command *cmd, const char *value) {
    if (strcmp(value, "auto") && strcmp(value, "always") && strcmp(value, "never"))
        return cli_usage_error("--color must be auto, always or never, not '%s'", value);
    return STATUS_OK;
}

#define CLI_TEXT_OF(n) #n
#define CLI_TEXT(n) CLI_TEXT_OF(n)

static int set_explain(Command *cmd, const char *value) {
    if (cmd->opts.n_explain == CLI_MAX_EXPLAIN)
        return cli_usage_error("at most %s --explain options", CLI_TEXT(CLI_MAX_EXPLAIN));
    cmd->explain[cmd->opts.n_explain++] = value;
    return STATUS_OK;
}

static int set_width(Command *cmd, const char *value) {
    long w;
    if (!whole_number(value, RENDER_MIN_WIDTH, RENDER_MAX_WIDTH, &w))
        return cli_usage_error("--width must be a whole number of columns from 40 to 400, not '%s'", value);
    cmd->opts.width = (size_t)w;
    return STATUS_OK;
}

static int set_threads(Command *cmd, const char *value) {
    long t;
    if (!whole_number(value, 1, BACKEND_MAX_THREADS, &t))
        return cli_usage_error("--threads must be a whole number from 1 to " BACKEND_MAX_THREADS_TEXT ", not '%s'",
                               value);
    cmd->opts.threads = (size_t)t;
    return STATUS_OK;
}

static int set_text(Command *cmd, const char *value) {
    cmd->opts.text = value;
    return STATUS_OK;
}

static int set_save(Command *cmd, const char *value) {
    if (*value == '\0')
        return cli_usage_error("--save needs a folder name");
    cmd->opts.save_dir = value;
    return STATUS_OK;
}

static int set_weights(Command *cmd, const char *value) {
    (void)cmd;
    if (*value == '\0')
        return cli_usage_error("--weights needs a folder name");
    given_files_set_folder(value);
    return STATUS_OK;
}

static int set_quiz_seed(Command *cmd, const char *value) {
    char *end;
    errno = 0;
    cmd->quiz_seed = strtoull(value, &end, 10);
    if (!isdigit((unsigned char)value[0]) || *end != '\0' || errno)
        return cli_usage_error("--quiz-seed must be a whole number from 0 to 18446744073709551615, not '%s'", value);
    return STATUS_OK;
}

static int print_help(void) {
    cli_help(stdout);
    return cli_flush_stdout("the help");
}

static int print_version(void) {
    fputs("tracer " TRACER_VERSION "\n", stdout);
    return cli_flush_stdout("the version");
}

// ---------------------------------------------------------------- the options

const CliOptionDef cli_options[CLI_OPTION_COUNT] = {
    [CLI_FORMAT] = {.name = "--format", .value = "text|json|html", .set = set_format,
                    .help = "text for people (default), json for tools, html for a\nself-contained web page"},
    [CLI_DIGITS] = {.name = "--digits", .value = "N", .set = set_digits,
                    .help = "decimals to print (0 to 12; default: the lesson's, or 4)"},
    [CLI_COLOR] = {.name = "--color", .alias = "--colour", .value = "auto|always|never", .set = set_color,
                   .help = "colour when stdout is a terminal and NO_COLOR is unset (auto)"},
    [CLI_EXPLAIN] = {.name = "--explain", .value = "STAGE[i,j]", .set = set_explain,
                     .help = "show the arithmetic of one element (STAGE[i] a row, STAGE\n"
                             "alone every element, W[i,j]@S a trained weight's update at\n"
                             "training step S); may be given several times"},
    [CLI_WIDTH] = {.name = "--width", .value = "N", .set = set_width,
                   .help = "fit the text trace in N columns (40 to 400; default: the\n"
                           "terminal's width, else $COLUMNS, else 80)"},
    [CLI_HEATMAP] = {.name = "--heatmap",
                     .help = "a picture of every tensor (attention weights get one in\n"
                             "colour anyway): cells coloured by value, or shades"},
    [CLI_BRIEF] = {.name = "--brief", .help = "hide intermediates (weights.1) and the givens' values"},
    [CLI_ONLY] = {.name = "--only", .value = "NAME,...", .help = "print only these stages (in JSON too)"},
    [CLI_FROM] = {.name = "--from", .value = "NAME", .help = "print the stages from this one on"},
    [CLI_TO] = {.name = "--to", .value = "NAME", .help = "print the stages up to this one"},
    [CLI_STEP] = {.name = "--step",
                  .help = "in a terminal, one stage at a time: Enter or space next,\n"
                          "b back, a step's number (6, 4a) and Enter that step, q quits"},
    [CLI_CHECK] = {.name = "--check",
                   .help = "compare the trace with the lesson's golden file; exit 1 and\n"
                           "print a diff when they differ"},
    [CLI_GOLDEN] = {.name = "--golden", .value = "FILE",
                    .help = "the golden file for --check and --update-golden (default:\ngolden/NAME.txt beside the lessons folder)",
                    .needs = CLI_BIT(CLI_CHECK) | CLI_BIT(CLI_UPDATE_GOLDEN),
                    .why = "names the golden file of --check and --update-golden"},
    [CLI_UPDATE_GOLDEN] = {.name = "--update-golden",
                           .help = "write the trace to the lesson's golden file, at 80 columns\n"
                                   "(or --width) without colour, as --check compares it"},
    [CLI_LINT] = {.name = "--lint",
                  .help = "find the numbers of the narration typed as fixed text that an\n"
                          "edit of the givens changes (write them as placeholders), and\n"
                          "the lesson's warnings; exit 0 none, 1 some"},
    [CLI_DIFF] = {.name = "--diff",
                  .help = "run an original lesson and your edited copy; print, stage\n"
                          "by stage, what changed; exit 0 same, 1 differ, 2 trouble"},
    [CLI_STRICT] = {.name = "--strict", .help = "exit 1 when one of the lesson's claims fails"},
    [CLI_QUIZ] = {.name = "--quiz",
                  .help = "ask the value of chosen elements, one at a time, and show\n"
                          "the work of a wrong answer; answers are read one a line"},
    [CLI_QUIZ_SEED] = {.name = "--quiz-seed", .value = "N", .set = set_quiz_seed,
                       .help = "which elements --quiz chooses when the lesson marks none\n(default 1)",
                       .needs = CLI_BIT(CLI_QUIZ), .why = "chooses the questions of --quiz"},
    [CLI_THREADS] = {.name = "--threads", .value = "N", .set = set_threads,
                     .help = "threads to compute with (default: one per CPU; one in a\n"
                             "build without the fast layer); the trace is the same for\n"
                             "every N"},
    [CLI_TEXT] = {.name = "--text", .value = "TEXT", .set = set_text,
                  .help = "turn TEXT into tokens in place of the lesson's text:"},
    [CLI_SAVE] = {.name = "--save", .value = "DIR", .set = set_save,
                  .help = "also write every stage as DIR/STAGE.npy (float64) and\nDIR/manifest.json listing them"},
    [CLI_WEIGHTS] = {.name = "--weights", .value = "DIR", .set = set_weights,
                     .help = "read the files a lesson's givens name (file: Q.npy) from DIR\n"
                             "instead of the lesson's folder"},
    [CLI_WATCH] = {.name = "--watch", .help = "trace the lesson again each time it is saved (Ctrl-C stops)"},
    [CLI_LIST] = {.name = "--list",
                  .help = "list the installed lessons with their titles; with a lesson,\n"
                          "list its stages (the names --explain takes)"},
    [CLI_VERSION] = {.name = "--version", .help = "print the tracer's version", .now = print_version},
    [CLI_HELP] = {.name = "--help", .alias = "-h", .help = "print this help", .now = print_help},
};

// ---------------------------------------------------------------- the modes

bool cli_mode_takes(const CliMode *mode, CliOption option, OutputFormat format) {
    if (option == CLI_FORMAT)
        return mode->formats & CLI_FORMAT_BIT(format);
    return option == mode->option || (mode->takes & CLI_BIT(option));
}

// ---------------------------------------------------------------- reading the command line

static const char usage_head[] =
    "usage: tracer [options] LESSON.yaml\n"
    "       tracer [options] NUMBER|NAME   a lesson of the course: 02, the_cat_sat\n"
    "       tracer --list [LESSON]\n"
    "       tracer --diff ORIGINAL.yaml EDITED.yaml\n"
    "\n"
    "Run a lesson and print every tensor of its computation.\n"
    "\n"
    "options:\n";
static const char usage_tail[] =
    "\n"
    "exit status: 0 done, 1 the lesson has an error (or differs from its golden\n"
    "             file, or a claim fails under --strict), 2 usage or file error\n";

// The column the options' help starts in, and the width it is wrapped to: the help fits a
// terminal of 80 columns (one left free, as a line that fills the last wraps on some).
#define HELP_COLUMN 23
#define HELP_WIDTH 79

void cli_help(FILE *out) {
    fputs(usage_head, out);
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
        const CliOptionDef *def = &cli_options[o];
        int used = fprintf(out, "  %s%s%s", def->name, def->value ? " " : "", def->value ? def->value : "");
        // A long name and value get a line of their own, their help below.
        if (used >= HELP_COLUMN) {
            fputc('\n', out);
            used = 0;
        }
        fprintf(out, "%*s", HELP_COLUMN - used, "");
        // The help's words, its line breaks taken as spaces, wrapped at HELP_WIDTH.
        int column = HELP_COLUMN;
        for (const char *w = def->help; *w;) {
            if (*w == ' ' || *w == '\n') {
                w++;
                continue;
            }
            int len = (int)strcspn(w, " \n");
            if (column > HELP_COLUMN && column + 1 + len > HELP_WIDTH) {
                fprintf(out, "\n%*s", HELP_COLUMN, "");
                column = HELP_COLUMN;
            }
            column += fprintf(out, "%s%.*s", column > HELP_COLUMN ? " " : "", len, w);
            w += len;
        }
        fputc('\n', out);
    }
    fputs(usage_tail, out);
}

static CliOption find_option(const char *name, size_t len) {
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
        const char *alias = cli_options[o].alias;
        if ((strlen(cli_options[o].name) == len && !memcmp(name, cli_options[o].name, len)) ||
            (alias && strlen(alias) == len && !memcmp(name, alias, len)))
            return (CliOption)o;
    }
    return CLI_NO_OPTION;
}

static CliOption first_option(CliOptions set) {
    CliOption o = 0;
    while (o < CLI_OPTION_COUNT && !(set & CLI_BIT(o)))
        o++;
    return o;
}

// When mode is given and refuses an option given with it, says so: "--step shows the text
// trace in a terminal; leave out --check and --format json".
static int refuse(const Command *cmd, const CliMode *mode) {
    CliOption refused[CLI_OPTION_COUNT];
    size_t n = 0;
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++)
        if (cli_has(cmd, (CliOption)o) && !cli_mode_takes(mode, (CliOption)o, cmd->opts.format))
            refused[n++] = (CliOption)o;
    if (n == 0)
        return STATUS_OK;
    // Every option's name with ", " before it, and --format's value (a valid one) after it.
    char list[CLI_OPTION_COUNT * 24];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
        bool format = refused[i] == CLI_FORMAT;
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s%s%s", sep, cli_options[refused[i]].name,
                                format ? " " : "", format ? cmd->value[CLI_FORMAT] : "");
        ASSERT(len < sizeof(list));
    }
    return cli_usage_error("%s %s; leave out %s", cli_options[mode->option].name, mode->does, list);
}

// The mode the options choose; an option a mode given does not take, an option without the
// one it needs, or lessons too many or too few for the mode are usage errors. extra_lesson:
// the lesson after the first CLI_MAX_LESSONS.
static int choose_mode(Command *cmd, const CliMode *modes, size_t n_modes, const char *extra_lesson) {
    for (size_t m = 0; m < n_modes && !cmd->mode; m++)
        if (modes[m].option == CLI_NO_OPTION || cli_has(cmd, modes[m].option))
            cmd->mode = &modes[m];
    // Every mode given refuses what it does not take, the plain trace through `needs` below.
    for (size_t m = 0; m < n_modes; m++) {
        const CliMode *mode = &modes[m];
        int status = mode->option != CLI_NO_OPTION && cli_has(cmd, mode->option) ? refuse(cmd, mode) : STATUS_OK;
        if (status != STATUS_OK)
            return status;
    }
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
        const CliOptionDef *def = &cli_options[o];
        if (cli_has(cmd, (CliOption)o) && def->needs && !(cmd->given & def->needs))
            return cli_usage_error("%s %s; add %s", def->name, def->why, cli_options[first_option(def->needs)].name);
    }
    size_t max = cmd->mode->max_lessons;
    if (cmd->n_lessons > max) {
        const char *extra = max < CLI_MAX_LESSONS ? cmd->lessons[max] : extra_lesson;
        return max == 1 ? cli_usage_error("only one lesson at a time: '%s' is a second one", extra)
                        : cli_usage_error("%s compares two lessons: '%s' is a third one",
                                          cli_options[cmd->mode->option].name, extra);
    }
    if (cmd->n_lessons < cmd->mode->min_lessons) {
        // An option that takes a value took the lesson as it: tracer --save lesson.yaml
        for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
            const char *v = cli_options[o].value ? cmd->value[o] : NULL;
            size_t n = v ? strlen(v) : 0;
            if (v && ((n > 5 && !strcmp(v + n - 5, ".yaml")) || (n > 4 && !strcmp(v + n - 4, ".yml"))))
                return cli_usage_error("no lesson given: %s took '%s' as its %s; write the lesson after it, as "
                                       "in: tracer %s %s %s",
                                       cli_options[o].name, v, cli_options[o].value, cli_options[o].name,
                                       cli_options[o].value, v);
        }
        return cli_usage_error("no lesson given");
    }
    return STATUS_OK;
}

// Colour and width, from the options and the terminal.
static void settle(Command *cmd) {
    const char *colour = cmd->value[CLI_COLOR] ? cmd->value[CLI_COLOR] : "auto";
    const char *no_colour = getenv("NO_COLOR"), *colorterm = getenv("COLORTERM");
    // Golden files are traced at 80 columns, whatever the terminal's width, and without colour.
    bool check = cli_has(cmd, CLI_CHECK) || cli_has(cmd, CLI_UPDATE_GOLDEN);
    cmd->terminal_colour = !strcmp(colour, "always") ||
                           (!strcmp(colour, "auto") && isatty(STDOUT_FILENO) && !(no_colour && no_colour[0]));
    cmd->opts.colour = !check && cmd->opts.format == OUTPUT_TEXT && cmd->terminal_colour;
    cmd->opts.truecolour = colorterm && (!strcmp(colorterm, "truecolor") || !strcmp(colorterm, "24bit"));
    cmd->opts.only = cmd->value[CLI_ONLY];
    cmd->opts.from = cmd->value[CLI_FROM];
    cmd->opts.to = cmd->value[CLI_TO];
    cmd->opts.heatmap = cli_has(cmd, CLI_HEATMAP);
    cmd->opts.brief = cli_has(cmd, CLI_BRIEF);
    cmd->opts.explain = cmd->explain;
    cmd->fixed_width = cmd->opts.width != 0;
    if (!cmd->opts.width)
        cmd->opts.width = check ? RENDER_DEFAULT_WIDTH : cli_default_width();
    cmd->colour_errors = cli_colour_stderr();
}

int cli_parse(int argc, char **argv, const CliMode *modes, size_t n_modes, Command *cmd) {
    *cmd = (Command){.opts = {.format = OUTPUT_TEXT, .digits = -1}, .quiz_seed = 1};
    const char *extra_lesson = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (cmd->n_lessons < CLI_MAX_LESSONS)
                cmd->lessons[cmd->n_lessons] = arg;
            else if (cmd->n_lessons == CLI_MAX_LESSONS)
                extra_lesson = arg;
            cmd->n_lessons++;
            continue;
        }
        // --opt=value and --opt value both work.
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        int len = eq ? (int)(eq - arg) : (int)strlen(arg);
        CliOption option = find_option(arg, (size_t)len);
        if (option == CLI_NO_OPTION)
            return cli_usage_error("unknown option '%s'", arg);
        const CliOptionDef *def = &cli_options[option];
        const char *value = NULL;
        if (def->value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return cli_usage_error("option %.*s needs a value", len, arg);
        } else if (eq) {
            return cli_usage_error("option %.*s takes no value", len, arg);
        }
        if (def->now)
            return def->now();
        cmd->given |= CLI_BIT(option);
        cmd->value[option] = value;
        int status = value && def->set ? def->set(cmd, value) : STATUS_OK;
        if (status != STATUS_OK)
            return status;
    }
    int status = choose_mode(cmd, modes, n_modes, extra_lesson);
    if (status == STATUS_OK)
        settle(cmd);
    return status;
}

// ---------------------------------------------------------------- for the handlers

// The mistake, then the usage line: the whole help would bury the one line that matters.
int cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tracer: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nusage: tracer [options] LESSON.yaml   (tracer --help lists the options)\n", stderr);
    return STATUS_USAGE_ERROR;
}

size_t cli_default_width(void) {
    long cols = 0;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        cols = ws.ws_col;
    } else {
        const char *env = getenv("COLUMNS");
        char *end;
        cols = env && *env ? strtol(env, &end, 10) : 0;
        if (cols <= 0 || *end != '\0')
            cols = RENDER_DEFAULT_WIDTH;
    }
    return cols < RENDER_MIN_WIDTH ? RENDER_MIN_WIDTH : cols > RENDER_MAX_WIDTH ? RENDER_MAX_WIDTH : (size_t)cols;
}

void cli_print_diagnostics(const Diag *diag, bool colour) {
    diag_print_warnings(diag, stderr, colour);
    if (diag->status != STATUS_OK)
        diag_print(diag, stderr, colour);
}

bool cli_colour_stderr(void) {
    const char *no_colour = getenv("NO_COLOR");
    return isatty(STDERR_FILENO) && !(no_colour && no_colour[0]);
}

double cli_memory_within(double machine, const char *const *limit_files, size_t n_files, bool *container) {
    double memory = machine;
    *container = false;
    for (size_t i = 0; i < n_files; i++) {
        int err, fd = files_open_read(limit_files[i], 0, &err);
        FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (fd >= 0 && !f)
            close(fd);
        unsigned long long bytes;
        if (f && fscanf(f, "%llu", &bytes) == 1 && bytes > 0 && (memory <= 0 || (double)bytes < memory)) {
            memory = (double)bytes;
            *container = true;
        }
        if (f)
            fclose(f);
    }
    return memory;
}

int cli_flush_stdout(const char *what) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracer: cannot write %s: %s\n", what, strerror(errno));
        return STATUS_USAGE_ERROR;
    }
    return STATUS_OK;
}
