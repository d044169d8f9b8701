// main: the command line. Reads options, runs the pipeline, prints the trace or the error.
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ask.h"
#include "config.h"
#include "course.h"
#include "text_diff.h"
#include "parallel.h"
#include "pipeline.h"
#include "render.h"
#include "pager.h"
#include "watch.h"

static const char usage[] =
    "usage: tracer [options] LESSON.yaml\n"
    "       tracer [options] NUMBER|NAME   a lesson of the installed course: 02, the_cat_sat\n"
    "       tracer --list [LESSON]\n"
    "       tracer --diff ORIGINAL.yaml EDITED.yaml\n"
    "\n"
    "Run a lesson and print every tensor of its computation.\n"
    "\n"
    "options:\n"
    "  --format text|json|html\n"
    "                       text for people (default), json for tools, html for a\n"
    "                       self-contained web page\n"
    "  --digits N           decimals to print (0 to 12; default: the lesson's, or 4)\n"
    "  --color auto|always|never\n"
    "                       colour when stdout is a terminal and NO_COLOR is unset (auto)\n"
    "  --explain STAGE[i,j] show the arithmetic of one element (STAGE[i] a row, STAGE\n"
    "                       alone every element); may be given several times\n"
    "  --width N            fit the text trace in N columns (40 to 400; default: the\n"
    "                       terminal's width, else $COLUMNS, else 80)\n"
    "  --heatmap            a picture of every tensor (attention weights get one in\n"
    "                       colour anyway): cells coloured by value, or shades\n"
    "  --brief              hide intermediates (weights.1) and the givens' values\n"
    "  --only NAME,...      print only these stages\n"
    "  --from NAME          print the stages from this one on\n"
    "  --to NAME            print the stages up to this one\n"
    "  --step               in a terminal, one stage at a time: Enter or space next,\n"
    "                       b back, a step's number (6, 4a) and Enter that step, q quits\n"
    "  --check              compare the trace with the lesson's golden file; exit 1 and\n"
    "                       print a diff when they differ\n"
    "  --golden FILE        the golden file for --check (default: golden/NAME.txt beside\n"
    "                       the lessons folder)\n"
    "  --diff               run an original lesson and your edited copy; print, stage\n"
    "                       by stage, what changed; exit 0 same, 1 differ, 2 trouble\n"
    "  --strict             exit 1 when one of the lesson's claims fails\n"
    "  --quiz               ask the value of chosen elements, one at a time, and show\n"
    "                       the work of a wrong answer; answers are read one a line\n"
    "  --quiz-seed N        which elements --quiz chooses when the lesson marks none\n"
    "                       (default 1)\n"
    "  --threads N          threads to compute with (default: one per CPU); the trace\n"
    "                       is the same for every N\n"
    "  --text TEXT          turn TEXT into tokens in place of the lesson's text:\n"
    "  --save DIR           also write every stage as DIR/STAGE.npy (float64) and\n"
    "                       DIR/manifest.json listing them\n"
    "  --watch              trace the lesson again each time it is saved (Ctrl-C stops)\n"
    "  --list               list the installed lessons with their titles; with a lesson,\n"
    "                       list its stages (the names --explain takes)\n"
    "  --version            print the tracer's version\n"
    "  --help               print this help\n"
    "\n"
    "exit status: 0 done, 1 the lesson has an error (or differs from its golden file, or\n"
    "             a claim fails under --strict),\n"
    "             2 usage or file error\n";

// The mistake, then the usage line: the whole help would bury the one line that matters.
static int usage_error(const char *fmt, const char *arg) {
    fputs("tracer: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nusage: tracer [options] LESSON.yaml   (tracer --help lists the options)\n", stderr);
    return STATUS_USAGE_ERROR;
}

