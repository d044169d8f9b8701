// Tests of tokenizer: GPT-2's byte-level BPE on a small vocabulary written here (GPT-2's 256
// byte tokens, in GPT-2's order, and a few merges), the located refusal of every kind of
// broken file, the labels, and UTF-8 validation. Expected ids are worked out by hand from
// GPT-2's byte order: the printable bytes '!'..'~' are ids 0..93 ('a' is 64), the bytes
// 0..32 that stand for themselves nowhere are ids 188..220 ('\n' is 198, ' ' is 220).
#define _DEFAULT_SOURCE  // mkdtemp
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "given_file.h"
#include "given_text.h"
#include "lesson.h"
#include "tokenizer.h"
#include "unicode_classes.h"
#include "utf8.h"

static bool byte_is_itself(unsigned b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// The vocabulary of the 256 bytes, written with \u escapes, then extra (", \"at\": 256" ...).
static char *vocab_with(const char *extra) {
    static char text[16384];
    size_t n = 0, id = 0;
    n += (size_t)snprintf(text + n, sizeof(text) - n, "{");
    for (unsigned b = 0; b < 256; b++)
        if (byte_is_itself(b))
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"\\u%04X\": %zu", id ? ", " : "", b, id), id++;
    for (unsigned b = 0, k = 0; b < 256; b++)
        if (!byte_is_itself(b))
            n += (size_t)snprintf(text + n, sizeof(text) - n, ", \"\\u%04X\": %zu", 0x100 + k++, id++);
    snprintf(text + n, sizeof(text) - n, "%s}", extra);
    return text;
}

static const char EXTRA[] = ", \"at\": 256, \"\\u0120c\": 257, \"\\u0120cat\": 258";
static const char MERGES[] = "#version: 0.2\na t\n\xC4\xA0 c\r\n\n\xC4\xA0" "c at\n";

static Tokenizer *small(void) {
    const char *vocab = vocab_with(EXTRA);
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", MERGES,
                                      strlen(MERGES), &diag);
    assert_non_null(tok);
    return tok;
}

static void expect_ids(const Tokenizer *tok, const char *text, const uint32_t *want, size_t n) {
    TokenIds ids = {0};
    Diag diag;
    diag_init(&diag);
    assert_int_equal(tokenizer_encode(tok, text, strlen(text), &ids, &diag), STATUS_OK);
    if (ids.n != n)
        fail_msg("'%s': %zu ids, want %zu", text, ids.n, n);
    for (size_t i = 0; i < n; i++)
        if (ids.ids[i] != want[i])
            fail_msg("'%s': id %zu is %u, want %u", text, i, ids.ids[i], want[i]);
    token_ids_finish(&ids);
}

#define EXPECT(tok, text, ...)                                                   \
    do {                                                                         \
        const uint32_t want[] = {__VA_ARGS__};                                   \
        expect_ids(tok, text, want, sizeof(want) / sizeof(want[0]));             \
    } while (0)

static void test_encode(void **state) {
    (void)state;
    Tokenizer *tok = small();
    assert_int_equal(tokenizer_size(tok), 259);
    EXPECT(tok, "cat cat", 66, 256, 258);         // "cat" | " cat": a t first, then Ġ c, Ġc at
    EXPECT(tok, "a  b", 64, 220, 220, 65);        // "a" | " " | " b": a space joins the word after
    EXPECT(tok, "a\n\nb", 64, 198, 198, 65);      // "a" | "\n" | "\n" | "b": no merges
    EXPECT(tok, "a  ", 64, 220, 220);             // trailing spaces stay one piece
    EXPECT(tok, "it's", 72, 83, 6, 82);           // "it" | "'s"
    EXPECT(tok, "x12", 87, 16, 17);               // letters | digits
    EXPECT(tok, " !?", 220, 0, 30);               // " !?" one piece, no merges
    EXPECT(tok, "\xC3\xA9t\xC3\xA9", 127, 102, 83, 127, 102);  // été: letters, bytes C3 A9
    tokenizer_destroy(tok);
}

typedef struct Broken {
    const char *vocab_extra;  // NULL: vocab is the text below instead
    const char *vocab;
    const char *merges;
    const char *path;         // the file the error is in
    size_t line, col;
    const char *message;
} Broken;

