// Tests of the readers of weight files: json (values, escapes, every refusal), weightfile (the
// .npy and .safetensors headers, their checks against the file's length, widening, opening).
// The bytes are written here by hand, byte for byte, from the formats' definitions.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "json.h"
#include "npy_bytes.h"
#include "weightfile.h"

// ---------------------------------------------------------------- json

static const JsonValue *parse(Arena *a, const char *text, char *problem, size_t *at) {
    return json_parse(a, text, strlen(text), problem, 128, at);
}

static void test_json_values(void **state) {
    (void)state;
    Arena *a = arena_create();
    char problem[128];
    size_t at;
    const JsonValue *v = parse(a, " {\"n_embd\": 768, \"eps\": -1e-5, \"x\": 0.5, \"big\": 18446744073709551616,"
                                  " \"ok\": true, \"no\": false, \"none\": null, \"list\": [1, [], {}],"
                                  " \"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"} ",
                               problem, &at);
    assert_non_null(v);
    assert_int_equal(v->kind, JSON_OBJECT);
    assert_int_equal(v->n, 9);
    const JsonValue *n = json_get(v, "n_embd");
    assert_true(n->whole);
    assert_int_equal(n->count, 768);
    assert_true(json_get(v, "eps")->number == -1e-5 && !json_get(v, "eps")->whole);
    assert_true(json_get(v, "x")->number == 0.5 && !json_get(v, "x")->whole);
    assert_false(json_get(v, "big")->whole);  // 2^64 does not fit 64 bits
    assert_true(json_get(v, "ok")->truth);
    assert_false(json_get(v, "no")->truth);
    assert_int_equal(json_get(v, "none")->kind, JSON_NULL);
    assert_int_equal(json_get(v, "list")->n, 3);
    assert_int_equal(json_get(v, "list")->items[1].kind, JSON_ARRAY);
    // é is C3 A9 in UTF-8, U+1F600 is F0 9F 98 80
    assert_string_equal(json_get(v, "s")->text, "a\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
    assert_null(json_get(v, "absent"));
    assert_null(json_get(json_get(v, "x"), "x"));  // not an object
    assert_string_equal(json_kind_name(JSON_OBJECT), "an object");
    // A key written twice is read as Python reads a config.json: the last value.
    v = parse(a, "{\"n_layer\": 12, \"n_head\": 12, \"n_layer\": 2}", problem, &at);
    assert_int_equal(json_get(v, "n_layer")->count, 2);
    assert_int_equal(json_get(v, "n_head")->count, 12);
    v = parse(a, "\"\\u0041\\u07ff\\uffff\"", problem, &at);
    assert_string_equal(v->text, "A\xDF\xBF\xEF\xBF\xBF");
    arena_destroy(a);
}

