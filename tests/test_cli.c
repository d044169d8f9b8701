// Unit tests of the command line's tables (cli.h): modes that exclude each other do so both
// ways, the plain trace never has to refuse an option without a mode to name, the help shows
// the table, and reading argv chooses the mode the options ask for and refuses what it does
// not take. The messages themselves are checked byte for byte under tests/errors.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "modes.h"

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
        // The first line of its help, at column 23, on the same line or the next.
        const char *help_at = at + strlen(line);
        help_at += strspn(help_at, " \n");
        size_t first = strcspn(def->help, "\n");
        assert_memory_equal(help_at, def->help, first);
        const char *line_start = help_at;
        while (line_start[-1] != '\n')
            line_start--;
        assert_int_equal(help_at - line_start, 23);
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
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_exclude_each_other_both_ways),
        cmocka_unit_test(test_plain_trace_refuses_only_through_a_mode),
        cmocka_unit_test(test_help_shows_every_option),
        cmocka_unit_test(test_the_options_choose_the_mode),
        cmocka_unit_test(test_a_mode_refuses_what_it_does_not_take),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
