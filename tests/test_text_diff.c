// Tests of text_diff_unified, the diff `tracer --check` prints: equal texts, a changed line with
// its hunk opened at the stage header above it, removals and additions at the edges, two
// hunks, and memory running out; and text_diff_stage_summary, the list of stages that differ.
// Every expected diff is worked out by hand in the comment above it, the way diff -u numbers
// its hunks.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "text_diff.h"

static void expect_diff(const char *a, const char *b, const char *want) {
    StrBuf out;
    strbuf_init(&out);
    assert_false(text_diff_unified(a, b, "A", "B", false, &out));
    assert_false(out.failed);
    assert_string_equal(strbuf_str(&out), want);
    strbuf_finish(&out);
}

static void test_equal(void **state) {
    (void)state;
    StrBuf out;
    strbuf_init(&out);
    assert_true(text_diff_unified("same\ntext\n", "same\ntext\n", "A", "B", false, &out));
    assert_int_equal(out.len, 0);
    strbuf_finish(&out);
}

// Line 5 of 7 changes. Lines 1-4 are the same, so the hunk would start 3 lines before the
// change (line 2), which is the header "Given x  [2]" anyway: lines 2 to 7 on both sides.
static void test_one_line(void **state) {
    (void)state;
    expect_diff("title\nGiven x  [2]\n  a\n  b\n  c\n  d\n  e\n", "title\nGiven x  [2]\n  a\n  b\n  C\n  d\n  e\n",
                "--- A\n+++ B\n@@ -2,6 +2,6 @@\n Given x  [2]\n   a\n   b\n-  c\n+  C\n   d\n   e\n");
}

// The stage header is 7 lines above the change, more than the usual 3 lines of context: the
// first hunk still opens at it, so a reader sees which stage changed (lines 1 to 9).
static void test_hunk_opens_at_the_stage(void **state) {
    (void)state;
    const char *a = "Step 1  q = x\nl1\nl2\nl3\nl4\nl5\nl6\nold\ntail\n";
    const char *b = "Step 1  q = x\nl1\nl2\nl3\nl4\nl5\nl6\nnew\ntail\n";
    expect_diff(a, b, "--- A\n+++ B\n@@ -1,9 +1,9 @@\n Step 1  q = x\n l1\n l2\n l3\n l4\n l5\n l6\n-old\n+new\n tail\n");
}

// y is removed from x y z: lines 1-3 of A are lines 1-2 of B. A last line without a newline
// counts as a line.
static void test_removal(void **state) {
    (void)state;
    expect_diff("x\ny\nz", "x\nz", "--- A\n+++ B\n@@ -1,3 +1,2 @@\n x\n-y\n z\n");
}

// x y y against y x: the longest common part is one line, the first y. After it, the y left
// of A and the x of B are a removal and an addition, the removal first as diff -u prints it.
static void test_removal_before_addition_after_a_common_line(void **state) {
    (void)state;
    expect_diff("Step 1  p\nx\ny\ny\n", "Step 1  p\ny\nx\n",
                "--- A\n+++ B\n@@ -1,4 +1,3 @@\n Step 1  p\n-x\n y\n-y\n+x\n");
}

// From nothing to one line: diff -u numbers an empty side 0,0.
static void test_from_empty(void **state) {
    (void)state;
    expect_diff("", "x\n", "--- A\n+++ B\n@@ -0,0 +1,1 @@\n+x\n");
}

// Traces of different lengths, one a prefix of the other: the trace stopped before the
// golden file's last line, here an empty one, or went on past it. The common prefix is every
// line of the shorter text and no more (a line past its end must not compare equal to the
// longer text's empty line); the hunk opens at the stage header, two lines up.
static void test_traces_of_different_lengths(void **state) {
    (void)state;
    const char *golden = "Step 1  y = x\n  1\n\n";
    const char *trace = "Step 1  y = x\n  1\n";
    expect_diff(golden, trace, "--- A\n+++ B\n@@ -1,3 +1,2 @@\n Step 1  y = x\n   1\n-\n");
    expect_diff(trace, golden, "--- A\n+++ B\n@@ -1,2 +1,3 @@\n Step 1  y = x\n   1\n+\n");
}

// A stage gone from the end of the trace: the hunk opens at that stage's header in the golden
// file, so it has no line of the trace, and its header says after which line of the trace the
// removal stands, as diff -U0 numbers it: -4,3 +3,0. A stage new at the end of the trace has
// no header in the golden file to open at: its hunk opens at the golden file's last stage.
static void test_hunk_with_no_line_of_one_side(void **state) {
    (void)state;
    const char *two = "Step 1  y\n  1\n\nStep 2  z\n  2\n\n";
    const char *one = "Step 1  y\n  1\n\n";
    expect_diff(two, one, "--- A\n+++ B\n@@ -4,3 +3,0 @@\n-Step 2  z\n-  2\n-\n");
    expect_diff(one, two, "--- A\n+++ B\n@@ -1,3 +1,6 @@\n Step 1  y\n   1\n \n+Step 2  z\n+  2\n+\n");
}