static void test_json_refusals(void **state) {
    (void)state;
    static const struct {
        const char *text;
        size_t at;
        const char *problem;
    } cases[] = {
        {"", 0, "the text ends where a value should be"},
        {"{\"a\": 1,}", 8, "an object's key must be a string in double quotes"},
        {"{\"a\" 1}", 5, "a ':' must follow an object's key"},
        {"[1 2]", 3, "expected ',' or ']'"},
        {"\"abc", 0, "a string has no closing quote"},
        {"\"a\tb\"", 2, "a string holds a control character; write it as an escape"},
        {"\"\\x\"", 1, "unknown escape \\x in a string"},
        {"\"\\u12g4\"", 5, "a \\u escape needs 4 hexadecimal digits"},
        {"\"\\u12\"", 3, "a \\u escape needs 4 hexadecimal digits"},
        // A surrogate without its other half is refused at its own escape, whatever follows it.
        {"\"\\ud83d\"", 1, "a \\u escape of a high surrogate needs its low surrogate"},
        {"\"\\ud83d\\u0041\"", 1, "a \\u escape of a high surrogate needs its low surrogate"},
        {"\"\\ude00\"", 1, "a \\u escape of a low surrogate without its high one"},
        {"-", 0, "a number needs a digit here"},
        {"012", 0, "a number does not start with 0 in JSON"},
        {"1.", 2, "a number needs a digit after its point"},
        {"1e+", 3, "a number needs a digit in its exponent"},
        {"tru", 0, "expected a value (a number, a string, [...], {...}, true, false or null)"},
        {"1 2", 2, "text follows the value"},
        {"\"\\u0!41\"", 4, "a \\u escape needs 4 hexadecimal digits"},  // '!' sorts below '0'
        {"\"\\u0:41\"", 4, "a \\u escape needs 4 hexadecimal digits"},  // ':' between '9' and 'A'
        {"\"\\\x7f\"", 1, "unknown escape \\? in a string"},
        {"\"\\ud83dx\"", 1, "a \\u escape of a high surrogate needs its low surrogate"},
        {"\"\\ud83d\\n\"", 1, "a \\u escape of a high surrogate needs its low surrogate"},
        {"\"\\ud83d\\uzzzz\"", 9, "a \\u escape needs 4 hexadecimal digits"},
        {"\"\\ud83d\\ue000\"", 1, "a \\u escape of a high surrogate needs its low surrogate"},
        {"-a", 0, "a number needs a digit here"},
        {"-.5", 0, "a number needs a digit here"},
        {"1.x", 2, "a number needs a digit after its point"},
        {"[1.]", 3, "a number needs a digit after its point"},
        {"1. ", 2, "a number needs a digit after its point"},
        {"1e", 2, "a number needs a digit in its exponent"},
        {"[1e]", 3, "a number needs a digit in its exponent"},
        {"[1e,2]", 3, "a number needs a digit in its exponent"},
        {"[", 1, "the text ends where a value should be"},
        {"{", 1, "an object's key must be a string in double quotes"},
        {"{\"a\"", 4, "a ':' must follow an object's key"},
        {"{\"a\": 1,", 8, "an object's key must be a string in double quotes"},
        {"[1", 2, "expected ',' or ']'"},
        {"{\"a\": 1", 7, "expected ',' or '}'"},
        {",", 0, "expected a value (a number, a string, [...], {...}, true, false or null)"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        Arena *a = arena_create();
        char problem[128];
        size_t at;
        assert_null(parse(a, cases[i].text, problem, &at));
        assert_string_equal(problem, cases[i].problem);
        assert_int_equal(at, cases[i].at);
        arena_destroy(a);
    }
    // Nesting beyond the limit is refused where it passes it, not by running out of stack.
    char deep[JSON_MAX_DEPTH + 3];
    memset(deep, '[', sizeof(deep) - 1);
    deep[sizeof(deep) - 1] = '\0';
    Arena *a = arena_create();
    char problem[128];
    size_t at;
    assert_null(parse(a, deep, problem, &at));
    assert_string_equal(problem, "arrays and objects nest more than 64 deep");
    assert_int_equal(at, JSON_MAX_DEPTH + 1);
    arena_destroy(a);
}

static void test_json_out_of_memory(void **state) {
    (void)state;
    // "d" is a number too long to be read on the stack (64 characters and more).
    const char *text = "{\"a\": [1, 2, 3, 4, 5, 6, 7, 8, 9, \"x\"], \"b\": {\"c\": 1.5}, \"d\": "
                       "0.000000000000000000000000000000000000000000000000000000000000000001}";
    util_arena_block_size(1);  // every arena allocation its own, so each can fail
    util_fail_allocation(0);
    Arena *a = arena_create();
    char problem[128];
    size_t at;
    assert_non_null(parse(a, text, problem, &at));
    arena_destroy(a);
    size_t total = util_fail_allocation(0);
    for (size_t n = 1; n <= total; n++) {
        a = arena_create();
        util_fail_allocation(a ? n - 1 : 0);
        if (a && n > 1) {
            const JsonValue *v = parse(a, text, problem, &at);
            util_fail_allocation(0);
            if (!v) {
                assert_string_equal(problem, "out of memory");
                assert_int_equal(at, SIZE_MAX);
            }
        }
        util_fail_allocation(0);
        arena_destroy(a);
    }
    util_arena_block_size(0);
}

// ---------------------------------------------------------------- .npy

// The first value of values first .. first + n - 1 that a lesson cannot hold (SIZE_MAX: none).
static size_t unfit_at(const WeightFile *f, const WeightTensor *t, size_t first, size_t n) {
    size_t at;
    assert_int_equal(weight_find_unfit(f, t, first, n, &at), 0);
    return at;
}

static bool parse_bytes(WeightFormat format, const unsigned char *b, size_t len, WeightFile *f,
                        char *problem) {
    *f = (WeightFile){.arena = arena_create()};
    return weight_parse(f, format, b, len, problem, WEIGHT_PROBLEM_MAX);
}

static void test_npy_headers(void **state) {
    (void)state;
    unsigned char b[512];
    char problem[WEIGHT_PROBLEM_MAX];
    WeightFile f;
    // -2.5 as a big-endian float32 is C0 20 00 00; 1 as a little-endian int32 is 01 00 00 00
    const unsigned char be[] = {0xC0, 0x20, 0, 0, 0x3F, 0x80, 0, 0};
    size_t len = npy(b, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", be, sizeof(be));
    assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
    double out[6];
    assert_int_equal(weight_widen(&f, &f.tensors[0], 0, 2, out), 0);
    assert_true(out[0] == -2.5 && out[1] == 1.0);
    assert_int_equal(unfit_at(&f, &f.tensors[0], 0, 2), SIZE_MAX);
    arena_destroy(f.arena);
    // Fortran order: the file holds the columns of [[1, 2, 3], [4, 5, 6]] one after the other
    const int32_t cols[] = {1, 4, 2, 5, 3, 6};
    len = npy(b, "{\"descr\": \"<i4\", \"fortran_order\": True, \"shape\": (2, 3)}", cols, sizeof(cols));
    assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
    assert_int_equal(weight_widen(&f, &f.tensors[0], 0, 6, out), 0);
    for (int i = 0; i < 6; i++)
        assert_true(out[i] == i + 1);
    arena_destroy(f.arena);
    // A scalar: shape ()
    const double one = 1.0;
    len = npy(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &one, sizeof(one));
    assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
    assert_int_equal(f.tensors[0].rank, 0);
    assert_int_equal(f.tensors[0].count, 1);
    arena_destroy(f.arena);

    static const struct {
        const char *header;
        const char *problem;
    } bad[] = {
        {"['descr']", "its header is not a Python dict"},
        {"{'descr' '<f4'}", "its header is not a Python dict"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
         "its values are records (a structured dtype); the tracer reads one number per value"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
         "its header's fortran_order is neither True nor False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "its header's shape is not a tuple of sizes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}", "its header's shape is not a tuple of sizes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", "its header's shape is not a tuple of sizes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
         "its header's shape has a size too large to count"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", "it has more than 8 axes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,4294967296,4294967296)}",
         "its shape has more values than a 64-bit count can hold"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
         "its header has a key 'x' that .npy files do not have"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,) 'x'}", "its header is not a Python dict"},
        {"{'descr': '<f4', 'shape': (1,)}", "its header lacks fortran_order"},
        {"{'fortran_order': False, 'shape': (1,)}", "its header lacks descr"},
        {"{'descr': '<f4', 'fortran_order': False}", "its header lacks shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "text follows its header's dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
         "its shape and dtype need 12 bytes of values, but the file has 4 (is it cut short?)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}",
         "its shape and dtype need 0 bytes of values, but the file has 4"},
        {"{", "its header is not a Python dict"},
        {"{'descr", "its header is not a Python dict"},
        {"{'de\\scr': '<f4'}", "its header is not a Python dict"},  // no escapes in a key
        {"{'descr': '<f4'", "its header is not a Python dict"},
        {"{'descr': '<f4', 'fortran_order': Fa", "its header's fortran_order is neither True nor False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (", "its header's shape is not a tuple of sizes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1", "its header's shape is not a tuple of sizes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "its header's shape is not a tuple of sizes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1a,)}", "its header's shape is not a tuple of sizes"},
        // 2^64 = 18446744073709551616: 1844674407370955161 * 10 fits, + 6 does not
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
         "its header's shape has a size too large to count"},
        {"{'fortran_ORDER': False}", "its header has a key 'fortran_ORDER' that .npy files do not have"},
        {"{'shapz': (1,)}", "its header has a key 'shapz' that .npy files do not have"},
        {"{'a_key_of_fifty_letters_is_cut_to_forty_xxxxxxxxx': 1}",
         "its header has a key 'a_key_of_fifty_letters_is_cut_to_forty_x' that .npy files do not have"},
    };
    const float value = 1.0f;
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        len = npy(b, bad[i].header, &value, sizeof(value));
        assert_false(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
        assert_string_equal(problem, bad[i].problem);
        arena_destroy(f.arena);
    }
    // An unsupported dtype is read, and refused only by the lesson that uses it.
    len = npy(b, "{'descr': '|u1', 'fortran_order': False, 'shape': (4,)}", &value, sizeof(value));
    assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
    assert_int_equal(f.tensors[0].dtype, WEIGHT_UNSUPPORTED);
    assert_string_equal(f.tensors[0].dtype_name, "|u1");
    arena_destroy(f.arena);
}

