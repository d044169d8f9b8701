// Unit tests of the one filter between a file's text and the terminal (base/safetext.c): what
// is plain, what is escaped and how, and the cut of a shown text at a whole character.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "safetext.h"

static void expect_escaped(const char *text, bool backslash, const char *want) {
    StrBuf sb;
    strbuf_init(&sb);
    safetext_escape(&sb, text, strlen(text), backslash);
    assert_false(sb.failed);
    assert_string_equal(strbuf_str(&sb), want);
    assert_true(safetext_unchanged(text, strlen(text), backslash) == (strcmp(text, want) == 0));
    strbuf_finish(&sb);
}

static void test_escapes(void **state) {
    (void)state;
    expect_escaped("plain text, 猫, \xC2\xA0 and 😀", false, "plain text, 猫, \xC2\xA0 and 😀");
    // ESC [ 2 J clears the screen, BEL rings, DEL; each byte of a C1 control (U+009B, CSI)
    expect_escaped("a\033[2Jb\007c\177", false, "a\\x1B[2Jb\\x07c\\x7F");
    expect_escaped("\xC2\x9B" "31m", false, "\\xC2\\x9B31m");
    // line ends and tabs, written as C writes them
    expect_escaped("one\ntwo\r\tthree", false, "one\\ntwo\\r\\tthree");
    // bytes that are not UTF-8: a stray continuation, a cut character, an overlong form, a
    // surrogate, past U+10FFFF
    expect_escaped("\x80|\xE2\x82|\xC0\xAF|\xED\xA0\x80|\xF4\x90\x80\x80", false,
                   "\\x80|\\xE2\\x82|\\xC0\\xAF|\\xED\\xA0\\x80|\\xF4\\x90\\x80\\x80");
    // overrides and isolates, U+202A to U+202E and U+2066 to U+2069; their neighbours are plain
    expect_escaped("\xE2\x80\xAA\xE2\x80\xAE|\xE2\x81\xA6\xE2\x81\xA9|\xE2\x80\xA9\xE2\x81\xAA", false,
                   "\\u202A\\u202E|\\u2066\\u2069|\xE2\x80\xA9\xE2\x81\xAA");
    // a backslash, when an escape must be told from the text
    expect_escaped("a\\b", false, "a\\b");
    expect_escaped("a\\b", true, "a\\x5Cb");
}

static void test_kinds(void **state) {
    (void)state;
    uint32_t code;
    SafetextKind kind;
    assert_int_equal(safetext_next("\t", 1, &code, &kind), 1);
    assert_int_equal(kind, SAFETEXT_PLAIN);
    assert_int_equal(safetext_next("\xE2\x80\xAE", 3, &code, &kind), 3);
    assert_int_equal(kind, SAFETEXT_BIDI);
    assert_int_equal(code, 0x202E);
    assert_int_equal(safetext_next("\xE2\x80", 2, &code, &kind), 1);  // cut short
    assert_int_equal(kind, SAFETEXT_INVALID);
    assert_int_equal(code, 0xE2);
    assert_int_equal(safetext_find("ab\033c", 4, &code, &kind), 2);
    assert_int_equal(kind, SAFETEXT_CONTROL);
    assert_int_equal(safetext_find("abc", 3, &code, &kind), 3);
}

// A text that does not fit is cut after a whole character or a whole escape, with "...".
static void test_show_cuts_whole(void **state) {
    (void)state;
    char buf[12];
    assert_string_equal(safetext_show(buf, sizeof(buf), "short"), "short");
    assert_string_equal(safetext_show(buf, sizeof(buf), "abcdef\033ghijk"), "abcdef...");
    assert_string_equal(safetext_show(buf, sizeof(buf), "abcd猫猫"), "abcd猫...");
    assert_string_equal(safetext_show(buf, sizeof(buf), "abcdefgh"), "abcdefgh");
}

static void test_invisible_names(void **state) {
    (void)state;
    assert_string_equal(safetext_invisible_name(0x200B), "ZERO WIDTH SPACE");
    assert_string_equal(safetext_invisible_name(0xFEFF), "ZERO WIDTH NO-BREAK SPACE");
    assert_string_equal(safetext_invisible_name(0x00AD), "SOFT HYPHEN");
    assert_null(safetext_invisible_name('a'));
    assert_null(safetext_invisible_name(0x00A0));  // a no-break space shows as a space
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_show_cuts_whole),
        cmocka_unit_test(test_invisible_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
