// Unit tests of the command line's tables (cli.h): modes that exclude each other do so both
// ways, the plain trace never has to refuse an option without a mode to name, the help shows
// the table, and reading argv chooses the mode the options ask for and refuses what it does
// not take. The messages themselves are checked byte for byte under tests/errors.
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "cmd.h"
#include "modes.h"

// Lessons for the handlers (tests/meson.build): one that runs, one that does not load.
static const char *good_lesson, *broken_lesson;

static const CliMode *mode_of(CliOption option) {
    for (size_t m = 0; m < modes_count; m++)
        if (modes[m].option == option)
            return &modes[m];
    return NULL;
}

// Two modes given together are refused whichever is read first: if one takes the other's
// option (--watch --check), the other takes its option too.
static void test_modes_exclude_each_other_both_ways(void **state) {
    (void)state;
    for (size_t a = 0; a < modes_count; a++)
        for (size_t b = 0; b < modes_count; b++) {
            const CliMode *x = &modes[a], *y = &modes[b];
            if (a == b || x->option == CLI_NO_OPTION || y->option == CLI_NO_OPTION)
                continue;
            if (cli_mode_takes(x, y->option, OUTPUT_TEXT) != cli_mode_takes(y, x->option, OUTPUT_TEXT))
                fail_msg("%s and %s: one takes the other, not the other way round", cli_options[x->option].name,
                         cli_options[y->option].name);
        }
    // The one pair that goes together.
    assert_true(cli_mode_takes(mode_of(CLI_WATCH), CLI_CHECK, OUTPUT_TEXT));
    assert_false(cli_mode_takes(mode_of(CLI_WATCH), CLI_STEP, OUTPUT_TEXT));
}

// The plain trace has no option to name in a refusal: each option it does not take chooses a
// mode, or needs an option that chooses one (and that mode takes it), or acts at once.
static void test_plain_trace_refuses_only_through_a_mode(void **state) {
    (void)state;
    const CliMode *plain = mode_of(CLI_NO_OPTION);
    assert_non_null(plain);
    assert_ptr_equal(plain, &modes[modes_count - 1]);  // chosen when no other is
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
        const CliOptionDef *def = &cli_options[o];
        if (cli_mode_takes(plain, (CliOption)o, OUTPUT_TEXT) || mode_of((CliOption)o) || def->now)
            continue;
        if (!def->needs)
            fail_msg("the plain trace does not take %s, and nothing says what it needs", def->name);
        for (size_t n = 0; n < CLI_OPTION_COUNT; n++)
            if (def->needs & CLI_BIT(n)) {
                assert_non_null(mode_of((CliOption)n));
                assert_true(cli_mode_takes(mode_of((CliOption)n), (CliOption)o, OUTPUT_TEXT));
            }
    }
}

// Every option on a line of the help, its value after it, its help starting in one column.
static void test_help_shows_every_option(void **state) {
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *help = open_memstream(&text, &size);
    assert_non_null(help);
    cli_help(help);
    assert_int_equal(fclose(help), 0);
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
        const CliOptionDef *def = &cli_options[o];
        char line[96];
        snprintf(line, sizeof(line), "\n  %s%s%s", def->name, def->value ? " " : "", def->value ? def->value : "");
        const char *at = strstr(text, line);
        if (!at)
            fail_msg("the help has no line for %s", def->name);
        // Its help, from column 23 on the same line or the next: the words of the table's help,
        // in order, each line break of the table's a space.
        const char *help_at = at + strlen(line);
        help_at += strspn(help_at, " \n");
        const char *line_start = help_at;
        while (line_start[-1] != '\n')
            line_start--;
        assert_int_equal(help_at - line_start, 23);
        const char *p = help_at;
        for (const char *w = def->help; *w;) {
            if (*w == ' ' || *w == '\n') {
                w++;
                continue;
            }
            size_t len = strcspn(w, " \n");
            p += strspn(p, " \n");
            if (strncmp(p, w, len) != 0)
                fail_msg("the help of %s reads '%.20s' where the table has '%.*s'", def->name, p, (int)len, w);
            p += len;
            w += len;
        }
    }
    // Every line fits a terminal of 80 columns, with one to spare.
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n");
        if (len > 79)
            fail_msg("a line of the help is %zu columns: %.*s", len, (int)len, l);
        l += len + (l[len] == '\n');
    }
    assert_null(strstr(text, "--colour"));  // another spelling, not another option
    free(text);
}