static void test_npy_versions_and_magic(void **state) {
    (void)state;
    char problem[WEIGHT_PROBLEM_MAX];
    WeightFile f;
    assert_false(parse_bytes(WEIGHT_NPY, (const unsigned char *)"NUMPY", 5, &f, problem));
    assert_string_equal(problem, "it is not an .npy file (it does not start with \\x93NUMPY)");
    arena_destroy(f.arena);
    unsigned char b[128] = "\x93NUMPY\x04\x00\x00\x00";
    assert_false(parse_bytes(WEIGHT_NPY, b, 10, &f, problem));
    assert_string_equal(problem, "it is an .npy file of version 4, which the tracer does not read");
    arena_destroy(f.arena);
    b[6] = 2;
    assert_false(parse_bytes(WEIGHT_NPY, b, 11, &f, problem));
    assert_string_equal(problem, "it ends inside its header");
    arena_destroy(f.arena);
    // version 2: a 4-byte header length
    const char *header = "{'descr': '<i8', 'fortran_order': False, 'shape': (1,)}";
    size_t h = strlen(header);
    memcpy(b, "\x93NUMPY\x02\x00", 8);
    b[8] = (unsigned char)h, b[9] = b[10] = b[11] = 0;
    memcpy(b + 12, header, h);
    int64_t big = (int64_t)1 << 54;
    memcpy(b + 12 + h, &big, sizeof(big));
    assert_true(parse_bytes(WEIGHT_NPY, b, 12 + h + 8, &f, problem));
    assert_int_equal(unfit_at(&f, &f.tensors[0], 0, 1), 0);  // 2^54 would round
    arena_destroy(f.arena);
    b[9] = 1;  // a header longer than the file
    assert_false(parse_bytes(WEIGHT_NPY, b, 12 + h + 8, &f, problem));
    assert_string_equal(problem, "it ends inside its header");
    arena_destroy(f.arena);
}