// Changes at lines 2 and 12 with 9 equal lines between (more than twice the context): two
// hunks, lines 1-5 and 9-12 (3 lines of context before the second change, none after).
static void test_two_hunks(void **state) {
    (void)state;
    const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
    const char *b = "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\nTWELVE\n";
    expect_diff(a, b,
                "--- A\n+++ B\n"
                "@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n"
                "@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+TWELVE\n");
}

// In colour, as git colours a diff: bold file names, a cyan hunk header, removed lines red and
// added ones green. A removed line and the added line it pairs with (the i-th removal of a
// block with its i-th addition) have the numbers that differ from the other's highlighted in
// reverse video: 2,048 against 2,049, -3 against -3.5, and the 9 that has no counterpart. The
// second removal has no addition to pair with, so nothing in it is highlighted; in 5-3 the
// minus sign after a digit is not a sign.
static void test_colour(void **state) {
    (void)state;
    StrBuf out;
    strbuf_init(&out);
    assert_false(text_diff_unified("Step 1  y = x\na 1.5 2,048 -3 5-3\nb 7 5-3\nend\n",
                              "Step 1  y = x\na 1.5 2,049 -3.5 5-3 9\nend\n", "A", "B", true, &out));
    assert_string_equal(strbuf_str(&out),
                        "\033[1m--- A\n+++ B\033[0m\n"
                        "\033[36m@@ -1,4 +1,3 @@\033[0m\n"
                        " Step 1  y = x\n"
                        "\033[31m-a 1.5 \033[7m2,048\033[27m \033[7m-3\033[27m 5-3\033[0m\n"
                        "\033[31m-b 7 5-3\033[0m\n"
                        "\033[32m+a 1.5 \033[7m2,049\033[27m \033[7m-3.5\033[27m 5-3 \033[7m9\033[27m\033[0m\n"
                        " end\n");
    strbuf_finish(&out);
}

// A 9 right after a decimal point or a thousands comma belongs to the number as any digit
// does: 0.9, 1,999 and -9.99 are whole numbers, so the unchanged 0.9 and 1,999 stay plain and
// only 0.09 against 0.19 and -9.99 against -9.98 are highlighted.
static void test_numbers_with_nines(void **state) {
    (void)state;
    StrBuf out;
    strbuf_init(&out);
    assert_false(text_diff_unified("Step 1  p\n  0.9 0.09 1,999 -9.99\n", "Step 1  p\n  0.9 0.19 1,999 -9.98\n", "A",
                                   "B", true, &out));
    assert_string_equal(strbuf_str(&out),
                        "\033[1m--- A\n+++ B\033[0m\n"
                        "\033[36m@@ -1,2 +1,2 @@\033[0m\n"
                        " Step 1  p\n"
                        "\033[31m-  0.9 \033[7m0.09\033[27m 1,999 \033[7m-9.99\033[27m\033[0m\n"
                        "\033[32m+  0.9 \033[7m0.19\033[27m 1,999 \033[7m-9.98\033[27m\033[0m\n");
    strbuf_finish(&out);
}

// Numbers in scientific notation, as a lesson with digits: 1 prints them: the part before the
// exponent is a number with its one decimal (3.5, not 3), so 3.5e-01 against 3.4e-01 has 3.5
// highlighted; the exponents -01 and 00 are the same on both lines and stay plain.
static void test_number_before_an_exponent(void **state) {
    (void)state;
    StrBuf out;
    strbuf_init(&out);
    assert_false(text_diff_unified("Step 1  p\n  3.5e-01  1.5e+00\n", "Step 1  p\n  3.4e-01  1.5e+00\n", "A", "B",
                                   true, &out));
    assert_string_equal(strbuf_str(&out),
                        "\033[1m--- A\n+++ B\033[0m\n"
                        "\033[36m@@ -1,2 +1,2 @@\033[0m\n"
                        " Step 1  p\n"
                        "\033[31m-  \033[7m3.5\033[27me-01  1.5e+00\033[0m\n"
                        "\033[32m+  \033[7m3.4\033[27me-01  1.5e+00\033[0m\n");
    strbuf_finish(&out);
}

// A point or a comma belongs to a number only with a digit after it: in 4,n and 2.T the
// number is 4 and 2, so 4 against 5 is highlighted without the comma.
static void test_number_before_a_point_or_comma(void **state) {
    (void)state;
    const char *a = "Step 1  p\n  size 4,n and 2.T\n", *b = "Step 1  p\n  size 5,n and 2.T\n";
    StrBuf out;
    strbuf_init(&out);
    assert_false(text_diff_unified(a, b, "A", "B", true, &out));
    const char *changed = strstr(strbuf_str(&out), "\033[31m-");
    assert_non_null(changed);
    assert_string_equal(changed, "\033[31m-  size \033[7m4\033[27m,n and 2.T\033[0m\n"
                                 "\033[32m+  size \033[7m5\033[27m,n and 2.T\033[0m\n");
    strbuf_finish(&out);
}