static void test_broken_files(void **state) {
    (void)state;
    static const Broken cases[] = {
        {NULL, "", "", "v.json", 1, 1, "the vocabulary should open with '{'"},
        {NULL, "{}", "", "v.json", 1, 1, "the vocabulary has no tokens"},
        {NULL, "{\"a\": 0} x", "", "v.json", 1, 10, "the vocabulary goes on after its closing '}'"},
        {NULL, "{\"a\" 0}", "", "v.json", 1, 6, "a ':' and the token's id should be here"},
        {NULL, "{\"a\": 0 \"b\": 1}", "", "v.json", 1, 9, "a ',' or the closing '}' should be here"},
        {NULL, "{\"a\": x}", "", "v.json", 1, 7, "a token's id (a whole number from 0) should be here"},
        {NULL, "{a: 0}", "", "v.json", 1, 2, "a token in double quotes should be here"},
        {NULL, "{\"a: 0}", "", "v.json", 1, 2, "this token has no closing quote"},
        {NULL, "{\"\\q\": 0}", "", "v.json", 1, 3, "'\\q' is not an escape of JSON"},
        {NULL, "{\"\\u12\": 0}", "", "v.json", 1, 7, "a \\u escape needs four hexadecimal digits"},
        {NULL, "{\"\\uD800\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        {NULL, "{\"\\uD800\\u0041\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        {NULL, "{\"\t\": 0}", "", "v.json", 1, 3, "a control character inside a token"},
        {NULL, "{\"\xFF\": 0}", "", "v.json", 1, 3, "this byte is not UTF-8"},
        {NULL, "{\"\\uD83D\\uDE00\": 0}", "", "v.json", 1, 2, "the character U+1F600 in this token stands for no byte"},
        {NULL, "{\" \": 0}", "", "v.json", 1, 2, "the character U+0020 in this token stands for no byte"},
        {NULL, "{\"a\": 99999999999}", "", "v.json", 1, 7, "this id is larger than any vocabulary's (16777216 tokens at most)"},
        {NULL, "{\"a\": 1}", "", "v.json", 1, 2, "id 1 is past the last of the vocabulary's 1 tokens"},
        {NULL, "{\"a\": 0, \"b\": 0}", "", "v.json", 1, 10, "id 0 is given to two tokens"},
        {NULL, "{\"a\": 0, \"a\": 1}", "", "v.json", 1, 10, "this token is listed twice"},
        {NULL, "{\"a\": 0}", "", "v.json", 1, 1, "the vocabulary has no token for the byte 0x00"},
        {"", NULL, "a t x\n", "m.txt", 1, 5, "a merge is two tokens; this line has 3"},
        {"", NULL, "#version: 0.2\n at\n", "m.txt", 2, 1, "a merge is two tokens; this line has 1"},
        {"", NULL, "a t\n", "m.txt", 1, 1, "the two tokens together are not in the vocabulary"},
        {"", NULL, "a zz\n", "m.txt", 1, 3, "this token is not in the vocabulary"},
        {"", NULL, "a \xFF\n", "m.txt", 1, 3, "this byte is not UTF-8"},
        {", \"at\": 256", NULL, "a t\na t\n", "m.txt", 2, 1, "this merge is listed already, at line 1"},
        // The vocabulary cut short: each place where the text ends says what should follow.
        {NULL, "[]", "", "v.json", 1, 1, "the vocabulary should open with '{'"},
        {NULL, "{\"a\": 0", "", "v.json", 1, 8, "a ',' or the closing '}' should be here"},
        {NULL, "{\"a\": 0,", "", "v.json", 1, 9, "a token in double quotes should be here"},
        {NULL, "{\"a\"", "", "v.json", 1, 5, "a ':' and the token's id should be here"},
        {NULL, "{\"a\": -1}", "", "v.json", 1, 7, "a token's id (a whole number from 0) should be here"},
        // \u escapes: a digit that is not hexadecimal, in either case, is refused where it is;
        // U+20AC and U+E000 are whole characters (three bytes of UTF-8) that no byte is written as.
        {NULL, "{\"\\u012G\": 0}", "", "v.json", 1, 8, "a \\u escape needs four hexadecimal digits"},
        {NULL, "{\"\\u01g0\": 0}", "", "v.json", 1, 7, "a \\u escape needs four hexadecimal digits"},
        {NULL, "{\"\\u20AC\": 0}", "", "v.json", 1, 2, "the character U+20AC in this token stands for no byte"},
        {NULL, "{\"\\uE000\": 0}", "", "v.json", 1, 2, "the character U+E000 in this token stands for no byte"},
        // Surrogates: a low one alone; a high one followed by one letter or two, by another
        // escape, by a \u escape cut short (at the closing quote, column 13), by U+E000.
        {NULL, "{\"\\uDC00\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        {NULL, "{\"\\uD800a\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        {NULL, "{\"\\uD800ab\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        {NULL, "{\"\\uD800\\n\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        {NULL, "{\"\\uD800\\u12\": 0}", "", "v.json", 1, 13, "a \\u escape needs four hexadecimal digits"},
        {NULL, "{\"\\uD800\\uE000\": 0}", "", "v.json", 1, 3, "this \\u escape is half a character"},
        // A backslash before a byte that is not ASCII (é) or before DEL is no escape; the
        // message shows '?' for a character it cannot print.
        {NULL, "{\"\\\xC3\xA9\": 0}", "", "v.json", 1, 3, "'\\?' is not an escape of JSON"},
        {NULL, "{\"\\\x7F\": 0}", "", "v.json", 1, 3, "'\\?' is not an escape of JSON"},
        // Merges: four parts (the third is placed), a character that stands for no byte (U+20AC).
        {"", NULL, "a t x y\n", "m.txt", 1, 5, "a merge is two tokens; this line has 4"},
        {"", NULL, "a \xE2\x82\xAC\n", "m.txt", 1, 3, "the character U+20AC in this token stands for no byte"},
        // U+00AD, the soft hyphen, is a character of Latin-1 that GPT-2 writes as U+0143; in a
        // token with two characters that stand for no byte, the first is named.
        {"", NULL, "a \xC2\xAD\n", "m.txt", 1, 3, "the character U+00AD in this token stands for no byte"},
        {NULL, "{\"a\\u00AD\\u20AC\": 0}", "", "v.json", 1, 2, "the character U+00AD in this token stands for no byte"},
        // Ids are JSON's numbers: a leading zero is refused as JSON refuses it, a fraction or an
        // exponent is no id, and thirty digits are more than any vocabulary's.
        {NULL, "{\"a\": 01}", "", "v.json", 1, 7, "a number does not start with 0 in JSON"},
        {NULL, "{\"a\": 1.5}", "", "v.json", 1, 7, "a token's id (a whole number from 0) should be here"},
        {NULL, "{\"a\": 1e3}", "", "v.json", 1, 7, "a token's id (a whole number from 0) should be here"},
        {NULL, "{\"a\": 123456789012345678901234567890}", "", "v.json", 1, 7,
         "this id is larger than any vocabulary's (16777216 tokens at most)"},
        // A byte that is not UTF-8 is found beside an escape (C3 then \u00A9's C2 A9 is no
        // character) and at a token's end (E2 82 is two bytes of a character of three).
        {NULL, "{\"\xC3\\u00A9\": 0}", "", "v.json", 1, 3, "this byte is not UTF-8"},
        {NULL, "{\"ab\xE2\x82\": 0}", "", "v.json", 1, 5, "this byte is not UTF-8"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const Broken *c = &cases[i];
        const char *vocab = c->vocab_extra ? vocab_with(c->vocab_extra) : c->vocab;
        Diag diag;
        diag_init(&diag);
        Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", c->merges,
                                          strlen(c->merges), &diag);
        if (tok)
            fail_msg("case %zu was accepted", i);
        if (strcmp(diag.message, c->message) || strcmp(diag.path, c->path) ||
            diag.line != c->line || diag.col != c->col)
            fail_msg("case %zu: %s:%zu:%zu: %s", i, diag.path, diag.line, diag.col, diag.message);
        assert_int_equal(diag.status, STATUS_LESSON_ERROR);
        assert_true(diag.hint[0] != '\0');
    }
}

// A NUL byte in the vocabulary is none of JSON's spaces, and after a backslash no escape.
static void test_nul_bytes(void **state) {
    (void)state;
    static const char between[] = "{\0\"a\": 0}", escaped[] = "{\"\\\0\": 0}";
    static const struct {
        const char *vocab;
        size_t len, col;
        const char *message;
    } cases[] = {
        {between, sizeof(between) - 1, 2, "a token in double quotes should be here"},
        {escaped, sizeof(escaped) - 1, 3, "'\\?' is not an escape of JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Diag diag;
        diag_init(&diag);
        assert_null(tokenizer_create("v.json", cases[i].vocab, cases[i].len, "m.txt", "", 0, &diag));
        assert_string_equal(diag.message, cases[i].message);
        assert_int_equal(diag.line, 1);
        assert_int_equal(diag.col, cases[i].col);
    }
}

static void test_escapes_and_labels(void **state) {
    (void)state;
    // "\u0120\u00F0\u0141\u013A\u0122" is ĠðŁĺĢ: the bytes 20 F0 9F 98 80 of " 😀" (F0 stands
    // for itself; 9F, 98 and 80 are the 66th, 59th and 35th bytes that do not); "\/\"" is /".
    // "\u00e9t" (lower-case hex) is the bytes E9 74: é stands for the byte E9 itself, which
    // alone is not UTF-8. "\u00C2\u0122" is C2 80, U+0080 (a C1 control); "\u00C2\u0142" is
    // C2 A0, U+00A0 (no-break space, printable). "" is a token of no bytes.
    const char *vocab = vocab_with(", \"\\u0120\\u00F0\\u0141\\u013A\\u0122\": 256, \"\\/\\\"\": 257, "
                                   "\"\\u00e9t\": 258, \"\\u00C2\\u0122\": 259, \"\\u00C2\\u0142\": 260, \"\": 261");
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", "", 0, &diag);
    assert_non_null(tok);
    size_t len;
    const char *bytes = tokenizer_bytes(tok, 256, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(bytes, " \xF0\x9F\x98\x80", 5);
    Arena *arena = arena_create();
    assert_string_equal(tokenizer_label(tok, 256, arena), " \xF0\x9F\x98\x80");
    assert_string_equal(tokenizer_label(tok, 198, arena), "\\n");       // '\n'
    assert_string_equal(tokenizer_label(tok, 189, arena), "\\x01");
    assert_string_equal(tokenizer_label(tok, 59, arena), "\\x5C");      // '\\'
    assert_string_equal(tokenizer_label(tok, 187, arena), "\\xFF");     // half a character
    assert_string_equal(tokenizer_label(tok, 257, arena), "/\"");
    assert_memory_equal(tokenizer_bytes(tok, 258, &len), "\xE9t", 2);
    assert_int_equal(len, 2);
    assert_string_equal(tokenizer_label(tok, 258, arena), "\\xE9t");
    assert_string_equal(tokenizer_label(tok, 197, arena), "\\t");       // '\t'
    assert_string_equal(tokenizer_label(tok, 201, arena), "\\r");       // '\r'
    assert_string_equal(tokenizer_label(tok, 221, arena), "\\x7F");     // DEL
    assert_string_equal(tokenizer_label(tok, 259, arena), "\\xC2\\x80"); // a control, byte by byte
    assert_string_equal(tokenizer_label(tok, 260, arena), "\xC2\xA0");  // shown as itself
    tokenizer_bytes(tok, 261, &len);
    assert_int_equal(len, 0);
    assert_string_equal(tokenizer_label(tok, 261, arena), "");
    arena_destroy(arena);
    tokenizer_destroy(tok);
}

static void test_utf8_end(void **state) {
    (void)state;
    static const struct {
        const char *text;
        size_t end;
    } cases[] = {
        {"cat", 3},         {"\xC3\xA9", 2},      {"a\xC0\x80", 1},   {"a\xED\xA0\x80", 1},
        {"\xF4\x90\x80\x80", 0}, {"\xF0\x9F\x98\x80", 4}, {"ab\xE2\x82", 2}, {"\xE0\x80\x80", 0},
        {"\xF5", 0},        {"a\x80", 1},         {"\xC3(", 0},
        // Eight ASCII bytes at a time, then one by one: a bad byte just after eight, in the
        // second eight, at the end; a character that straddles the eighth byte.
        {"abcdefgh\xFF", 8}, {"abcdefghijklmno\x80xyz", 15}, {"abcdefghijklmnop", 16},
        {"abcdefg\xC3\xA9hijklmnopq\xC3", 19}, {"abcdefg\xC3\xA9", 9},
        // Two bytes, read without a call: U+0080 and U+07FF, their ends, and C1 BF, the
        // overlong U+007F just below them.
        {"\xC2\x80\xDF\xBF", 4}, {"\xC1\xBF", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (tokenizer_utf8_end(cases[i].text, strlen(cases[i].text)) != cases[i].end)
            fail_msg("case %zu: %zu", i, tokenizer_utf8_end(cases[i].text, strlen(cases[i].text)));
}

static void test_load_folder(void **state) {
    (void)state;
    Diag diag;
    diag_init(&diag);
    assert_null(tokenizer_load("/nonexistent-folder", &diag));
    assert_int_equal(diag.status, STATUS_USAGE_ERROR);
    assert_non_null(strstr(diag.message, "no tokenizer in '/nonexistent-folder'"));
}

// Every allocation of reading a tokenizer, encoding and labelling fails in turn: each ends in
// "out of memory" (the one status of such a failure), never a crash or a leak (ASan).
static void test_allocation_failures(void **state) {
    (void)state;
    const char *vocab = vocab_with(EXTRA);
    const char *text = "cat cat sat";
    util_fail_allocation(0);
    size_t total = 0;
    for (size_t k = 1;; k++) {
        util_arena_block_size(1);  // an allocation of its own for every arena allocation
        util_fail_allocation(k);
        Diag diag;
        diag_init(&diag);
        Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", MERGES,
                                          strlen(MERGES), &diag);
        TokenIds ids = {0};
        Arena *arena = tok ? arena_create() : NULL;
        bool ok = tok && arena && tokenizer_encode(tok, text, strlen(text), &ids, &diag) == STATUS_OK;
        for (size_t i = 0; ok && i < ids.n; i++)
            ok = tokenizer_label(tok, ids.ids[i], arena) != NULL;
        size_t made = util_fail_allocation(0);
        util_arena_block_size(0);
        arena_destroy(arena);
        token_ids_finish(&ids);
        tokenizer_destroy(tok);
        if (ok) {
            total = k;
            break;
        }
        if (tok && arena && diag.status != STATUS_OK)
            assert_true(diag.out_of_memory);
        if (!tok)
            assert_true(diag.out_of_memory);
        assert_true(made >= k);
    }
    assert_true(total > 10);  // the loop went through the allocations before it succeeded
}

// Which characters are spaces, as GPT-2's encoder.py has them (Python's regex module: Unicode's
// White_Space; JavaScript's \s differs in U+0085 and U+FEFF): " Sc" is cut " " | S | "c" when S is
// a space (a run of spaces gives its last one to what follows, and here that is S itself), and
// " S" | "c" when it is not (' ?' takes the space into the piece). A merge of Ġ with S's first
// byte tells the two apart: it applies only in the piece " S". Byte ids from GPT-2's order:
// C2 126, E1 157, E2 158, E3 159, EF 171, 80 222, 81 223, 0x08 196, 0x0B 199, 0x0E 202.
static void test_unicode_spaces(void **state) {
    (void)state;
    const char *vocab = vocab_with(", \"\\u0120\\u00E2\": 256, \"\\u0120\\u00E3\": 257, "
                                   "\"\\u0120\\u00E1\": 258, \"\\u0120\\u00EF\": 259, "
                                   "\"\\u0120\\u00C2\": 260, \"\\u0120\\u0108\": 261, "
                                   "\"\\u0120\\u010E\": 262");
    // Ġ â, Ġ ã, Ġ á, Ġ ï, Ġ Â, Ġ Ĉ (0x08), Ġ Ď (0x0E)
    static const char merges[] = "\xC4\xA0 \xC3\xA2\n\xC4\xA0 \xC3\xA3\n\xC4\xA0 \xC3\xA1\n"
                                 "\xC4\xA0 \xC3\xAF\n\xC4\xA0 \xC3\x82\n\xC4\xA0 \xC4\x88\n"
                                 "\xC4\xA0 \xC4\x8E\n";
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", merges,
                                      strlen(merges), &diag);
    assert_non_null(tok);
    // Spaces of Unicode's White_Space:
    EXPECT(tok, " \vc", 220, 199, 66);                            // U+000B
    EXPECT(tok, " \xC2\xA0" "c", 220, 126, 254, 66);              // U+00A0 no-break space
    EXPECT(tok, " \xE1\x9A\x80" "c", 220, 157, 248, 222, 66);     // U+1680 Ogham space mark
    EXPECT(tok, " \xE2\x80\x80" "c", 220, 158, 222, 222, 66);     // U+2000 en quad
    EXPECT(tok, " \xE2\x80\x8A" "c", 220, 158, 222, 232, 66);     // U+200A hair space
    EXPECT(tok, " \xE2\x80\xA8" "c", 220, 158, 222, 101, 66);     // U+2028 line separator
    EXPECT(tok, " \xE2\x80\xA9" "c", 220, 158, 222, 102, 66);     // U+2029 paragraph separator
    EXPECT(tok, " \xE2\x80\xAF" "c", 220, 158, 222, 107, 66);     // U+202F narrow no-break space
    EXPECT(tok, " \xE2\x81\x9F" "c", 220, 158, 223, 253, 66);     // U+205F math space
    EXPECT(tok, " \xE3\x80\x80" "c", 220, 159, 222, 222, 66);     // U+3000 ideographic space
    EXPECT(tok, " \xC2\x85" "c", 220, 126, 227, 66);              // U+0085 next line (not in JavaScript's \s)
    // Not spaces: the characters beside them, and one that JavaScript's \s counts.
    EXPECT(tok, " \bc", 261, 66);                                 // U+0008 backspace
    EXPECT(tok, " \x0E" "c", 262, 66);                            // U+000E
    EXPECT(tok, " \xEF\xBB\xBF" "c", 259, 119, 123, 66);          // U+FEFF byte order mark (in JavaScript's \s)
    EXPECT(tok, " \xC2\xA1" "c", 260, 94, 66);                    // U+00A1 ¡
    EXPECT(tok, " \xE1\x9A\x81" "c", 258, 248, 223, 66);          // U+1681 ᚁ, a letter like c
    EXPECT(tok, " \xE2\x80\x8B" "c", 256, 222, 233, 66);          // U+200B zero width space
    EXPECT(tok, " \xE2\x80\x90" "c", 256, 222, 238, 66);          // U+2010 hyphen
    EXPECT(tok, " \xE2\x80\xB0" "c", 256, 222, 108, 66);          // U+2030 per mille
    EXPECT(tok, " \xE2\x81\xA0" "c", 256, 223, 254, 66);          // U+2060 word joiner
    EXPECT(tok, " \xE3\x80\x81" "c", 257, 222, 223, 66);          // U+3001 ideographic comma
    EXPECT(tok, " \xEF\xBC\x81" "c", 259, 120, 223, 66);          // U+FF01 fullwidth !
    tokenizer_destroy(tok);
}

// The merges in rank order, whatever the order their pairs appear in: ranks ĠĠ+ĠĠ 0, a+t 1,
// Ġ+Ġ 2. The file has no "#version" line (its first line is a merge of 9 bytes), a tab
// between two tokens, trailing spaces, and no newline at its end.
static void test_merge_order(void **state) {
    (void)state;
    const char *vocab = vocab_with(", \"at\": 256, \"\\u0120\\u0120\": 257, "
                                   "\"\\u0120\\u0120\\u0120\\u0120\": 258");
    static const char merges[] = "\xC4\xA0\xC4\xA0 \xC4\xA0\xC4\xA0\na\tt  \n\xC4\xA0 \xC4\xA0";
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", merges,
                                      strlen(merges), &diag);
    assert_non_null(tok);
    EXPECT(tok, "atat", 256, 256);        // both a+t in one pass, neither ranked before the other
    EXPECT(tok, "aat", 64, 256);          // the first a is followed by a, not t
    EXPECT(tok, "cat ", 66, 256, 220);    // a last lone space is a piece of its own
    EXPECT(tok, "   ", 257, 220);         // Ġ+Ġ once from the left; ĠĠ+Ġ is no merge
    EXPECT(tok, "    ", 258);             // Ġ+Ġ twice, then ĠĠ+ĠĠ, though it ranks first
    EXPECT(tok, "     x", 258, 220, 87);  // five spaces: four, then " x"
    tokenizer_destroy(tok);
}

// A vocabulary of more tokens than the reader first makes room for (1024), and a text of more
// ids than the encoder first makes room for (64).
static void test_large(void **state) {
    (void)state;
    // The 256 bytes, then the two-letter tokens "aa".."zZ": first letter a..z, second a..z then
    // A..Z, ids from 256 on; "zZ" is 256 + 25 * 52 + 51 = 1607.
    const char *bytes = vocab_with("");
    size_t cap = strlen(bytes) + 26 * 52 * 16;
    char *vocab = malloc(cap);
    assert_non_null(vocab);
    size_t n = strlen(bytes) - 1;  // without the closing '}'
    memcpy(vocab, bytes, n);
    static const char second[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    size_t id = 256;
    for (char a = 'a'; a <= 'z'; a++)
        for (size_t k = 0; k < 52; k++)
            n += (size_t)snprintf(vocab + n, cap - n, ", \"%c%c\": %zu", a, second[k], id++);
    n += (size_t)snprintf(vocab + n, cap - n, "}");
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, n, "m.txt", "z Z\n", 4, &diag);
    free(vocab);
    assert_non_null(tok);
    assert_int_equal(tokenizer_size(tok), 1608);
    size_t len;
    assert_memory_equal(tokenizer_bytes(tok, 256, &len), "aa", 2);
    assert_memory_equal(tokenizer_bytes(tok, 1607, &len), "zZ", 2);
    EXPECT(tok, "zZ", 1607);
    // 70 characters of one piece ("!?" 35 times), no merges: ids 0 and 30 in turn.
    char text[71];
    for (size_t i = 0; i < 70; i++)
        text[i] = i % 2 ? '?' : '!';
    text[70] = '\0';
    TokenIds ids = {0};
    assert_int_equal(tokenizer_encode(tok, text, 70, &ids, &diag), STATUS_OK);
    assert_int_equal(ids.n, 70);
    for (size_t i = 0; i < 70; i++)
        assert_int_equal(ids.ids[i], i % 2 ? 30 : 0);
    token_ids_finish(&ids);
    tokenizer_destroy(tok);
}

// Files in a folder of its own under /tmp, removed at the end.
static char folder[64];

static void write_file(const char *dir, const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

// A subfolder of folder, named name, with the small tokenizer's files as vocab and merges.
static const char *tokenizer_folder(const char *name, const char *vocab, const char *merges) {
    static char dir[128];
    snprintf(dir, sizeof(dir), "%s/%s", folder, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    if (vocab)
        write_file(dir, vocab, vocab_with(EXTRA));
    if (merges)
        write_file(dir, merges, MERGES);
    return dir;
}

static int make_folder(void **state) {
    (void)state;
    snprintf(folder, sizeof(folder), "/tmp/test_tokenizer_XXXXXX");
    return mkdtemp(folder) ? 0 : -1;
}

static int remove_folder(void **state) {
    (void)state;
    char command[128];
    snprintf(command, sizeof(command), "rm -rf '%s'", folder);
    return system(command) == 0 ? 0 : -1;
}

// Loads dir and expects the error message at path:line:col (line 0: no place in a file).
static void expect_load_error(const char *dir, int status, const char *path, size_t line,
                              const char *message) {
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_load(dir, &diag);
    if (tok)
        fail_msg("'%s' was loaded", dir);
    assert_int_equal(diag.status, status);
    assert_string_equal(diag.path, path);
    assert_int_equal(diag.line, line);
    assert_string_equal(diag.message, message);
}

static void test_load_files(void **state) {
    (void)state;
    char dir[160], path[200], message[400];
    Diag diag;
    diag_init(&diag);
    // GPT-2's own names, and a folder named with a trailing slash.
    snprintf(dir, sizeof(dir), "%s/", tokenizer_folder("gpt2", "encoder.json", "vocab.bpe"));
    Tokenizer *tok = tokenizer_load(dir, &diag);
    assert_non_null(tok);
    assert_int_equal(tokenizer_size(tok), 259);
    EXPECT(tok, "cat cat", 66, 256, 258);
    tokenizer_destroy(tok);

    // A vocabulary that is a folder: opened, but not read.
    snprintf(dir, sizeof(dir), "%s", tokenizer_folder("vocab_folder", NULL, "merges.txt"));
    snprintf(path, sizeof(path), "%s/vocab.json", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(message, sizeof(message), "cannot read '%s': Is a directory", path);
    expect_load_error(dir, STATUS_USAGE_ERROR, "", 0, message);

    // Merges that are a folder.
    snprintf(dir, sizeof(dir), "%s", tokenizer_folder("merges_folder", "vocab.json", NULL));
    snprintf(path, sizeof(path), "%s/merges.txt", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(message, sizeof(message), "cannot read '%s': Is a directory", path);
    expect_load_error(dir, STATUS_USAGE_ERROR, "", 0, message);

    // An empty vocabulary is read, and refused at its first character.
    snprintf(dir, sizeof(dir), "%s", tokenizer_folder("empty", NULL, "merges.txt"));
    write_file(dir, "vocab.json", "");
    snprintf(path, sizeof(path), "%s/vocab.json", dir);
    expect_load_error(dir, STATUS_LESSON_ERROR, path, 1, "the vocabulary should open with '{'");

    // A vocabulary of 65 MiB, past the 64 MiB of any tokenizer's file (a file with a hole:
    // nothing written to disk). Reading stops soon after 64 MiB.
    snprintf(dir, sizeof(dir), "%s", tokenizer_folder("huge", NULL, "merges.txt"));
    snprintf(path, sizeof(path), "%s/vocab.json", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)65 << 20), 0);
    assert_int_equal(fclose(f), 0);
    snprintf(message, sizeof(message), "'%s' is larger than a tokenizer's file (64 MiB at most)",
             path);
    expect_load_error(dir, STATUS_USAGE_ERROR, "", 0, message);

    // The folder named "" is the one the program runs in.
    char here[4096];
    assert_non_null(getcwd(here, sizeof(here)));
    snprintf(dir, sizeof(dir), "%s/gpt2", folder);
    assert_int_equal(chdir(dir), 0);
    tok = tokenizer_load("", &diag);
    assert_int_equal(chdir(here), 0);
    assert_non_null(tok);
    assert_int_equal(tokenizer_size(tok), 259);
    tokenizer_destroy(tok);

    // Memory that runs out while an empty vocabulary is read is reported as such, until there
    // is enough to refuse the vocabulary for what it is.
    snprintf(dir, sizeof(dir), "%s/empty", folder);
    for (size_t k = 1;; k++) {
        util_fail_allocation(k);
        diag_init(&diag);
        assert_null(tokenizer_load(dir, &diag));
        util_fail_allocation(0);
        if (!diag.out_of_memory) {
            assert_string_equal(diag.message, "the vocabulary should open with '{'");
            assert_true(k > 2);  // the two paths, then the file's bytes
            break;
        }
    }
}

// given_text finds the tokenizer's folder beside the lesson, in the folder of --weights
// instead, or as given when it is absolute, reads each folder once however it is named; and
// turns a text into ids and labels.
static void test_given_text(void **state) {
    (void)state;
    char lesson[160], dir[160];
    snprintf(dir, sizeof(dir), "%s", tokenizer_folder("tok", "vocab.json", "merges.txt"));
    tokenizer_folder("tok2", "encoder.json", "vocab.bpe");
    tokenizer_folder("tok3", "vocab.json", "merges.txt");
    snprintf(lesson, sizeof(lesson), "%s/lesson.yaml", folder);
    Arena *arena = arena_create();
    GivenTokenizers *read = given_tokenizers_create();
    assert_non_null(arena);
    assert_non_null(read);
    Diag diag;
    diag_init(&diag);
    GivenText gt, again;
    size_t bad;

    assert_true(given_text_open(&gt, read, lesson, "tok", &diag));  // beside the lesson
    assert_true(given_text_encode(&gt, "cat cat", 7, arena, &bad, &diag));
    assert_int_equal(bad, SIZE_MAX);
    assert_int_equal(gt.n, 3);
    assert_true(gt.ids[0] == 66 && gt.ids[1] == 256 && gt.ids[2] == 258);
    assert_string_equal(gt.labels[0], "c");
    assert_string_equal(gt.labels[1], "at");
    assert_string_equal(gt.labels[2], " cat");
    // An empty text is no ids; a text that is not UTF-8 is refused at its first bad byte.
    assert_true(given_text_encode(&gt, "", 0, arena, &bad, &diag));
    assert_int_equal(gt.n, 0);
    assert_false(given_text_encode(&gt, "ca\xFFt", 4, arena, &bad, &diag));
    assert_int_equal(bad, 2);
    assert_int_equal(given_tokenizers_count(read), 1);

    // The same folder however it is named is read once: the same tokenizer each time.
    const char *same[] = {"tok/", "./tok", "tok/../tok"};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        assert_true(given_text_open(&again, read, lesson, same[i], &diag));
        assert_ptr_equal(again.tokenizer, gt.tokenizer);
    }
    assert_true(given_text_open(&again, read, NULL, dir, &diag));  // absolute, no lesson file
    assert_ptr_equal(again.tokenizer, gt.tokenizer);
    assert_true(given_text_open(&again, read, "/nonexistent/lesson.yaml", dir, &diag));
    assert_ptr_equal(again.tokenizer, gt.tokenizer);
    assert_int_equal(given_tokenizers_count(read), 1);
    // Another folder is another tokenizer, and a third another again.
    assert_true(given_text_open(&again, read, lesson, "tok2", &diag));
    assert_true(again.tokenizer != gt.tokenizer);
    assert_int_equal(given_tokenizers_count(read), 2);
    Tokenizer *second = again.tokenizer;
    assert_true(given_text_open(&again, read, lesson, "tok3", &diag));
    assert_true(again.tokenizer != gt.tokenizer && again.tokenizer != second);
    assert_true(given_text_open(&again, read, lesson, "tok2/", &diag));
    assert_ptr_equal(again.tokenizer, second);
    assert_int_equal(given_tokenizers_count(read), 3);

    // --weights: a relative folder is found there, not beside the lesson.
    given_files_set_folder(folder);
    assert_true(given_text_open(&again, read, "/nonexistent/lesson.yaml", "tok", &diag));
    assert_ptr_equal(again.tokenizer, gt.tokenizer);
    given_files_set_folder(NULL);

    // A lesson named without a folder: its tokenizer's folder is taken as it is, from here.
    char here[4096];
    assert_non_null(getcwd(here, sizeof(here)));
    assert_int_equal(chdir(folder), 0);
    bool found = given_text_open(&again, read, "lesson.yaml", "tok", &diag);
    assert_int_equal(chdir(here), 0);
    assert_true(found);
    assert_ptr_equal(again.tokenizer, gt.tokenizer);

    // Beside the lesson there is no folder "tok/missing": the error has no place in a file,
    // and nothing is kept for it.
    assert_false(given_text_open(&again, read, lesson, "tok/missing", &diag));
    assert_int_equal(diag.status, STATUS_USAGE_ERROR);
    assert_string_equal(diag.path, "");
    assert_null(again.tokenizer);
    assert_int_equal(given_tokenizers_count(read), 3);
    given_tokenizers_destroy(read);
    given_tokenizers_destroy(NULL);
    assert_int_equal(given_tokenizers_count(NULL), 0);
    arena_destroy(arena);
}

// The reader takes a token as the files spell it, written as it is (Hugging Face's
// vocab.json) or with \u escapes (GPT-2's encoder.json): 'ĠĠ' and "\u0120\u0120" are one
// spelling, which the merges file finds either way. Spellings longer than the 8 bytes a table
// slot holds ('ĠĠĠĠĠĠĠĠ' is 16) are compared whole. The ids are worked out by hand: ' ' is 220,
// and 8 spaces merge pairwise three times into token 258.
static void test_spellings(void **state) {
    (void)state;
    const char *vocab = vocab_with(", \"\xC4\xA0\xC4\xA0\": 256, \"\\u0120\\u0120\\u0120\\u0120\": 257, "
                                   "\"\xC4\xA0\xC4\xA0\xC4\xA0\xC4\xA0\\u0120\\u0120\xC4\xA0\xC4\xA0\": 258");
    static const char merges[] = "#version: 0.2\n"
                                 "\xC4\xA0 \xC4\xA0\n"
                                 "\xC4\xA0\xC4\xA0 \xC4\xA0\xC4\xA0\n"
                                 "\xC4\xA0\xC4\xA0\xC4\xA0\xC4\xA0 \xC4\xA0\xC4\xA0\xC4\xA0\xC4\xA0\n";
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", merges,
                                      strlen(merges), &diag);
    if (!tok)
        fail_msg("%s:%zu:%zu: %s", diag.path, diag.line, diag.col, diag.message);
    assert_int_equal(tokenizer_size(tok), 259);
    EXPECT(tok, "        ", 258);    // 8 spaces: 4 x 256, 2 x 257, 1 x 258
    EXPECT(tok, "   ", 256, 220);     // the first pair merges first
    EXPECT(tok, "      ", 257, 256);  // 6 spaces: 256 256 256, then the first two pairs
    size_t len;
    assert_memory_equal(tokenizer_bytes(tok, 258, &len), "        ", 8);
    assert_int_equal(len, 8);

    // The labels: a token printed as it is is labelled by its own bytes; the others anew.
    const char **labels = tokenizer_labels(tok);
    assert_non_null(labels);
    assert_ptr_equal(tokenizer_labels(tok), labels);  // made once
    assert_ptr_equal(labels[258], tokenizer_bytes(tok, 258, &len));
    assert_string_equal(labels[258], "        ");
    assert_string_equal(labels[64], "a");
    assert_string_equal(labels[198], "\\n");
    assert_true(labels[198] != tokenizer_bytes(tok, 198, &len));
    assert_string_equal(labels[188], "\\x00");  // the byte 0, which a NUL would end
    assert_string_equal(labels[59], "\\x5C");   // the backslash
    tokenizer_destroy(tok);

    // One spelling written two ways is one token listed twice, refused at the second.
    vocab = vocab_with(", \"\xC4\xA0\xC4\xA0\": 256, \"\\u0120\\u0120\": 257");
    assert_null(tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", "", 0, &diag));
    assert_string_equal(diag.message, "this token is listed twice");
    assert_int_equal(diag.line, 1);
    assert_int_equal(diag.col, strlen(vocab) - strlen("\"\\u0120\\u0120\": 257}") + 1 - 2);
    // A merge listed twice names the line of the first, counting the lines skipped.
    vocab = vocab_with(", \"\xC4\xA0\xC4\xA0\": 256");
    static const char twice[] = "#version: 0.2\n\n\xC4\xA0 \xC4\xA0\n\n\xC4\xA0 \xC4\xA0\n";
    diag_init(&diag);
    assert_null(tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", twice, strlen(twice), &diag));
    assert_string_equal(diag.message, "this merge is listed already, at line 3");
    assert_int_equal(diag.line, 5);
    assert_int_equal(diag.col, 1);
    // A token of the merges that is in the vocabulary under no spelling.
    static const char unknown[] = "\xC4\xA0\xC4\xA0\xC4\xA0 \xC4\xA0\n";
    diag_init(&diag);
    assert_null(tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", unknown, strlen(unknown), &diag));
    assert_string_equal(diag.message, "this token is not in the vocabulary");
    assert_int_equal(diag.col, 1);
}

// A token ends at the first quote that an even number of backslashes precede: "a\\" is a and
// a backslash, "\\\"" a backslash and a quote, "\"\\" a quote and a backslash.
static void test_quotes_and_backslashes(void **state) {
    (void)state;
    const char *vocab = vocab_with(", \"a\\\\\": 256, \"\\\\\\\"\": 257, \"\\\"\\\\\": 258");
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("v.json", vocab, strlen(vocab), "m.txt", "", 0, &diag);
    if (!tok)
        fail_msg("%s:%zu:%zu: %s", diag.path, diag.line, diag.col, diag.message);
    size_t len;
    assert_memory_equal(tokenizer_bytes(tok, 256, &len), "a\\", 2);
    assert_int_equal(len, 2);
    assert_memory_equal(tokenizer_bytes(tok, 257, &len), "\\\"", 2);
    assert_int_equal(len, 2);
    assert_memory_equal(tokenizer_bytes(tok, 258, &len), "\"\\", 2);
    assert_int_equal(len, 2);
    tokenizer_destroy(tok);
    // A quote after an odd run of backslashes is inside the token, which then has no end.
    static const char open[] = "{\"a\\\\\\\": 0}";  // {"a\\\": 0}
    diag_init(&diag);
    assert_null(tokenizer_create("v.json", open, strlen(open), "m.txt", "", 0, &diag));
    assert_string_equal(diag.message, "this token has no closing quote");
    assert_int_equal(diag.col, 2);
}

// A lesson whose vocabulary labels and text name one folder (as GPT-2's lesson does) reads
// its tokenizer once: the text's ids and the labels come from the same tokenizer, and the
// labels are the tokenizer's own. The ids are worked out by hand from the merges: "cat" is
// c (66) + at (256), " cat" is Ġc (257) + at = Ġcat (258).
static void test_lesson_reads_tokenizer_once(void **state) {
    (void)state;
    char path[160];
    tokenizer_folder("shared", "vocab.json", "merges.txt");
    snprintf(path, sizeof(path), "%s/lesson.yaml", folder);
    static const char text[] =
        "title: one tokenizer\n"
        "labels:\n"
        "  vocabulary: {tokenizer: shared/}\n"
        "given:\n"
        "  tokens: {text: \"cat cat\", tokenizer: ./shared}\n"
        "  more: {text: \"at\", tokenizer: shared}\n"
        "steps:\n"
        "  - n: numel(tokens)\n";
    Diag diag;
    diag_init(&diag);
    Lesson *lesson = lesson_create(path, text, strlen(text), &diag);
    if (!lesson)
        fail_msg("%s:%zu:%zu: %s", diag.path, diag.line, diag.col, diag.message);
    assert_int_equal(given_tokenizers_count(lesson->tokenizers), 1);
    const LessonGiven *tokens = &lesson->givens[0], *more = &lesson->givens[1];
    assert_ptr_equal(tokens->text.tokenizer, more->text.tokenizer);
    assert_ptr_equal(lesson->labels[0].items, tokenizer_labels(tokens->text.tokenizer));
    assert_int_equal(lesson->labels[0].n, 259);
    assert_string_equal(lesson->labels[0].items[258], " cat");
    assert_string_equal(lesson->labels[0].items[220], " ");  // the byte 0x20, written 'Ġ'
    assert_int_equal(tokens->shape.dim[0], 3);
    assert_true(tokens->values[0] == 66 && tokens->values[1] == 256 && tokens->values[2] == 258);
    assert_true(more->shape.dim[0] == 1 && more->values[0] == 256);
    lesson_destroy(lesson);
}

// Every allocation of loading a tokenizer from its folder and encoding a given text fails in
// turn: each ends in "out of memory", never a crash or a leak (ASan).
static void test_given_text_allocation_failures(void **state) {
    (void)state;
    char lesson[160];
    tokenizer_folder("oom", "vocab.json", "merges.txt");
    snprintf(lesson, sizeof(lesson), "%s/lesson.yaml", folder);
    size_t total = 0;
    for (size_t k = 1;; k++) {
        util_arena_block_size(1);
        util_fail_allocation(k);
        Diag diag;
        diag_init(&diag);
        GivenText gt;
        size_t bad = 0;
        Arena *arena = arena_create();
        GivenTokenizers *read = arena ? given_tokenizers_create() : NULL;
        bool opened = read && given_text_open(&gt, read, lesson, "oom", &diag);
        bool ok = opened && given_text_encode(&gt, "cat cat sat", 11, arena, &bad, &diag);
        size_t made = util_fail_allocation(0);
        util_arena_block_size(0);
        if (ok) {
            assert_int_equal(gt.n, 6);  // c at | Ġcat | Ġ s at
            assert_string_equal(gt.labels[5], "at");
        }
        given_tokenizers_destroy(read);
        arena_destroy(arena);
        if (ok) {
            total = k;
            break;
        }
        if (read)
            assert_true(diag.out_of_memory);
        if (opened)
            assert_int_equal(bad, SIZE_MAX);
        assert_true(made >= k);
    }
    assert_true(total > 10);
}

static void expect_class(bool (*is)(uint32_t), const uint32_t *cps, size_t n, bool want, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (is(cps[i]) != want)
            fail_msg("U+%04X is %s%s", (unsigned)cps[i], want ? "" : "not ", what);
}

// The classes of GPT-2's pre-tokenizer, at the ends of their ranges: A, Z, a, z, the
// feminine ordinal and micro sign are letters (Unicode's L), the characters just outside the
// alphabets are not; 0, 9, the superscripts two, three and one, and SEGMENTED DIGIT NINE
// (U+1FBF9, the last number of Unicode 14) are numbers (N), '/' and ':' are not.
static void test_unicode_classes(void **state) {
    (void)state;
    const uint32_t letters[] = {'A', 'Z', 'a', 'z', 0xAA, 0xB5}, not_letters[] = {'@', '[', '`', '{', '0'};
    const uint32_t numbers[] = {'0', '9', 0xB2, 0xB3, 0xB9, 0x1FBF9}, not_numbers[] = {'/', ':', 'a', 0x1FBFA};
    expect_class(unicode_is_letter, letters, ARRAY_LEN(letters), true, "a letter");
    expect_class(unicode_is_letter, not_letters, ARRAY_LEN(not_letters), false, "a letter");
    expect_class(unicode_is_number, numbers, ARRAY_LEN(numbers), true, "a number");
    expect_class(unicode_is_number, not_numbers, ARRAY_LEN(not_numbers), false, "a number");
}

// utf8_next over characters of one to four bytes: "a", "é" (C3 A9, U+00E9), "猫" (E7 8C AB,
// U+732B) and "😀" (F0 9F 98 80, U+1F600), each moving past its own bytes.
static void test_utf8_next(void **state) {
    (void)state;
    const char *text = "a\xC3\xA9\xE7\x8C\xAB\xF0\x9F\x98\x80";
    const uint32_t want[] = {0x61, 0xE9, 0x732B, 0x1F600};
    const size_t ends[] = {1, 3, 6, 10};
    size_t i = 0;
    for (size_t k = 0; k < ARRAY_LEN(want); k++) {
        assert_int_equal(utf8_next(text, &i), want[k]);
        assert_int_equal(i, ends[k]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_broken_files),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_escapes_and_labels),
        cmocka_unit_test(test_utf8_end),
        cmocka_unit_test(test_load_folder),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_unicode_spaces),
        cmocka_unit_test(test_merge_order),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_load_files),
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_quotes_and_backslashes),
        cmocka_unit_test(test_lesson_reads_tokenizer_once),
        cmocka_unit_test(test_given_text),
        cmocka_unit_test(test_given_text_allocation_failures),
        cmocka_unit_test(test_unicode_classes),
        cmocka_unit_test(test_utf8_next),
    };
    return cmocka_run_group_tests(tests, make_folder, remove_folder);
}