// Reads argv (NULL-terminated, without the program's name) into *cmd.
static int parse(Command *cmd, ...) {
    char *argv[CLI_MAX_EXPLAIN + 8] = {"tracer"};
    int argc = 1;
    va_list ap;
    va_start(ap, cmd);
    for (char *arg; (arg = va_arg(ap, char *));)
        argv[argc++] = arg;
    va_end(ap);
    return cli_parse(argc, argv, modes, modes_count, cmd);
}

static void test_the_options_choose_the_mode(void **state) {
    (void)state;
    Command cmd;
    assert_int_equal(parse(&cmd, "a.yaml", NULL), STATUS_OK);
    assert_int_equal(cmd.mode->option, CLI_NO_OPTION);
    assert_int_equal(cmd.n_lessons, 1);
    assert_string_equal(cmd.lessons[0], "a.yaml");
    assert_int_equal(parse(&cmd, "--check", "--watch", "a.yaml", NULL), STATUS_OK);
    assert_int_equal(cmd.mode->option, CLI_WATCH);
    // The options may come in any order, after the lessons too.
    assert_int_equal(parse(&cmd, "a.yaml", "b.yaml", "--diff", NULL), STATUS_OK);
    assert_int_equal(cmd.mode->option, CLI_DIFF);
    assert_int_equal(cmd.n_lessons, 2);
    assert_string_equal(cmd.lessons[1], "b.yaml");
    assert_int_equal(parse(&cmd, "--list", NULL), STATUS_OK);
    assert_int_equal(cmd.mode->option, CLI_LIST);
    assert_int_equal(cmd.n_lessons, 0);
    // Values, with both spellings and both forms.
    assert_int_equal(parse(&cmd, "--colour=never", "--digits", "3", "--format=json", "--quiz-seed", "0", "--quiz",
                           "--format", "text", "a.yaml", NULL),
                     STATUS_OK);
    assert_int_equal(cmd.mode->option, CLI_QUIZ);
    assert_int_equal(cmd.opts.digits, 3);
    assert_int_equal(cmd.opts.format, OUTPUT_TEXT);  // the last one given
    assert_false(cmd.terminal_colour);
    assert_true(cmd.quiz_seed == 0);
    // --help and --version leave nothing to do.
    assert_int_equal(parse(&cmd, "--version", "--bogus", NULL), STATUS_OK);
    assert_null(cmd.mode);
}