// golden/NAME.txt in the folder beside the lesson's folder: lessons/x.yaml -> golden/x.txt,
// /course/lessons/x.yaml -> /course/golden/x.txt, x.yaml -> ../golden/x.txt.
static char *default_golden(const char *lesson) {
    const char *slash = strrchr(lesson, '/');
    const char *base = slash ? slash + 1 : lesson;
    size_t dir_len = slash ? (size_t)(slash - lesson) : 0;
    size_t base_len = strlen(base);
    if (base_len > 5 && strcmp(base + base_len - 5, ".yaml") == 0)
        base_len -= 5;
    else if (base_len > 4 && strcmp(base + base_len - 4, ".yml") == 0)
        base_len -= 4;
    // The parent of the lesson's folder, when its last part is a plain name (not . or ..).
    const char *dir_slash = NULL;
    for (size_t i = 0; i < dir_len; i++)
        if (lesson[i] == '/')
            dir_slash = lesson + i;
    const char *last = dir_slash ? dir_slash + 1 : lesson;
    size_t last_len = dir_len - (size_t)(last - lesson);
    bool plain = last_len && !(last_len == 1 && last[0] == '.') && !(last_len == 2 && !memcmp(last, "..", 2));
    StrBuf sb;
    strbuf_init(&sb);
    if (plain)
        strbuf_printf(&sb, "%.*sgolden/%.*s.txt", (int)(last - lesson), lesson, (int)base_len, base);
    else if (dir_len)
        strbuf_printf(&sb, "%.*s/../golden/%.*s.txt", (int)dir_len, lesson, (int)base_len, base);
    else
        strbuf_printf(&sb, "../golden/%.*s.txt", (int)base_len, base);
    if (sb.failed) {
        strbuf_finish(&sb);
        return NULL;
    }
    return sb.data;
}

// The terminal's width, else $COLUMNS, else 80; held within what --width accepts.
static size_t default_width(void) {
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

// Warnings first, then the errors if there are any.
static void print_diagnostics(const Diag *diag, bool colour) {
    diag_print_warnings(diag, stderr, colour);
    if (diag->status != STATUS_OK)
        diag_print(diag, stderr, colour);
}

// --step: the trace in pages, one stage at a time, traced again at the terminal's new width
// when the window is resized (unless --width fixed it).
static int step_lesson(const char *lesson, PipelineOptions *opts, bool fixed_width, bool colour_errors) {
    size_t at = 1;
    for (;;) {
        Diag diag;
        diag_init(&diag);
        StrBuf out;
        strbuf_init(&out);
        Pages pages = {0};
        int status = pipeline_run_file_pages(lesson, opts, &out, &pages, &diag);
        print_diagnostics(&diag, colour_errors);
        // --save writes its files once; a resize only lays the same trace out again.
        if (status == STATUS_OK)
            opts->save_dir = NULL;
        if (status == STATUS_OK)
            status = pager_show(strbuf_str(&out), &pages, opts->colour, &at);
        pipeline_pages_finish(&pages);
        strbuf_finish(&out);
        if (status != PAGER_RESIZED)
            return status;
        if (!fixed_width)
            opts->width = default_width();
    }
}

// --quiz: the questions, then the conversation.
static int quiz_lesson(const char *lesson, const PipelineOptions *opts, unsigned long long seed, bool colour_errors) {
    Diag diag;
    diag_init(&diag);
    Quiz *quiz = NULL;
    int status = pipeline_quiz_file(lesson, opts, seed, &quiz, &diag);
    if (status == STATUS_OK)
        status = ask_quiz(quiz, stdin, stdout, !isatty(STDIN_FILENO), opts->width, opts->colour, &diag);
    if (status != STATUS_OK)
        diag_print(&diag, stderr, colour_errors);
    quiz_destroy(quiz);
    return status;
}

static char *read_text_file(const char *path, int *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = errno;
        return NULL;
    }
    StrBuf sb;
    strbuf_init(&sb);
    char buf[65536];
    size_t n;
    errno = 0;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    bool bad = ferror(f) || sb.failed;
    *err = !ferror(f) ? ENOMEM : errno ? errno : EIO;  // a folder: "Is a directory"
    fclose(f);
    if (bad) {
        strbuf_finish(&sb);
        return NULL;
    }
    if (!sb.data)
        strbuf_append(&sb, "", 0);  // an empty file; NULL (ENOMEM) when even that fails
    return sb.data;
}