// ---------------------------------------------------------------- .safetensors

static size_t safetensors(unsigned char *out, const char *header, const void *data, size_t n) {
    size_t h = strlen(header);
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(out + 8, header, h);
    memcpy(out + 8 + h, data, n);
    return 8 + h + n;
}

static void test_safetensors_values(void **state) {
    (void)state;
    unsigned char b[1024];
    char problem[WEIGHT_PROBLEM_MAX];
    WeightFile f;
    // F16 3C00 is 1, 0001 the smallest subnormal 2^-24, 7C00 infinity, FC00 -infinity;
    // BF16 3F80 is 1, 0001 is 2^-133, the bits of the float 0x00010000.
    const uint16_t halves[] = {0x3C00, 0x0001, 0x7C00, 0xFC00, 0x3F80, 0x0001, 0x7E00};
    const char *header = "{\"__metadata__\": {\"format\": \"pt\"},"
                         " \"h\": {\"dtype\": \"F16\", \"shape\": [2, 2], \"data_offsets\": [0, 8]},"
                         " \"b\": {\"dtype\": \"BF16\", \"shape\": [2], \"data_offsets\": [8, 12]},"
                         " \"n\": {\"dtype\": \"F16\", \"shape\": [1], \"data_offsets\": [12, 14]},"
                         " \"e\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [14, 14]}}";
    size_t len = safetensors(b, header, halves, sizeof(halves));
    assert_true(parse_bytes(WEIGHT_SAFETENSORS, b, len, &f, problem));
    assert_int_equal(f.n_tensors, 4);
    double out[4];
    assert_int_equal(weight_widen(&f, weight_find(&f, "h"), 0, 4, out), 0);
    assert_true(out[0] == 1.0 && out[1] == ldexp(1, -24) && out[2] == INFINITY && out[3] == -INFINITY);
    assert_int_equal(weight_widen(&f, weight_find(&f, "b"), 0, 2, out), 0);
    assert_true(out[0] == 1.0 && out[1] == ldexp(1, -133));
    assert_int_equal(unfit_at(&f, weight_find(&f, "h"), 0, 4), SIZE_MAX);
    assert_int_equal(unfit_at(&f, weight_find(&f, "n"), 0, 1), 0);  // 7E00 is a NaN
    assert_null(weight_find(&f, "__metadata__"));
    arena_destroy(f.arena);
}

// Each entry that lacks a key, or holds one of the wrong kind.
#define NOT_AN_ENTRY "its header's entry for 'a' is not {\"dtype\": ..., \"shape\": [...], \"data_offsets\": [begin, end]}"

static void test_safetensors_refusals(void **state) {
    (void)state;
    static const struct {
        const char *header;
        const char *problem;
    } bad[] = {
        {"[1]", "its header is a list, not an object of tensors"},
        {"{\"a\": 1}", "its header's entry for 'a' is not {\"dtype\": ..., \"shape\": [...], "
                       "\"data_offsets\": [begin, end]}"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 4]}}",
         "tensor 'a' has more than 8 axes"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}",
         "tensor 'a' has a shape that is not a list of sizes"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}",
         "tensor 'a' has data_offsets that are not [begin, end]"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4.0]}}",
         "tensor 'a' has data_offsets that are not [begin, end]"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 0]}}",
         "tensor 'a' has data_offsets that end before they begin"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296], \"data_offsets\": [0, 4]}}",
         "tensor 'a' has more values than a 64-bit count can hold"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
         " \"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
         "its header names tensor 'a' twice"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
         " \"z\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [4, 4]},"
         " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
         "tensors 'a' and 'b' overlap in the file"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 12]}}",
         "tensor 'a' has data_offsets that run past the end of the file (12 bytes of values, 8 in "
         "the file; is it cut short?)"},
        {"{\"a\" 1}", "its header is not JSON: a ':' must follow an object's key (at byte 13 of the file)"},
        {"{\"a\": {\"shape\": [1], \"data_offsets\": [0, 4]}}",
         NOT_AN_ENTRY},
        {"{\"a\": {\"dtype\": 1, \"shape\": [1], \"data_offsets\": [0, 4]}}",
         NOT_AN_ENTRY},
        {"{\"a\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}",
         NOT_AN_ENTRY},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": 1, \"data_offsets\": [0, 4]}}",
         NOT_AN_ENTRY},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}",
         NOT_AN_ENTRY},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": 0}}",
         NOT_AN_ENTRY},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [\"1\"], \"data_offsets\": [0, 4]}}",
         "tensor 'a' has a shape that is not a list of sizes"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [null, 4]}}",
         "tensor 'a' has data_offsets that are not [begin, end]"},
        // Both begin at 0: sorted by where they end, "b" (4) comes before "a" (8).
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
         " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
         "tensors 'b' and 'a' overlap in the file"},
    };
    unsigned char b[1024];
    char problem[WEIGHT_PROBLEM_MAX];
    WeightFile f;
    const float values[] = {1, 2};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        size_t len = safetensors(b, bad[i].header, values, sizeof(values));
        assert_false(parse_bytes(WEIGHT_SAFETENSORS, b, len, &f, problem));
        assert_string_equal(problem, bad[i].problem);
        arena_destroy(f.arena);
    }
    assert_false(parse_bytes(WEIGHT_SAFETENSORS, b, 7, &f, problem));
    assert_string_equal(problem, "it is too short for a .safetensors file (7 bytes)");
    arena_destroy(f.arena);
    memset(b, 0xFF, 8);
    assert_false(parse_bytes(WEIGHT_SAFETENSORS, b, 16, &f, problem));
    assert_string_equal(problem, "its first 8 bytes give a header of 18446744073709551615 bytes, more "
                                 "than the 104857600 a .safetensors file may have");
    arena_destroy(f.arena);
    memset(b, 0, 8);
    b[0] = 100;
    assert_false(parse_bytes(WEIGHT_SAFETENSORS, b, 16, &f, problem));
    assert_string_equal(problem, "its header is 100 bytes, but the file ends after 8 (is it cut short?)");
    arena_destroy(f.arena);
}