// Issue 33, finding 12: what --diff and --quiz used to ignore without a word.
static void test_a_mode_refuses_what_it_does_not_take(void **state) {
    (void)state;
    Command cmd;
    assert_int_equal(parse(&cmd, "--diff", "--save", "out", "a.yaml", "b.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--diff", "--quiz", "a.yaml", "b.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--diff", "--format", "html", "a.yaml", "b.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--quiz", "--save", "out", "a.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--quiz", "--format", "html", "a.yaml", NULL), STATUS_USAGE_ERROR);
    // What each of them does take.
    assert_int_equal(parse(&cmd, "--diff", "--format", "text", "--digits", "2", "--color", "never", "--threads", "1",
                           "a.yaml", "b.yaml", NULL),
                     STATUS_OK);
    assert_int_equal(parse(&cmd, "--quiz", "--width", "60", "--quiz-seed", "4", "a.yaml", NULL), STATUS_OK);
    // An option without the one it needs, lessons too many or too few.
    assert_int_equal(parse(&cmd, "--golden", "g.txt", "a.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--golden", "g.txt", "--check", "a.yaml", NULL), STATUS_OK);
    assert_int_equal(parse(&cmd, "a.yaml", "b.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--diff", "a.yaml", "b.yaml", "c.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--check", NULL), STATUS_USAGE_ERROR);
    // How many lessons each mode takes: --list none (the course) or one, --watch and --lint
    // one, --diff one or two (cmd_diff names the second one missing).
    assert_int_equal(parse(&cmd, "--list", NULL), STATUS_OK);
    assert_int_equal(parse(&cmd, "--list", "a.yaml", NULL), STATUS_OK);
    assert_int_equal(parse(&cmd, "--list", "a.yaml", "b.yaml", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--watch", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--watch", "a.yaml", NULL), STATUS_OK);
    assert_int_equal(parse(&cmd, "--lint", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--lint", "a.yaml", NULL), STATUS_OK);
    assert_int_equal(parse(&cmd, "--diff", NULL), STATUS_USAGE_ERROR);
    assert_int_equal(parse(&cmd, "--diff", "a.yaml", NULL), STATUS_OK);
}

// Fill the stack below the caller with `byte`, so that a handler called next finds it there
// in every local it reads before it writes: a fresh stack would hide such a read with zeros.
// Deeper than a handler's frame: --watch keeps a Diag of some 70 KiB in its own.
static __attribute__((noinline)) void fill_stack(unsigned char byte) {
    volatile unsigned char junk[1 << 18];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = byte;
}

typedef struct Outcome {
    int status;
    char out[4096], err[4096];  // the start of what it printed on stdout and stderr
} Outcome;

static void read_back(FILE *f, char *text, size_t size) {
    rewind(f);
    size_t n = fread(text, 1, size - 1, f);
    text[n] = '\0';
    fclose(f);
}

// Run the handler the command line argv asks for (stdin empty) over a stack filled with
// `byte`.
static void run_command(int argc, char **argv, unsigned char byte, Outcome *o) {
    Command cmd;
    assert_int_equal(cli_parse(argc, argv, modes, modes_count, &cmd), STATUS_OK);
    FILE *out = tmpfile(), *err = tmpfile(), *in = fopen("/dev/null", "r");
    assert_non_null(out);
    assert_non_null(err);
    assert_non_null(in);
    fflush(stdout);
    fflush(stderr);
    int saved[3] = {dup(STDIN_FILENO), dup(STDOUT_FILENO), dup(STDERR_FILENO)};
    dup2(fileno(in), STDIN_FILENO);
    dup2(fileno(out), STDOUT_FILENO);
    dup2(fileno(err), STDERR_FILENO);
    fill_stack(byte);
    o->status = cmd.mode->run(&cmd);
    fflush(stdout);
    fflush(stderr);
    clearerr(stdin);
    for (int fd = 0; fd < 3; fd++) {
        dup2(saved[fd], fd);
        close(saved[fd]);
    }
    fclose(in);
    read_back(out, o->out, sizeof(o->out));
    read_back(err, o->err, sizeof(o->err));
}

static void run_handler(const char *option, const char *lesson, unsigned char byte, Outcome *o) {
    char *argv[] = {"tracer", (char *)option, (char *)lesson};
    run_command(3, argv, byte, o);
}

// A handler says the same whatever its stack held before: each local is set before it is
// read. --list of lesson 03 lists its 4 givens and 9 stages; the broken lesson stops at its
// unknown name.
static void test_handlers_do_not_read_the_stack_unset(void **state) {
    (void)state;
    const struct {
        const char *option, *lesson;
        int status;
        const char *says;
    } runs[] = {
        {"--list", "good", STATUS_OK, "x "},
        {"--list", "broken", STATUS_LESSON_ERROR, "error: unknown name 'w'"},
        {"--quiz", "good", -1, NULL},
        {"--quiz", "broken", STATUS_LESSON_ERROR, "error: unknown name 'w'"},
    };
    for (size_t r = 0; r < ARRAY_LEN(runs); r++) {
        const char *lesson = runs[r].lesson[0] == 'g' ? good_lesson : broken_lesson;
        static Outcome zeros, junk;
        run_handler(runs[r].option, lesson, 0x00, &zeros);
        run_handler(runs[r].option, lesson, 0xA5, &junk);
        if (runs[r].status >= 0)
            assert_int_equal(zeros.status, runs[r].status);
        if (runs[r].says)
            assert_non_null(strstr(runs[r].status ? zeros.err : zeros.out, runs[r].says));
        if (junk.status != zeros.status || strcmp(junk.out, zeros.out) || strcmp(junk.err, zeros.err))
            fail_msg("%s %s: status %d, then %d over a filled stack; stdout:\n%s\nthen:\n%s\nstderr:\n%s\nthen:\n%s",
                     runs[r].option, lesson, zeros.status, junk.status, zeros.out, junk.out, zeros.err, junk.err);
    }
    // lesson 03: 4 givens and 9 stages, one line each
    Outcome list;
    run_handler("--list", good_lesson, 0x00, &list);
    size_t lines = 0;
    for (const char *c = list.out; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 13);
}

// A SIGINT of the test's own, caught and dropped, in case one is delivered outside the watch.
static void ignore_interrupt(int signal_number) {
    (void)signal_number;
}

// --watch blocks SIGINT alone while it checks whether to stop, and unblocks it alone after the
// wait, over a stack filled with 0xFF: a signal its caller blocks (SIGUSR1) stays blocked. A
// Ctrl-C made pending before the watch, with SIGINT blocked so that the trace cannot see it,
// is delivered in the first wait and ends the watch well. (The watch remembers that it was
// stopped: this is the only --watch of the program.)
static void test_watch_keeps_the_signals_blocked(void **state) {
    (void)state;
    struct sigaction own = {.sa_handler = ignore_interrupt}, before_action;
    sigemptyset(&own.sa_mask);
    assert_int_equal(sigaction(SIGINT, &own, &before_action), 0);
    sigset_t added, before, given, after, pending;
    sigemptyset(&added);
    sigaddset(&added, SIGUSR1);
    sigaddset(&added, SIGINT);
    assert_int_equal(sigprocmask(SIG_BLOCK, &added, &before), 0);
    assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &given), 0);  // the mask the watch is given
    assert_int_equal(raise(SIGINT), 0);
    static Outcome o;
    run_handler("--watch", good_lesson, 0xFF, &o);
    assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &after), 0);
    assert_int_equal(sigpending(&pending), 0);
    assert_int_equal(sigprocmask(SIG_SETMASK, &before, NULL), 0);
    assert_int_equal(sigaction(SIGINT, &before_action, NULL), 0);
    assert_int_equal(o.status, STATUS_OK);
    assert_non_null(strstr(o.err, "tracer: watching "));
    assert_false(sigismember(&pending, SIGINT));  // the Ctrl-C ended the watch
    assert_true(sigismember(&after, SIGUSR1));
    for (int s = 1; s < SIGRTMIN; s++)
        if (s != SIGINT && sigismember(&after, s) != sigismember(&given, s))
            fail_msg("signal %d (%s): blocked %d before --watch, %d after", s, strsignal(s), sigismember(&given, s),
                     sigismember(&after, s));
}