static int check_golden(const char *lesson, const char *golden_arg, const char *trace, bool colour) {
    char *golden = golden_arg ? util_strdup(golden_arg) : default_golden(lesson);
    if (!golden) {
        fputs("tracer: out of memory\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    int err = 0;
    char *expected = read_text_file(golden, &err);
    if (!expected) {
        fprintf(stderr, "tracer: cannot read the golden file '%s': %s\n", golden, strerror(err));
        fprintf(stderr, "hint: create it with: tracer %s > %s\n", lesson, golden);
        util_free(golden);
        return STATUS_USAGE_ERROR;
    }
    StrBuf diff;
    strbuf_init(&diff);
    char now[1024];
    snprintf(now, sizeof(now), "%s (traced now)", lesson);
    text_diff_stage_summary(expected, trace, golden, lesson, &diff);
    bool equal = text_diff_unified(expected, trace, golden, now, colour, &diff);
    int status = STATUS_OK;
    if (equal) {
        printf("%s matches %s\n", lesson, golden);
    } else {
        fputs(strbuf_str(&diff), stdout);
        fprintf(stderr, "tracer: %s differs from its golden file %s\n", lesson, golden);
        status = STATUS_LESSON_ERROR;
    }
    strbuf_finish(&diff);
    util_free(expected);
    util_free(golden);
    return status;
}

// What main asks of a trace besides printing it.
typedef struct TraceChecks {
    bool check;          // --check: compare it with its golden file instead of printing it
    const char *golden;  // --golden: that file (NULL: golden/NAME.txt beside the lesson's folder)
    bool golden_colour;  // the diff in colour
    bool strict;         // --strict: a claim that fails is a failed run
} TraceChecks;

static bool colour_stderr(void) {
    const char *no_colour = getenv("NO_COLOR");
    return isatty(STDERR_FILENO) && !(no_colour && no_colour[0]);
}

// A full disk or a closed pipe must not pass for success.
static int flush_stdout(const char *what) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracer: cannot write %s: %s\n", what, strerror(errno));
        return STATUS_USAGE_ERROR;
    }
    return STATUS_OK;
}

// Trace the lesson once: the trace on stdout, or (with --check) the diff from its golden file.
static int trace(const char *lesson, const PipelineOptions *opts, const TraceChecks *checks) {
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    PipelineOptions run = *opts;
    size_t claims_failed = 0;
    run.claims_failed = &claims_failed;
    // The trace streams to stdout as it is rendered; --check needs it whole, to compare.
    if (!checks->check)
        out.sink = stdout;
    int status = pipeline_run_file(lesson, &run, &out, &diag);
    if (status != STATUS_OK) {
        int write_errno = out.sink_errno;
        strbuf_finish(&out);
        // A full disk or a closed pipe must not pass for success.
        if (write_errno) {
            fprintf(stderr, "tracer: cannot write the trace: %s\n", strerror(write_errno));
            return STATUS_USAGE_ERROR;
        }
        print_diagnostics(&diag, colour_stderr());
        return status;
    }
    print_diagnostics(&diag, colour_stderr());  // the warnings of a lesson that ran
    if (checks->check)
        status = check_golden(lesson, checks->golden, strbuf_str(&out), checks->golden_colour);
    else
        fwrite(strbuf_str(&out), 1, out.len, stdout);
    strbuf_finish(&out);
    int written = flush_stdout("the trace");
    if (written != STATUS_OK)
        return written;
    if (checks->strict && claims_failed && status == STATUS_OK) {
        fprintf(stderr, "tracer: %zu of the lesson's claims %s (--strict)\n", claims_failed,
                claims_failed == 1 ? "fails" : "fail");
        return STATUS_LESSON_ERROR;
    }
    return status;
}