// ---------------------------------------------------------------- files

static void test_open(void **state) {
    (void)state;
    char problem[WEIGHT_PROBLEM_MAX];
    int err;
    assert_null(weight_open("/nonexistent/w.npy", WEIGHT_NPY, problem, sizeof(problem), &err));
    assert_string_equal(problem, "No such file or directory");
    assert_null(weight_open("/tmp", WEIGHT_NPY, problem, sizeof(problem), &err));
    assert_string_equal(problem, "Is a directory");
    assert_null(weight_open("/dev/null", WEIGHT_NPY, problem, sizeof(problem), &err));
    assert_string_equal(problem, "it is a device, not a file");
    assert_int_equal(err, FILES_IS_DEVICE);
    char path[] = "/tmp/test_weightfile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    // An empty file is mapped as nothing, and refused for what it lacks.
    assert_null(weight_open(path, WEIGHT_SAFETENSORS, problem, sizeof(problem), &err));
    assert_string_equal(problem, "it is too short for a .safetensors file (0 bytes)");
    unsigned char b[256];
    const int64_t ids[] = {464, 3797, 3332};
    size_t len = npy(b, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", ids, sizeof(ids));
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    close(fd);
    WeightFile *f = weight_open(path, WEIGHT_NPY, problem, sizeof(problem), &err);
    assert_non_null(f);
    double out[3];
    assert_int_equal(weight_widen(f, &f->tensors[0], 1, 2, out), 0);
    assert_true(out[0] == 3797 && out[1] == 3332);
    assert_int_equal(weight_dtype_size(WEIGHT_BF16), 2);
    weight_close(f);
    weight_close(NULL);
    // Memory that runs out at each allocation in turn is reported as such.
    util_fail_allocation(0);
    weight_close(weight_open(path, WEIGHT_NPY, problem, sizeof(problem), &err));
    size_t total = util_fail_allocation(0);
    for (size_t n = 1; n <= total; n++) {
        util_fail_allocation(n);
        f = weight_open(path, WEIGHT_NPY, problem, sizeof(problem), &err);
        util_fail_allocation(0);
        if (!f)
            assert_int_equal(err, ENOMEM);
        weight_close(f);
    }
    unlink(path);
}

// A file cut short after it was opened (numpy.save writing it again while a lesson runs): its
// values past the new end are an error, never a signal. A mapping of it would end the program
// with SIGBUS at the first value read past the end; reading the file, the tracer finds the end.
static void test_cut_short_while_read(void **state) {
    (void)state;
    char path[] = "/tmp/test_weightfile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    // 100,000 doubles: 800,000 bytes, many pages and many blocks read
    enum { N = 100000 };
    static double values[N];
    for (size_t i = 0; i < N; i++)
        values[i] = (double)i;
    static unsigned char b[N * 8 + 128];
    char header[128];
    snprintf(header, sizeof(header), "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }", N);
    size_t len = npy(b, header, values, sizeof(values));
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    char problem[WEIGHT_PROBLEM_MAX];
    int err;
    WeightFile *f = weight_open(path, WEIGHT_NPY, problem, sizeof(problem), &err);
    assert_non_null(f);
    static double out[N];
    size_t at;
    assert_int_equal(weight_widen(f, &f->tensors[0], 0, N, out), 0);
    assert_true(out[N - 1] == N - 1);
    assert_int_equal(ftruncate(fd, (off_t)(len / 2)), 0);
    // the first values are still there; the last are not
    assert_int_equal(weight_widen(f, &f->tensors[0], 0, 10, out), 0);
    assert_true(out[9] == 9);
    assert_int_equal(weight_widen(f, &f->tensors[0], 0, N, out), FILES_CUT_SHORT);
    assert_int_equal(weight_find_unfit(f, &f->tensors[0], N - 1, 1, &at), FILES_CUT_SHORT);
    assert_string_equal(files_error_text(FILES_CUT_SHORT),
                        "it is now shorter than when it was opened: it changed while it was read");
    weight_close(f);
    close(fd);
    unlink(path);
}

// ---------------------------------------------------------------- json, every path of the grammar

static void test_json_corners(void **state) {
    (void)state;
    Arena *a = arena_create();
    char problem[128];
    size_t at;
    // Tabs and carriage returns are white space too (RFC 8259, ws).
    const JsonValue *v = parse(a, " \t\r\n7\r\n\t", problem, &at);
    assert_non_null(v);
    assert_true(v->whole && v->count == 7 && v->number == 7.0);
    // Numbers that end the text, with each form of fraction and exponent.
    static const struct {
        const char *text;
        double number;
        bool whole;
    } numbers[] = {
        {"0", 0.0, true},     {"1.5", 1.5, false},  {"1E2", 100.0, false}, {"1e5", 1e5, false},
        {"2E+3", 2e3, false}, {"0.25", 0.25, false}, {"-0", 0.0, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(numbers); i++) {
        v = parse(a, numbers[i].text, problem, &at);
        assert_non_null(v);
        assert_int_equal(v->kind, JSON_NUMBER);
        assert_true(v->number == numbers[i].number);
        assert_int_equal(v->whole, numbers[i].whole);
    }
    // The same, ended by a bracket, which sorts above the digits in ASCII.
    v = parse(a, "[0,1e5]", problem, &at);
    assert_non_null(v);
    assert_true(v->n == 2 && v->items[0].count == 0 && v->items[1].number == 1e5);
    // Upper-case hexadecimal: U+00C9 (É) is C3 89 in UTF-8, U+ABCD is EA AF 8D.
    v = parse(a, "\"\\u00C9\\uABCD\"", problem, &at);
    assert_non_null(v);
    assert_string_equal(v->text, "\xC3\x89\xEA\xAF\x8D");
    assert_int_equal(v->len, 5);
    assert_null(json_get(NULL, "x"));
    assert_string_equal(json_kind_name(JSON_NULL), "null");
    // A backslash before a NUL byte: the byte is not an escape, and is shown as '?'.
    assert_null(json_parse(a, "\"\\\0\"", 4, problem, sizeof(problem), &at));
    assert_string_equal(problem, "unknown escape \\? in a string");
    assert_int_equal(at, 1);
    arena_destroy(a);
}

// Numbers read the way strtod reads them, whole ones counted exactly: 2^53 + 1 is a whole
// count whose nearest double is 2^53 (a tie, to the even one), 2^64 - 1 the largest count (its
// double 2^64), 2^64 one too many; 10^24 and 10^-66 (written with 67 digits) are read by strtod.
static void test_json_numbers(void **state) {
    (void)state;
    Arena *a = arena_create();
    char problem[128];
    size_t at;
    static const struct {
        const char *text;
        bool whole;
        uint64_t count;
        double number;
    } numbers[] = {
        {"9007199254740992", true, 9007199254740992u, 9007199254740992.0},
        {"9007199254740993", true, 9007199254740993u, 9007199254740992.0},
        {"12345678901234567890", true, 12345678901234567890u, 12345678901234567890.0},
        {"18446744073709551615", true, UINT64_MAX, 18446744073709551616.0},
        {"18446744073709551616", false, 0, 18446744073709551616.0},
        {"1000000000000000000000000", false, 0, 1e24},
        {"-12", false, 0, -12.0},
        {"0.000000000000000000000000000000000000000000000000000000000000000001", false, 0, 1e-66},
    };
    for (size_t i = 0; i < ARRAY_LEN(numbers); i++) {
        const JsonValue *v = parse(a, numbers[i].text, problem, &at);
        assert_non_null(v);
        assert_int_equal(v->whole, numbers[i].whole);
        assert_true(v->count == numbers[i].count);
        assert_true(v->number == numbers[i].number);
    }
    arena_destroy(a);
}

// The pieces json_parse reads with, read one at a time as a caller with no tree reads them:
// each problem with its kind and where it is, and nothing read after the first.
static void test_json_cursor(void **state) {
    (void)state;
    const char *text = " {\"a\\u0120\": 12,\n \"b\" : 3 } ";
    JsonCursor c = {.text = text, .len = strlen(text)};
    char key[32];
    size_t n;
    JsonValue v;
    assert_true(json_open(&c, '{'));
    assert_true(json_next_item(&c, '}', 0));
    assert_true(json_read_string(&c, key, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(key, "a\xC4\xA0", 4);  // U+0120 is C4 A0, and a NUL follows
    assert_true(json_colon(&c) && json_read_number(&c, &v));
    assert_true(v.whole && v.count == 12 && v.offset == 13);  // the 1 of 12
    assert_true(json_next_item(&c, '}', 1));
    assert_true(json_read_string(&c, key, &n) && json_colon(&c) && json_read_number(&c, &v));
    assert_true(n == 1 && key[0] == 'b' && v.count == 3);
    assert_false(json_next_item(&c, '}', 2));
    assert_int_equal(c.error, JSON_OK);
    assert_true(json_end(&c));

    static const struct {
        const char *text;
        JsonError error;
        size_t at;
    } broken[] = {
        {"[1]", JSON_ERROR_OPEN, 0},
        {"{1: 2}", JSON_ERROR_KEY, 1},
        {"{\"a\" 1}", JSON_ERROR_COLON, 5},
        {"{\"a\": 1 \"b\": 2}", JSON_ERROR_SEPARATOR, 8},
        {"{\"a\": 01}", JSON_ERROR_NUMBER, 6},
        {"{\"a\x01\": 1}", JSON_ERROR_CONTROL, 3},
        {"{\"a\x01", JSON_ERROR_UNCLOSED, 1},  // told before what is inside
        {"{\"\\x\": 1}", JSON_ERROR_ESCAPE, 2},
        {"{\"\\u00g0\": 1}", JSON_ERROR_HEX, 6},
        {"{\"\\ud800x\": 1}", JSON_ERROR_HIGH_SURROGATE, 2},
        {"{\"\\udc00\": 1}", JSON_ERROR_LOW_SURROGATE, 2},
        {"{\"a\": 1} x", JSON_ERROR_TRAILING, 9},
    };
    for (size_t i = 0; i < ARRAY_LEN(broken); i++) {
        c = (JsonCursor){.text = broken[i].text, .len = strlen(broken[i].text)};
        if (json_open(&c, '{'))
            for (size_t k = 0; json_next_item(&c, '}', k); k++)
                if (!json_read_string(&c, key, &n) || !json_colon(&c) || !json_read_number(&c, &v))
                    break;
        if (!c.error)
            json_end(&c);
        if (c.error != broken[i].error || c.error_at != broken[i].at)
            fail_msg("case %zu: error %d at %zu", i, (int)c.error, c.error_at);
        assert_true(c.problem[0] != '\0');
        assert_false(json_next_item(&c, '}', 1) || json_colon(&c) || json_end(&c));
    }
    // A text that ends in a backslash inside a string: nothing past its end is read (a block
    // of its exact length, for AddressSanitizer).
    char *cut = malloc(4);
    assert_non_null(cut);
    memcpy(cut, "{\"a\\", 4);
    c = (JsonCursor){.text = cut, .len = 4};
    assert_true(json_open(&c, '{') && json_next_item(&c, '}', 0));
    assert_false(json_read_string(&c, key, &n));
    assert_int_equal(c.error, JSON_ERROR_UNCLOSED);
    assert_int_equal(c.error_at, 1);
    free(cut);
}

// ---------------------------------------------------------------- .npy and .safetensors, corners

static void test_npy_corners(void **state) {
    (void)state;
    unsigned char b[512];
    char problem[WEIGHT_PROBLEM_MAX];
    WeightFile f;
    const float value = 1.0f;
    // '=' is the writer's own byte order, little-endian here: 1.0f is 00 00 80 3F.
    size_t len = npy(b, "{'descr': '=f4', 'fortran_order': False, 'shape': (1,)}", &value, sizeof(value));
    assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
    assert_int_equal(f.tensors[0].dtype, WEIGHT_F32);
    assert_false(f.tensors[0].big_endian);
    double out[3];
    assert_int_equal(weight_widen(&f, &f.tensors[0], 0, 1, out), 0);
    assert_true(out[0] == 1.0);
    arena_destroy(f.arena);
    // Codes the tracer does not read: no byte-order mark, or not three letters.
    static const char *const unread[] = {"{'descr': 'xf4', 'fortran_order': False, 'shape': (1,)}",
                                         "{'descr': 'O', 'fortran_order': False, 'shape': (1,)}"};
    for (size_t i = 0; i < ARRAY_LEN(unread); i++) {
        len = npy(b, unread[i], &value, sizeof(value));
        assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
        assert_int_equal(f.tensors[0].dtype, WEIGHT_UNSUPPORTED);
        arena_destroy(f.arena);
    }
    // Fortran order of one axis is C order: the values in file order.
    const int32_t v[] = {5, -6, 7};
    len = npy(b, "{'descr': '<i4', 'fortran_order': True, 'shape': (3,)}", v, sizeof(v));
    assert_true(parse_bytes(WEIGHT_NPY, b, len, &f, problem));
    assert_int_equal(weight_widen(&f, &f.tensors[0], 0, 3, out), 0);
    assert_true(out[0] == 5 && out[1] == -6 && out[2] == 7);
    arena_destroy(f.arena);
    // Ten bytes that do not begin with the magic.
    assert_false(parse_bytes(WEIGHT_NPY, (const unsigned char *)"NUMPY\x01\x00\x00\x00\x00", 10, &f, problem));
    assert_string_equal(problem, "it is not an .npy file (it does not start with \\x93NUMPY)");
    arena_destroy(f.arena);
    // Version 3 has version 2's 4-byte header length (little-endian): here 0x38 = 56 bytes.
    const char *header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} ";
    assert_int_equal(strlen(header), 0x38);
    memcpy(b, "\x93NUMPY\x03\x00\x38\x00\x00\x00", 12);
    memcpy(b + 12, header, 0x38);
    const double half = 0.5;
    memcpy(b + 12 + 0x38, &half, sizeof(half));
    assert_true(parse_bytes(WEIGHT_NPY, b, 12 + 0x38 + 8, &f, problem));
    assert_int_equal(f.tensors[0].begin, 12 + 0x38);
    assert_int_equal(weight_widen(&f, &f.tensors[0], 0, 1, out), 0);
    assert_true(out[0] == 0.5);
    arena_destroy(f.arena);
}

static void test_safetensors_corners(void **state) {
    (void)state;
    unsigned char b[1024];
    char problem[WEIGHT_PROBLEM_MAX];
    WeightFile f;
    // A header of no tensors is a file of no tensors.
    size_t len = safetensors(b, "{}", "", 0);
    assert_true(parse_bytes(WEIGHT_SAFETENSORS, b, len, &f, problem));
    assert_int_equal(f.n_tensors, 0);
    arena_destroy(f.arena);
    // One tensor of each integer width and a double, little-endian as the format says: I32 -1 is
    // FF FF FF FF; I64 -2^53 is a double, -2^53 - 1 is not.
    unsigned char data[4 + 16 + 8];
    const int32_t i32 = -1;
    const int64_t i64[] = {-((int64_t)1 << 53), -((int64_t)1 << 53) - 1};
    const double f64 = -0.125;
    memcpy(data, &i32, 4);
    memcpy(data + 4, i64, 16);
    memcpy(data + 20, &f64, 8);
    len = safetensors(b, "{\"i\": {\"dtype\": \"I32\", \"shape\": [], \"data_offsets\": [0, 4]},"
                         " \"l\": {\"dtype\": \"I64\", \"shape\": [2], \"data_offsets\": [4, 20]},"
                         " \"d\": {\"dtype\": \"F64\", \"shape\": [1, 1], \"data_offsets\": [20, 28]}}",
                      data, sizeof(data));
    assert_true(parse_bytes(WEIGHT_SAFETENSORS, b, len, &f, problem));
    double out[2];
    assert_int_equal(weight_widen(&f, weight_find(&f, "i"), 0, 1, out), 0);
    assert_true(out[0] == -1.0);
    assert_int_equal(weight_widen(&f, weight_find(&f, "l"), 0, 2, out), 0);
    assert_true(out[0] == -9007199254740992.0);
    assert_int_equal(unfit_at(&f, weight_find(&f, "l"), 0, 2), 1);
    assert_int_equal(weight_widen(&f, weight_find(&f, "d"), 0, 1, out), 0);
    assert_true(out[0] == -0.125);
    arena_destroy(f.arena);
    // A single tensor needs no check of overlaps.
    len = safetensors(b, "{\"i\": {\"dtype\": \"I32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", &i32, 4);
    assert_true(parse_bytes(WEIGHT_SAFETENSORS, b, len, &f, problem));
    assert_int_equal(f.n_tensors, 1);
    arena_destroy(f.arena);
}

// Every allocation of a parse fails in turn, each arena allocation its own: the parse either
// succeeds or says "out of memory", never anything else.
static void parse_out_of_memory(WeightFormat format, const unsigned char *b, size_t len) {
    char problem[WEIGHT_PROBLEM_MAX];
    util_arena_block_size(1);
    util_fail_allocation(0);
    WeightFile f = {.arena = arena_create()};
    assert_true(weight_parse(&f, format, b, len, problem, sizeof(problem)));
    arena_destroy(f.arena);
    size_t total = util_fail_allocation(0);
    size_t refused = 0;
    for (size_t n = 2; n <= total; n++) {
        f = (WeightFile){.arena = arena_create()};
        assert_non_null(f.arena);
        util_fail_allocation(n - 1);
        bool ok = weight_parse(&f, format, b, len, problem, sizeof(problem));
        util_fail_allocation(0);
        if (!ok) {
            assert_string_equal(problem, "out of memory");
            refused++;
        }
        arena_destroy(f.arena);
    }
    assert_true(refused > 0);
    util_arena_block_size(0);
}

static void test_parse_out_of_memory(void **state) {
    (void)state;
    unsigned char b[512];
    const float values[] = {1, 2};
    size_t len = npy(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", values, sizeof(values));
    parse_out_of_memory(WEIGHT_NPY, b, len);
    len = safetensors(b, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
                         " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
                      values, sizeof(values));
    parse_out_of_memory(WEIGHT_SAFETENSORS, b, len);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_json_refusals),
        cmocka_unit_test(test_json_out_of_memory),
        cmocka_unit_test(test_npy_headers),
        cmocka_unit_test(test_npy_versions_and_magic),
        cmocka_unit_test(test_safetensors_values),
        cmocka_unit_test(test_safetensors_refusals),
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_cut_short_while_read),
        cmocka_unit_test(test_json_corners),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_json_cursor),
        cmocka_unit_test(test_npy_corners),
        cmocka_unit_test(test_safetensors_corners),
        cmocka_unit_test(test_parse_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