// --update-golden with each allocation failing in turn: every run short of memory says so and
// fails with status 2, leaving no golden file; the run with none failing writes it.
static void test_update_golden_short_of_memory(void **state) {
    (void)state;
    char golden[] = "/tmp/test_cli_golden_XXXXXX";
    int fd = mkstemp(golden);
    assert_true(fd >= 0);
    close(fd);
    char *argv[] = {"tracer", "--update-golden", "--golden", golden, (char *)good_lesson};
    static Outcome o;
    assert_int_equal(remove(golden), 0);
    util_fail_allocation(0);
    run_command(5, argv, 0, &o);
    size_t made = util_fail_allocation(0);
    assert_int_equal(o.status, STATUS_OK);
    assert_int_equal(remove(golden), 0);  // written
    assert_true(made > 2);
    for (size_t n = 1; n <= made; n++) {
        util_fail_allocation(n);
        run_command(5, argv, 0, &o);
        util_fail_allocation(0);
        if (o.status != STATUS_USAGE_ERROR || !strstr(o.err, "out of memory"))
            fail_msg("allocation %zu of %zu failing: status %d, stderr:\n%s", n, made, o.status, o.err);
        if (remove(golden) == 0)
            fail_msg("allocation %zu of %zu failing: the golden file was written", n, made);
    }
}

