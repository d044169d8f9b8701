// Tests of tokenizer: GPT-2's byte-level BPE on a small vocabulary written here (GPT-2's 256
// byte tokens, in GPT-2's order, and a few merges), the located refusal of every kind of
// broken file, the labels, and UTF-8 validation. Expected ids are worked out by hand from
// GPT-2's byte order: the printable bytes '!'..'~' are ids 0..93 ('a' is 64), the bytes
// 0..32 that stand for themselves nowhere are ids 188..220 ('\n' is 198, ' ' is 220).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "tokenizer.h"

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

static void test_escapes_and_labels(void **state) {
    (void)state;
    // "\u0120\u00F0\u0141\u013A\u0122" is ĠðŁĺĢ: the bytes 20 F0 9F 98 80 of " 😀" (F0 stands
    // for itself; 9F, 98 and 80 are the 66th, 59th and 35th bytes that do not); "\/\"" is /".
    const char *vocab = vocab_with(", \"\\u0120\\u00F0\\u0141\\u013A\\u0122\": 256, \"\\/\\\"\": 257");
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_broken_files),
        cmocka_unit_test(test_escapes_and_labels),
        cmocka_unit_test(test_utf8_end),
        cmocka_unit_test(test_load_folder),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