// --list: the course, or the stages of one lesson.
static int print_list(const char *lesson) {
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    int status = lesson ? pipeline_list_stages(lesson, &out, &diag) : course_list(&out, &diag);
    if (status == STATUS_OK) {
        fwrite(strbuf_str(&out), 1, out.len, stdout);
        status = flush_stdout("the list");
    } else
        print_diagnostics(&diag, colour_stderr());
    strbuf_finish(&out);
    return status;
}

// Ctrl-C is how a watch ends, and it ends well. While waiting for a save, the wait returns and
// main ends as usual; in the middle of a trace, leave at once (nothing is half-written that
// matters: the next run would redraw the screen anyway).
static volatile sig_atomic_t watch_waiting, watch_stopped;

static void stop_watching(int signal_number) {
    (void)signal_number;
    if (watch_waiting) {
        watch_stopped = 1;
        return;
    }
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(STATUS_OK);
}

// Trace, wait for a save, clear the screen, trace again. A broken lesson shows its error in
// place of the trace and the watch goes on; a lesson deleted or renamed away is waited for.
static int watch_lesson(const char *lesson, PipelineOptions *opts, bool fixed_width, const TraceChecks *checks) {
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create(lesson, &diag);
    if (!w) {
        print_diagnostics(&diag, colour_stderr());
        return diag.status;
    }
    struct sigaction stop = {.sa_handler = stop_watching};
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, NULL);
    // Clear the screen and its scrollback, so what shows is this run alone.
    const char *clear = isatty(STDOUT_FILENO) ? "\033[H\033[2J\033[3J" : "";
    for (unsigned long run = 1;; run++) {
        fputs(clear, stdout);
        fflush(stdout);
        // The window may have been resized since the last save.
        if (!fixed_width && !checks->check)
            opts->width = default_width();
        trace(lesson, opts, checks);
        fprintf(stderr, "tracer: watching %s (run %lu): save it to trace again, Ctrl-C to stop\n", lesson, run);
        WatchEvent event;
        for (;;) {
            // SIGINT is blocked from the check of watch_stopped until the wait unblocks it,
            // atomically: a Ctrl-C in between is pending, and ends the wait at once.
            sigset_t interrupt, waiting_mask;
            sigemptyset(&interrupt);
            sigaddset(&interrupt, SIGINT);
            sigprocmask(SIG_BLOCK, &interrupt, &waiting_mask);
            sigdelset(&waiting_mask, SIGINT);
            watch_waiting = 1;
            int status = watch_stopped ? STATUS_OK : watch_wait(w, &waiting_mask, &event, &diag);
            watch_waiting = 0;
            sigprocmask(SIG_UNBLOCK, &interrupt, NULL);
            if (watch_stopped || status != STATUS_OK) {
                if (watch_stopped)
                    fputc('\n', stderr);
                else
                    print_diagnostics(&diag, colour_stderr());
                watch_destroy(w);
                return watch_stopped ? STATUS_OK : status;
            }
            if (event == WATCH_SIGNAL)
                continue;
            if (event == WATCH_SAVED)
                break;
            fputs(clear, stdout);
            fflush(stdout);
            fprintf(stderr, "tracer: %s was deleted or renamed; waiting for it to come back (Ctrl-C to stop)\n",
                    lesson);
        }
    }
}

// tracer --diff ORIGINAL EDITED: 0 the same, 1 different, 2 trouble (either lesson broken too).
static int diff_lessons(const char *original, const char *edited, bool check, PipelineOptions *opts,
                        bool colour_errors) {
    if (!edited)
        return usage_error("%s", "--diff compares two lessons: give the original and your edited copy");
    if (check || opts->format == OUTPUT_JSON)
        return usage_error("%s", "--diff prints its own text report; leave out --check, --step and --format json");
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    bool same = false;
    int status = pipeline_diff_files(original, edited, opts, &same, &out, &diag);
    print_diagnostics(&diag, colour_errors);
    if (status != STATUS_OK) {
        strbuf_finish(&out);
        return STATUS_USAGE_ERROR;
    }
    fwrite(strbuf_str(&out), 1, out.len, stdout);
    strbuf_finish(&out);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracer: cannot write the comparison: %s\n", strerror(errno));
        return STATUS_USAGE_ERROR;
    }
    return same ? STATUS_OK : STATUS_LESSON_ERROR;
}

