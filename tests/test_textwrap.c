// Unit tests of text layout by display columns: every expected text is laid out here by hand,
// counting columns (猫 takes two, a colour escape none).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "textwrap.h"

static char text[4096];

static const char *line(const char *s, size_t indent, size_t hang, size_t width) {
    StrBuf out;
    strbuf_init(&out);
    textwrap_line(&out, s, strlen(s), indent, hang, width);
    assert_false(out.failed);
    snprintf(text, sizeof(text), "%s", strbuf_str(&out));
    strbuf_finish(&out);
    return text;
}

static const char *paragraph(const char *s, size_t indent, size_t width) {
    StrBuf out;
    strbuf_init(&out);
    textwrap_paragraph(&out, s, indent, width);
    assert_false(out.failed);
    snprintf(text, sizeof(text), "%s", strbuf_str(&out));
    strbuf_finish(&out);
    return text;
}

static void test_a_line_that_fits_stays_whole(void **state) {
    (void)state;
    assert_string_equal(line("note: rows sum to 1", 4, 10, 23), "    note: rows sum to 1\n");
    assert_string_equal(line("", 4, 4, 40), "\n");
    assert_string_equal(line("trailing   ", 2, 2, 40), "  trailing\n");
}

static void test_wrap_at_spaces_with_a_hanging_indent(void **state) {
    (void)state;
    // Width 26 from indent 4 leaves 22 columns: "note: each row of the" is 21, and " left"
    // would make 26. From column 10 only 16 would be left, so a line keeps the fewest, 20:
    // "left against each" is 17, " column" would make 24.
    assert_string_equal(line("note: each row of the left against each column", 4, 10, 26),
                        "    note: each row of the\n"
                        "          left against each\n"
                        "          column\n");
    // "document: disagrees: at [1, 0]" is exactly 30 columns, so it fills a line of 30; the
    // rest (25 columns) fits the 28 left after a hang of 2.
    assert_string_equal(line("document: disagrees: at [1, 0] the exact value is 0.3900", 0, 2, 30),
                        "document: disagrees: at [1, 0]\n"
                        "  the exact value is 0.3900\n");
    // One column less and "0]" moves down; "0] the exact value is 0.3900" is 28 columns, one
    // more than the 27 after the hang, so 0.3900 goes on a third line.
    assert_string_equal(line("document: disagrees: at [1, 0] the exact value is 0.3900", 0, 2, 29),
                        "document: disagrees: at [1,\n"
                        "  0] the exact value is\n"
                        "  0.3900\n");
}

static void test_a_word_longer_than_a_line_is_cut(void **state) {
    (void)state;
    // 25 letters in 20 columns (the fewest a line gets): 20, then the other 5.
    assert_string_equal(line("abcdefghijklmnopqrstuvwxy", 0, 0, 20), "abcdefghijklmnopqrst\nuvwxy\n");
}

static void test_wide_characters_take_two_columns(void **state) {
    (void)state;
    // "猫猫猫猫猫 sat on the mat" is 10 + 15 = 25 columns: in 20, "猫猫猫猫猫 sat on" (17) fits,
    // " the" would make 21.
    assert_string_equal(line("猫猫猫猫猫 sat on the mat", 0, 0, 20), "猫猫猫猫猫 sat on\nthe mat\n");
    // Eleven cats are 22 columns: ten fit in 20, never half a cat.
    assert_string_equal(line("猫猫猫猫猫猫猫猫猫猫猫", 0, 0, 20), "猫猫猫猫猫猫猫猫猫猫\n猫\n");
    // 🐈 (U+1F408) is four bytes of UTF-8 and two columns: the same as 猫.
    assert_string_equal(line("🐈🐈🐈🐈🐈🐈🐈🐈🐈🐈🐈", 0, 0, 20), "🐈🐈🐈🐈🐈🐈🐈🐈🐈🐈\n🐈\n");
}