// A file holding `text`, for a container's memory limit; its path into path (a template).
static void limit_file(char *path, const char *text) {
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

// The memory a run may use: the lowest of the machine's and its container's limits, counted in
// bytes (8 GiB = 8589934592). "max" and 0 set no limit; nor does a file that is not there.
static void test_memory_within_a_container(void **state) {
    (void)state;
    char one_mib[] = "/tmp/tracer-limit-XXXXXX", two_mib[] = "/tmp/tracer-limit-XXXXXX",
         sixteen_gib[] = "/tmp/tracer-limit-XXXXXX", max[] = "/tmp/tracer-limit-XXXXXX",
         zero[] = "/tmp/tracer-limit-XXXXXX";
    limit_file(one_mib, "1048576\n");
    limit_file(two_mib, "2097152\n");
    limit_file(sixteen_gib, "17179869184\n");
    limit_file(max, "max\n");
    limit_file(zero, "0\n");
    const double machine = 8589934592.0;
    bool container = true;
    assert_true(cli_memory_within(machine, NULL, 0, &container) == machine);
    assert_false(container);
    const char *no_limit[] = {max, zero, "/nonexistent/memory.max"};
    assert_true(cli_memory_within(machine, no_limit, 3, &container) == machine);
    assert_false(container);
    const char *lower[] = {one_mib};
    assert_true(cli_memory_within(machine, lower, 1, &container) == 1048576.0);
    assert_true(container);
    const char *higher[] = {sixteen_gib};
    assert_true(cli_memory_within(machine, higher, 1, &container) == machine);
    assert_false(container);
    // the machine's memory unknown (0): any limit is taken
    assert_true(cli_memory_within(0, higher, 1, &container) == 17179869184.0);
    assert_true(container);
    // the lowest of several, in either order
    const char *both[] = {two_mib, one_mib}, *both_back[] = {one_mib, two_mib};
    assert_true(cli_memory_within(machine, both, 2, &container) == 1048576.0);
    assert_true(container);
    assert_true(cli_memory_within(machine, both_back, 2, &container) == 1048576.0);
    assert_true(container);
    const char *files[] = {one_mib, two_mib, sixteen_gib, max, zero};
    for (size_t i = 0; i < ARRAY_LEN(files); i++)
        unlink(files[i]);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_cli GOOD_LESSON BROKEN_LESSON\n");
        return 2;
    }
    good_lesson = argv[1];
    broken_lesson = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_exclude_each_other_both_ways),
        cmocka_unit_test(test_plain_trace_refuses_only_through_a_mode),
        cmocka_unit_test(test_help_shows_every_option),
        cmocka_unit_test(test_the_options_choose_the_mode),
        cmocka_unit_test(test_a_mode_refuses_what_it_does_not_take),
        cmocka_unit_test(test_handlers_do_not_read_the_stack_unset),
        cmocka_unit_test(test_update_golden_short_of_memory),
        cmocka_unit_test(test_memory_within_a_container),
        cmocka_unit_test(test_watch_keeps_the_signals_blocked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