// Too many lines differ to align them one by one (6,400 x 6,400 > 40 million cells): the
// whole region is shown removed, then added.
static void test_too_large_to_align(void **state) {
    (void)state;
    size_t n = 6400;
    StrBuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    for (size_t i = 0; i < n; i++) {
        strbuf_printf(&a, "a%zu\n", i);
        strbuf_printf(&b, "b%zu\n", i);
    }
    StrBuf out;
    strbuf_init(&out);
    assert_false(text_diff_unified(strbuf_str(&a), strbuf_str(&b), "A", "B", false, &out));
    const char *text = strbuf_str(&out);
    assert_non_null(strstr(text, "@@ -1,6400 +1,6400 @@\n-a0\n-a1\n"));
    assert_non_null(strstr(text, "\n-a6399\n+b0\n"));
    strbuf_finish(&a);
    strbuf_finish(&b);
    strbuf_finish(&out);
}

// No memory for the line tables (allocations 1 to 4) or the edit list (5): the output is
// marked failed rather than a diff cut short. Without memory for the alignment table (6), the
// differing region is shown whole, which for one changed line is the same diff.
static void test_out_of_memory(void **state) {
    (void)state;
    for (size_t n = 1; n <= 6; n++) {
        StrBuf out;
        strbuf_init(&out);
        util_fail_allocation(n);
        assert_false(text_diff_unified("a\nx\n", "b\nx\n", "A", "B", false, &out));
        util_fail_allocation(0);
        if (n <= 5)
            assert_true(out.failed);
        else
            assert_string_equal(strbuf_str(&out), "--- A\n+++ B\n@@ -1,2 +1,2 @@\n-a\n+b\n x\n");
        strbuf_finish(&out);
    }
}

static void expect_summary(const char *a, const char *b, const char *want) {
    StrBuf out;
    strbuf_init(&out);
    text_diff_stage_summary(a, b, "A", "B", &out);
    assert_false(out.failed);
    assert_string_equal(strbuf_str(&out), want);
    strbuf_finish(&out);
}

// The golden trace A against the lesson's trace B: the opening differs ("intro a" / "intro
// b"), Given x is the same, Step 1 y has one line more, Step 2 z is only in A, Step 3 w only
// in B, and the closing line differs. Keys are single-spaced ("Step 1  y" -> "Step 1 y"); B's
// stages are counted: Step 1 y and Step 3 w of its three changed.
static void test_stage_summary(void **state) {
    (void)state;
    const char *a = "Title\nintro a\nGiven x  (2,)\n  1 2\nStep 1  y = x * 2\n  2 4\n"
                    "Step 2  z = y\n  2 4\nThe end.\n";
    const char *b = "Title\nintro b\nGiven x  (2,)\n  1 2\nStep 1  y = x * 2\n  2 4\n  note\n"
                    "Step 3  w = y\n  2 4\nThe end, changed.\n";
    expect_summary(a, b, "What differs in B from A:\n"
                         "  the title and introduction\n"
                         "  Step 1 y: changed\n"
                         "  Step 3 w: new (not in the golden file)\n"
                         "  Step 2 z: gone (only in the golden file)\n"
                         "  the closing text (outro and document check)\n"
                         "2 of 3 stages changed.\n\n");
    expect_summary(a, a, "");
    // Traces with no stage at all: everything is opening text.
    expect_summary("x\n", "y\n", "What differs in B from A:\n  the title and introduction\n0 of 0 stages changed.\n\n");
}

// No memory for the line tables (allocations 1 to 4) or either trace's stage list (5, 6):
// the output is marked failed, not a summary cut short.
static void test_stage_summary_out_of_memory(void **state) {
    (void)state;
    for (size_t n = 1; n <= 6; n++) {
        StrBuf out;
        strbuf_init(&out);
        util_fail_allocation(n);
        text_diff_stage_summary("Step 1  y\n  1\n", "Step 1  y\n  2\n", "A", "B", &out);
        util_fail_allocation(0);
        assert_true(out.failed);
        strbuf_finish(&out);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal),
        cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_hunk_opens_at_the_stage),
        cmocka_unit_test(test_removal),
        cmocka_unit_test(test_removal_before_addition_after_a_common_line),
        cmocka_unit_test(test_from_empty),
        cmocka_unit_test(test_two_hunks),
        cmocka_unit_test(test_traces_of_different_lengths),
        cmocka_unit_test(test_hunk_with_no_line_of_one_side),
        cmocka_unit_test(test_colour),
        cmocka_unit_test(test_numbers_with_nines),
        cmocka_unit_test(test_number_before_an_exponent),
        cmocka_unit_test(test_number_before_a_point_or_comma),
        cmocka_unit_test(test_too_large_to_align),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_stage_summary),
        cmocka_unit_test(test_stage_summary_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