static void test_colour_escapes_take_no_columns(void **state) {
    (void)state;
    // 20 visible columns exactly, with two escapes: one line.
    assert_string_equal(line("\033[32mdocument: agrees\033[0m ok", 0, 2, 20),
                        "\033[32mdocument: agrees\033[0m ok\n");
}

static void test_narration_lines_are_joined_into_paragraphs(void **state) {
    (void)state;
    // Two lines of one paragraph make one line of 29 columns in 40; the blank line and the
    // list item stay.
    const char *say = "Each token asks\nits question.\n\n- a list item\n";
    assert_string_equal(paragraph(say, 4, 40), "    Each token asks its question.\n\n    - a list item\n");
    // A number written in for a placeholder left the author's line short: the next line's
    // words move up ("0.9871." takes the room of "{min(w):.4f}." as written).
    say = "the smallest is 0.9871. Nothing in the weights was\nset by hand; the data made it.";
    assert_string_equal(paragraph(say, 0, 40),
                        "the smallest is 0.9871. Nothing in the\n"
                        "weights was set by hand; the data made\n"
                        "it.\n");
}

static void test_numbered_items_and_a_last_line_without_newline(void **state) {
    (void)state;
    // "1." and "2)" start items of their own after "Two steps:", kept on their lines; "3 sat"
    // is no item, and prose after a list starts a line of its own; the last line has no
    // newline of its own and gets one.
    const char *say = "Two steps:\n1. scale\n2) shift\n3 sat";
    assert_string_equal(paragraph(say, 2, 40), "  Two steps:\n  1. scale\n  2) shift\n  3 sat\n");
    // A number at the start of a line that goes on a sentence is no item: "variance 1." ends
    // one sentence, "A dot product" starts the next.
    say = "entries of variance\n1. A dot product of 64 pairs";
    assert_string_equal(paragraph(say, 0, 80), "entries of variance 1. A dot product of 64 pairs\n");
}

static void test_items_from_a_windows_editor(void **state) {
    (void)state;
    // CRLF line ends and trailing spaces are not text. A question announces a list: "*" items
    // follow it, each continued by the lines set in under it.
    const char *say = "Which one?  \r\n* the first,  \r\n  said twice\r\n* the second\r\n";
    assert_string_equal(paragraph(say, 0, 40), "Which one?\n* the first, said twice\n* the second\n");
    // No item: a marker with nothing after it, four digits, a number without its point.
    say = "a sum:\n-\n1234. is a year\n12 apples";
    assert_string_equal(paragraph(say, 0, 60), "a sum: - 1234. is a year 12 apples\n");
}

static void test_narration_that_does_not_fit_is_reflowed(void **state) {
    (void)state;
    // 44 columns of prose in 22 (indent 2 in 24): wrapped at spaces; the list item starts a
    // line of its own.
    const char *say = "Softmax turns the scores into\nprobabilities.\n- a list item\n";
    assert_string_equal(paragraph(say, 2, 24),
                        "  Softmax turns the\n"
                        "  scores into\n"
                        "  probabilities.\n"
                        "  - a list item\n");
}

static void test_list_items_wrap_under_their_text(void **state) {
    (void)state;
    // An item set in by 2, its text at column 5: its continuation line (set in further) is
    // joined to it, and its wrapped lines start under "prefill".
    const char *say = "A cache:\n\n  1. prefill: run the prompt and\n     save K and V;\n  2. decode.\n";
    assert_string_equal(paragraph(say, 0, 30),
                        "A cache:\n"
                        "\n"
                        "  1. prefill: run the prompt\n"
                        "     and save K and V;\n"
                        "  2. decode.\n");
    // A bullet's text starts after its marker and the spaces after it.
    say = "-   one two three four five six";
    assert_string_equal(paragraph(say, 0, 20), "-   one two three\n    four five six\n");
}

