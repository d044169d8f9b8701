// Tests of diag: an error filled once and printed as a compiler prints it, in colour or not,
// with the quoted line made safe and cut to a window around the caret, and the suggestions of
// diag_closest. Each expected text is written out by hand from the format in diag.h.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "diag.h"

// What print (diag_print or diag_print_warnings) writes, as a string (at most 4 KiB).
static const char *printed_by(void (*print)(const Diag *, FILE *, bool), const Diag *d, bool colour) {
    static char text[4096];
    FILE *f = tmpfile();
    assert_non_null(f);
    print(d, f, colour);
    rewind(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static const char *printed(const Diag *d, bool colour) {
    return printed_by(diag_print, d, colour);
}

static const char *printed_warnings(const Diag *d, bool colour) {
    return printed_by(diag_print_warnings, d, colour);
}

static const Source SOURCE = {"t.yaml", "x: 1\ny: a @ b\n", 14};

// Line 2, column 4, five columns wide: "a @ b" underlined after the three columns of "y: ".
static void test_print_in_colour(void **state) {
    (void)state;
    Diag d;
    diag_init(&d);
    assert_int_equal(diag_error(&d, STATUS_LESSON_ERROR, &SOURCE, 2, 4, 5, "bad %s", "product"), STATUS_LESSON_ERROR);
    diag_hint(&d, "try %d", 1);
    assert_string_equal(printed(&d, false), "t.yaml:2:4: error: bad product\n"
                                            " 2 | y: a @ b\n"
                                            "   |    ^~~~~\n"
                                            "hint: try 1\n");
    assert_string_equal(printed(&d, true), "\033[1mt.yaml:2:4: \033[0m\033[1;31merror:\033[0m \033[1mbad product\033[0m\n"
                                           " 2 | y: a @ b\n"
                                           "   |    \033[1;32m^~~~~\033[0m\n"
                                           "\033[1;36mhint:\033[0m try 1\n");
}

// No file: the program's name stands where the place would be. The first error wins.
static void test_without_a_place(void **state) {
    (void)state;
    Diag d;
    diag_init(&d);
    diag_error(&d, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read");
    diag_error(&d, STATUS_LESSON_ERROR, &SOURCE, 1, 1, 1, "second");
    assert_int_equal(d.status, STATUS_USAGE_ERROR);
    assert_string_equal(printed(&d, false), "tracer: error: cannot read\n");
    assert_string_equal(printed(&d, true), "\033[1mtracer: \033[0m\033[1;31merror:\033[0m \033[1mcannot read\033[0m\n");
}

// A line past the end of the file quotes nothing; column 0 means the line's start.
static void test_places_outside_the_text(void **state) {
    (void)state;
    Diag d;
    diag_init(&d);
    diag_error(&d, STATUS_LESSON_ERROR, &SOURCE, 9, 3, 1, "late");
    assert_string_equal(printed(&d, false), "t.yaml:9:3: error: late\n");
    diag_init(&d);
    diag_error(&d, STATUS_LESSON_ERROR, &SOURCE, 1, 0, 1, "at the start");
    assert_int_equal(d.col, 1);
    Source nameless = {NULL, "x: 1\n", 5};
    diag_init(&d);
    diag_error(&d, STATUS_LESSON_ERROR, &nameless, 1, 1, 1, "no path");
    assert_string_equal(d.path, "");
}

// Bytes that are not UTF-8 (an overlong 0xC0 0x80, a lone 0xFF, a sequence cut by the end of
// the file) are quoted as one '?' each, so the caret keeps its column.
static void test_invalid_utf8_is_quoted_safely(void **state) {
    (void)state;
    static const char text[] = "a\xC0\x80 \xFF b \xE7\x8C";
    Source src = {"t.yaml", text, sizeof(text) - 1};
    Diag d;
    diag_init(&d);
    diag_error(&d, STATUS_LESSON_ERROR, &src, 1, 7, 1, "here");
    assert_string_equal(d.source_line, "a?? ? b ??");
}

// A line longer than the quote is cut to a window that keeps 60 characters before a caret at
// column 200: "..." then columns 141 to 300, then "...".
static void test_long_line_is_cut_around_the_caret(void **state) {
    (void)state;
    char text[401];
    for (size_t i = 0; i < 400; i++)
        text[i] = (char)('a' + i % 26);
    text[400] = '\0';
    Source src = {"t.yaml", text, 400};
    Diag d;
    diag_init(&d);
    diag_error(&d, STATUS_LESSON_ERROR, &src, 1, 200, 1, "far");
    assert_int_equal(strlen(d.source_line), 3 + 160 + 3);
    assert_memory_equal(d.source_line, "...", 3);
    assert_int_equal(d.source_line[3], text[140]);
    assert_int_equal(d.source_col, 200 - 140 + 3);
    assert_memory_equal(d.source_line + 163, "...", 3);
}

// Suggestions: a case difference costs less than a letter; names longer than 64 characters
// are never compared, and nothing is suggested when every candidate is far.
static void test_closest(void **state) {
    (void)state;
    const char *names[] = {"W_K", "W_Q", "scores"};
    assert_string_equal(diag_closest("w_q", names, 3), "W_Q");
    assert_null(diag_closest("totally_different", names, 3));
    char long_name[71];
    memset(long_name, 'a', 70);
    long_name[70] = '\0';
    const char *long_names[] = {long_name};
    assert_null(diag_closest(long_name, long_names, 1));
    assert_null(diag_closest("aaaa", long_names, 1));
}

// A warning names its place (column 0 reads as 1, line 0 as the file alone); past
// DIAG_MAX_WARNINGS only a count is kept, and printed as one last line.
static void test_warnings(void **state) {
    (void)state;
    Diag d;
    diag_init(&d);
    diag_warning(&d, "t.yaml", 3, 0, "w%d", 1);
    diag_warning(&d, "t.yaml", 0, 7, "whole file");
    assert_string_equal(printed_warnings(&d, false), "t.yaml:3:1: warning: w1\n"
                                                     "t.yaml: warning: whole file\n");
    assert_string_equal(printed_warnings(&d, true), "\033[1mt.yaml:3:1:\033[0m \033[1;35mwarning:\033[0m w1\n"
                                                    "\033[1mt.yaml:\033[0m \033[1;35mwarning:\033[0m whole file\n");
    for (int i = 0; i < DIAG_MAX_WARNINGS; i++)
        diag_warning(&d, "t.yaml", 1, 1, "more");
    assert_int_equal(d.n_warnings, DIAG_MAX_WARNINGS);
    assert_int_equal(d.warnings_dropped, 2);
    const char *text = printed_warnings(&d, false);
    assert_string_equal(text + strlen(text) - strlen("tracer: warning: 2 more warnings not shown\n"),
                        "tracer: warning: 2 more warnings not shown\n");
    // Appended to a full diag, the warnings of a part are counted, with those it dropped itself.
    Diag all;
    diag_init(&all);
    assert_true(diag_append(&all, &d));
    assert_int_equal(all.n_warnings, DIAG_MAX_WARNINGS);
    assert_int_equal(all.warnings_dropped, 2);
    assert_true(diag_append(&all, &d));
    assert_int_equal(all.warnings_dropped, 2 + DIAG_MAX_WARNINGS + 2);
    assert_int_equal(diag_count(&all), 0);
}

// Running out of memory is a usage error with no place.
static void test_out_of_memory(void **state) {
    (void)state;
    Diag d;
    diag_init(&d);
    assert_false(diag_no_memory(&d));
    assert_int_equal(d.status, STATUS_USAGE_ERROR);
    assert_string_equal(printed(&d, false),
                        "tracer: error: out of memory (the tracer could not allocate what this lesson needs)\n");
}

// Errors of parts add up to DIAG_MAX_ERRORS; one more is only marked as dropped, and the
// printout ends by saying the lesson was not checked to its end.
static void test_append_errors_up_to_the_limit(void **state) {
    (void)state;
    Diag all;
    diag_init(&all);
    for (int i = 1; i <= DIAG_MAX_ERRORS; i++) {
        Diag part;
        diag_init(&part);
        diag_error(&part, STATUS_LESSON_ERROR, &SOURCE, 1, 1, 1, "error %d", i);
        assert_int_equal(diag_append(&all, &part), i < DIAG_MAX_ERRORS);
    }
    assert_int_equal(diag_count(&all), DIAG_MAX_ERRORS);
    assert_false(all.more_dropped);
    Diag part;
    diag_init(&part);
    diag_error(&part, STATUS_LESSON_ERROR, &SOURCE, 2, 1, 1, "one too many");
    assert_false(diag_append(&all, &part));
    assert_true(all.more_dropped);
    assert_int_equal(diag_count(&all), DIAG_MAX_ERRORS);
    const char *text = printed(&all, false);
    assert_null(strstr(text, "one too many"));
    assert_string_equal(strrchr(text, '\n') - strlen("t.yaml: stopped after 20 errors; fix these and run it again"),
                        "t.yaml: stopped after 20 errors; fix these and run it again\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_in_colour),
        cmocka_unit_test(test_without_a_place),
        cmocka_unit_test(test_places_outside_the_text),
        cmocka_unit_test(test_invalid_utf8_is_quoted_safely),
        cmocka_unit_test(test_long_line_is_cut_around_the_caret),
        cmocka_unit_test(test_closest),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_append_errors_up_to_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