// TRACER_MEMORY: a size such as 512M, 2G, 1.5GiB or 1073741824 (bytes); K, M, G and T count
// in 1024s, with iB or B after them or not. 0 when it is not one.
static double parse_memory(const char *text) {
    size_t digits = strspn(text, "0123456789.");
    char *end;
    double bytes = strtod(text, &end);
    if (digits == 0 || end != text + digits)  // no sign, no exponent, no hexadecimal
        return 0;
    static const char units[] = "KMGT";
    const char *unit = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (unit) {
        bytes = ldexp(bytes, 10 * (int)(unit - units + 1));
        end++;
        if (tolower((unsigned char)end[0]) == 'i' && toupper((unsigned char)end[1]) == 'B')
            end += 2;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    return *end || !(bytes >= 1) || bytes > 0x1p64 ? 0 : bytes;
}

// The memory a run may use (opts->memory): TRACER_MEMORY when set; else the machine's
// physical memory, or its container's limit when that is lower (cgroup v2's memory.max, v1's
// memory.limit_in_bytes; "max" is no limit). False after saying what is wrong with TRACER_MEMORY.
static bool memory_limit(PipelineOptions *opts) {
    const char *setting = getenv("TRACER_MEMORY");
    if (setting && setting[0]) {
        opts->memory = parse_memory(setting);
        opts->memory_from = PIPELINE_MEMORY_SETTING;
        if (opts->memory > 0)
            return true;
        fprintf(stderr,
                "tracer: TRACER_MEMORY must be a size such as 512M, 2G, 1.5GiB or 1073741824 (bytes), not '%s'\n",
                setting);
        fputs("hint: K, M, G and T count in 1024s; leave TRACER_MEMORY unset to use all of this machine's memory\n",
              stderr);
        return false;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    opts->memory = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    opts->memory_from = PIPELINE_MEMORY_MACHINE;
    static const char *const limits[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < ARRAY_LEN(limits); i++) {
        FILE *f = fopen(limits[i], "r");
        unsigned long long bytes;
        if (f && fscanf(f, "%llu", &bytes) == 1 && bytes > 0 && (opts->memory <= 0 || (double)bytes < opts->memory)) {
            opts->memory = (double)bytes;
            opts->memory_from = PIPELINE_MEMORY_CONTAINER;
        }
        if (f)
            fclose(f);
    }
    return true;
}

// The most --explain requests one run takes, and the same number for messages.
#define MAIN_MAX_EXPLAIN 64
#define MAIN_TEXT_OF(n) #n
#define MAIN_TEXT(n) MAIN_TEXT_OF(n)

int main(int argc, char **argv) {
    PipelineOptions opts = {.format = OUTPUT_TEXT, .digits = -1};
    const char *colour = "auto", *lesson = NULL, *edited = NULL, *golden = NULL;
    bool check = false, step = false, diff = false, strict = false, quiz = false, watch = false, list = false;
    const char *quiz_seed = NULL;
    const char *explain[MAIN_MAX_EXPLAIN];
    size_t n_explain = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        // --opt=value and --opt value both work.
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        char name[64];
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        bool takes_value = !strcmp(name, "--format") || !strcmp(name, "--digits") || !strcmp(name, "--color") ||
                           !strcmp(name, "--colour") || !strcmp(name, "--golden") ||
                           !strcmp(name, "--explain") || !strcmp(name, "--width") || !strcmp(name, "--only") ||
                           !strcmp(name, "--from") || !strcmp(name, "--to") || !strcmp(name, "--threads") ||
                           !strcmp(name, "--save") || !strcmp(name, "--quiz-seed") ||
                           !strcmp(name, "--text");
        if (takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return usage_error("option %s needs a value", name);
        } else if (eq) {
            return usage_error("option %s takes no value", name);
        }
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            fputs(usage, stdout);
            return flush_stdout("the help");
        } else if (!strcmp(name, "--version")) {
            fputs("tracer " TRACER_VERSION "\n", stdout);
            return flush_stdout("the version");
        } else if (!strcmp(name, "--watch")) {
            watch = true;
        } else if (!strcmp(name, "--list")) {
            list = true;
        } else if (!strcmp(name, "--format")) {
            if (!strcmp(value, "text"))
                opts.format = OUTPUT_TEXT;
            else if (!strcmp(value, "json"))
                opts.format = OUTPUT_JSON;
            else if (!strcmp(value, "html"))
                opts.format = OUTPUT_HTML;
            else
                return usage_error("--format must be text, json or html, not '%s'", value);
        } else if (!strcmp(name, "--digits")) {
            char *end;
            long d = strtol(value, &end, 10);
            if (*value == '\0' || *end != '\0' || d < 0 || d > 12)
                return usage_error("--digits must be a whole number from 0 to 12, not '%s'", value);
            opts.digits = (int)d;
        } else if (!strcmp(name, "--threads")) {
            char *end;
            errno = 0;
            long t = strtol(value, &end, 10);
            if (*value == '\0' || *end != '\0' || errno || t < 1 || t > PARALLEL_MAX_THREADS)
                return usage_error("--threads must be a whole number from 1 to " PARALLEL_MAX_THREADS_TEXT ", not '%s'",
                                   value);
            opts.threads = (size_t)t;
        } else if (!strcmp(name, "--text")) {
            opts.text = value;
        } else if (!strcmp(name, "--save")) {
            if (*value == '\0')
                return usage_error("%s", "--save needs a folder name");
            opts.save_dir = value;
        } else if (!strcmp(name, "--color") || !strcmp(name, "--colour")) {
            if (strcmp(value, "auto") && strcmp(value, "always") && strcmp(value, "never"))
                return usage_error("--color must be auto, always or never, not '%s'", value);
            colour = value;
        } else if (!strcmp(name, "--explain")) {
            if (n_explain == ARRAY_LEN(explain))
                return usage_error("at most %s --explain options", MAIN_TEXT(MAIN_MAX_EXPLAIN));
            explain[n_explain++] = value;
        } else if (!strcmp(name, "--width")) {
            char *end;
            long w = strtol(value, &end, 10);
            if (*value == '\0' || *end != '\0' || w < RENDER_MIN_WIDTH || w > RENDER_MAX_WIDTH)
                return usage_error("--width must be a whole number of columns from 40 to 400, not '%s'", value);
            opts.width = (size_t)w;
        } else if (!strcmp(name, "--heatmap")) {
            opts.heatmap = true;
        } else if (!strcmp(name, "--brief")) {
            opts.brief = true;
        } else if (!strcmp(name, "--only")) {
            opts.only = value;
        } else if (!strcmp(name, "--from")) {
            opts.from = value;
        } else if (!strcmp(name, "--to")) {
            opts.to = value;
        } else if (!strcmp(name, "--step")) {
            step = true;
        } else if (!strcmp(name, "--quiz")) {
            quiz = true;
        } else if (!strcmp(name, "--quiz-seed")) {
            quiz_seed = value;
        } else if (!strcmp(name, "--strict")) {
            strict = true;
        } else if (!strcmp(name, "--check")) {
            check = true;
        } else if (!strcmp(name, "--golden")) {
            golden = value;
        } else if (!strcmp(name, "--diff")) {
            diff = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (lesson && (edited || !diff)) {
            return usage_error(diff ? "--diff compares two lessons: '%s' is a third one"
                                    : "only one lesson at a time: '%s' is a second one",
                               a);
        } else if (lesson) {
            edited = a;
        } else {
            lesson = a;
        }
    }
    if (list && !lesson)
        return print_list(NULL);
    if (list && (watch || check || step || diff || quiz))
        return usage_error("%s", "--list prints the lesson's stages; leave out --watch, --check, --step, --diff and --quiz");
    if (watch && (step || diff || quiz))
        return usage_error("%s", "--watch traces one lesson again at each save; leave out --step, --diff and --quiz");
    if (!lesson)
        return usage_error("%s", "no lesson given");
    if (check && opts.format != OUTPUT_TEXT)
        return usage_error("--check compares the text trace with its golden file; leave out --format %s",
                           opts.format == OUTPUT_JSON ? "json" : "html");
    if (step && (check || opts.format == OUTPUT_JSON))
        return usage_error("%s", "--step shows the text trace in a terminal; leave out --check and --format json");
    if (step && opts.format == OUTPUT_HTML)
        return usage_error("%s", "--step shows the text trace in a terminal; leave out --format html");
    if (step && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        fprintf(stderr, "tracer: --step waits for keys in a terminal, but its %s is not one\n",
                isatty(STDIN_FILENO) ? "output" : "input");
        fputs("hint: run it in a terminal, or leave out --step to print the whole trace\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    if (quiz && opts.format == OUTPUT_JSON)
        return usage_error("%s", "--quiz asks questions in text; leave out --format json");
    if (quiz && (check || step || opts.only || opts.from || opts.to || opts.brief || opts.heatmap || n_explain))
        return usage_error("%s", "--quiz asks questions of its own and prints no trace; leave out --check, --step, "
                                 "--only, --from, --to, --brief, --heatmap and --explain");
    if (quiz_seed && !quiz)
        return usage_error("%s", "--quiz-seed chooses the questions of --quiz; add --quiz");
    unsigned long long seed = 1;
    if (quiz_seed) {
        char *end;
        errno = 0;
        seed = strtoull(quiz_seed, &end, 10);
        if (!isdigit((unsigned char)quiz_seed[0]) || *end != '\0' || errno)
            return usage_error("--quiz-seed must be a whole number from 0 to 18446744073709551615, not '%s'",
                               quiz_seed);
    }
    const char *no_colour = getenv("NO_COLOR"), *colorterm = getenv("COLORTERM");
    bool terminal_colour = !strcmp(colour, "always") ||
                           (!strcmp(colour, "auto") && isatty(STDOUT_FILENO) && !(no_colour && no_colour[0]));
    opts.colour = !check && opts.format == OUTPUT_TEXT && terminal_colour;
    opts.truecolour = colorterm && (!strcmp(colorterm, "truecolor") || !strcmp(colorterm, "24bit"));
    // Golden files are traced at 80 columns, whatever the terminal's width.
    bool fixed_width = opts.width != 0;
    if (!opts.width)
        opts.width = check ? RENDER_DEFAULT_WIDTH : default_width();

    opts.explain = explain;
    opts.n_explain = n_explain;
    if (!memory_limit(&opts))
        return STATUS_USAGE_ERROR;
    bool colour_errors = colour_stderr();
    const TraceChecks checks = {.check = check, .golden = golden, .golden_colour = terminal_colour, .strict = strict};
    // A lesson of the course may be named by number or name, the original of --diff too.
    char *path = NULL, *edited_path = NULL;
    Diag diag;
    diag_init(&diag);
    int status = course_lesson_path(lesson, &path, &diag);
    if (status == STATUS_OK && edited)
        status = course_lesson_path(edited, &edited_path, &diag);
    if (status != STATUS_OK)
        print_diagnostics(&diag, colour_errors);
    else if (diff)
        status = diff_lessons(path, edited_path, check || step, &opts, colour_errors);
    else if (list)
        status = print_list(path);
    else if (step)
        status = step_lesson(path, &opts, fixed_width, colour_errors);
    else if (quiz)
        status = quiz_lesson(path, &opts, seed, colour_errors);
    else if (watch)
        status = watch_lesson(path, &opts, fixed_width, &checks);
    else
        status = trace(path, &opts, &checks);
    util_free(path);
    util_free(edited_path);
    return status;
}