static void test_formulas_and_tables_stay_as_written(void **state) {
    (void)state;
    // Lines set in by spaces (a formula) and table rows are not joined, however short; prose
    // after them starts a line of its own.
    const char *say = "Each sublayer adds:\n\n    x = x + f(x)\n    x = x + g(x)\n| a | b |\n| 1 | 2 |\nThen it goes on.";
    assert_string_equal(paragraph(say, 2, 60),
                        "  Each sublayer adds:\n"
                        "\n"
                        "      x = x + f(x)\n"
                        "      x = x + g(x)\n"
                        "  | a | b |\n"
                        "  | 1 | 2 |\n"
                        "  Then it goes on.\n");
}

static void test_a_lone_dash_or_equals_stays_with_the_word_before(void **state) {
    (void)state;
    // "they differ by PE[4]" is 20 columns, the width: the break would fall before "-", which
    // would start the next line like a list item; "PE[4]" goes down with it instead.
    assert_string_equal(paragraph("they differ by PE[4] - PE[0] here", 0, 20),
                        "they differ by\n"
                        "PE[4] - PE[0] here\n");
    // The same for '=', which would read as a heading's underline: "with d/2 pairs (64 for d"
    // is 24 columns, and "d" goes down with "= 128".
    assert_string_equal(paragraph("with d/2 pairs (64 for d = 128) each", 0, 24),
                        "with d/2 pairs (64 for\n"
                        "d = 128) each\n");
    // "-1" and "=>" are words of their own, not lone marks: the break falls before them.
    assert_string_equal(paragraph("they differ by PE[4] -1 here", 0, 20), "they differ by PE[4]\n-1 here\n");
    assert_string_equal(paragraph("they differ by PE[4] => here", 0, 20), "they differ by PE[4]\n=> here\n");
    // With no earlier space to break at, the mark starts the line rather than a word being cut.
    assert_string_equal(paragraph("abcdefghijklmnopqrst - uv", 0, 20), "abcdefghijklmnopqrst\n- uv\n");
    // Shown work keeps its "= value" continuation lines (textwrap_line).
    assert_string_equal(line("they differ by PE[4] = PE[0] here", 0, 2, 20), "they differ by PE[4]\n  = PE[0] here\n");
}

static void test_blocks_side_by_side(void **state) {
    (void)state;
    StrBuf blocks[2], out;
    strbuf_init(&blocks[0]);
    strbuf_init(&blocks[1]);
    strbuf_init(&out);
    strbuf_puts(&blocks[0], "[猫]\nab\n");     // 4 columns wide
    strbuf_puts(&blocks[1], "x\ny\nz\n");
    assert_int_equal(textwrap_block_width(strbuf_str(&blocks[0])), 4);
    assert_int_equal(textwrap_block_width("ab\n猫猫猫"), 6);  // the widest line may end the text
    textwrap_side_by_side(&out, blocks, 2, 2);
    // Each line of the first block padded to 4 columns, then the 4-column gap; no trailing
    // spaces where the first block has run out.
    assert_string_equal(strbuf_str(&out), "  [猫]    x\n  ab      y\n          z\n");
    strbuf_finish(&blocks[0]);
    strbuf_finish(&blocks[1]);
    strbuf_finish(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_line_that_fits_stays_whole),
        cmocka_unit_test(test_wrap_at_spaces_with_a_hanging_indent),
        cmocka_unit_test(test_a_word_longer_than_a_line_is_cut),
        cmocka_unit_test(test_wide_characters_take_two_columns),
        cmocka_unit_test(test_colour_escapes_take_no_columns),
        cmocka_unit_test(test_narration_lines_are_joined_into_paragraphs),
        cmocka_unit_test(test_numbered_items_and_a_last_line_without_newline),
        cmocka_unit_test(test_items_from_a_windows_editor),
        cmocka_unit_test(test_narration_that_does_not_fit_is_reflowed),
        cmocka_unit_test(test_list_items_wrap_under_their_text),
        cmocka_unit_test(test_formulas_and_tables_stay_as_written),
        cmocka_unit_test(test_a_lone_dash_or_equals_stays_with_the_word_before),
        cmocka_unit_test(test_blocks_side_by_side),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
