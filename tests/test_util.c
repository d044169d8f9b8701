// Tests of the modules everything stands on: util (overflow-checked sizes, the allocation
// wrapper and its failure hook, arenas, growable strings), tensor (shapes and their text,
// row-major offsets, creation and copies) and sha256 (its digests).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "sha256.h"
#include "tensor.h"
#include "util.h"

// ---------------------------------------------------------------- util

static void test_size_arithmetic(void **state) {
    (void)state;
    size_t out = 7;
    assert_true(util_mul_size(0, SIZE_MAX, &out));
    assert_int_equal(out, 0);
    assert_true(util_mul_size(3, 4, &out));
    assert_int_equal(out, 12);
    assert_false(util_mul_size(SIZE_MAX / 2 + 1, 2, &out));  // 2^64 does not fit
    assert_true(util_add_size(SIZE_MAX - 1, 1, &out));
    assert_int_equal(out, SIZE_MAX);
    assert_false(util_add_size(SIZE_MAX, 1, &out));
}

// The hook fails the n-th allocation from now, whichever wrapper makes it, and counts them.
static void test_failure_hook(void **state) {
    (void)state;
    util_fail_allocation(2);
    void *first = util_malloc(8);
    assert_non_null(first);
    assert_null(util_strdup("second"));
    char *third = util_strdup("third");
    assert_string_equal(third, "third");
    assert_int_equal(util_fail_allocation(0), 3);
    util_free(first);
    util_free(third);
    assert_null(util_calloc(SIZE_MAX / 2, 4));  // count * size overflows: no allocation at all
    util_fail_allocation(1);
    assert_null(util_realloc(NULL, 16));
    util_fail_allocation(0);
    void *zero = util_calloc(0, 8);  // a zero size still gives a pointer to free
    assert_non_null(zero);
    util_free(zero);
}

static void test_arena(void **state) {
    (void)state;
    Arena *a = arena_create();
    char *empty = arena_alloc(a, 0);  // still a distinct, aligned place
    char *one = arena_alloc(a, 1);
    assert_non_null(empty);
    assert_true(one > empty);
    assert_int_equal((uintptr_t)one % _Alignof(max_align_t), 0);
    assert_null(arena_alloc(a, SIZE_MAX));              // rounding up overflows
    assert_null(arena_alloc(a, SIZE_MAX - 20));         // the block header no longer fits
    assert_null(arena_array(a, SIZE_MAX / 2, 4));       // count * size overflows
    char *big = arena_alloc(a, 100000);                 // larger than a block: one of its own
    assert_non_null(big);
    big[99999] = 'x';
    assert_string_equal(arena_printf(a, "%d %s", 42, "tokens"), "42 tokens");
    const char *nothing = arena_printf(a, "%s", "");  // empty text is text, not a failure
    assert_non_null(nothing);
    assert_string_equal(nothing, "");
    // text of every length around the 256 bytes printed on the stack comes out whole
    for (int width = 250; width < 262; width++) {
        char want[300];
        snprintf(want, sizeof(want), "%0*d!", width, 7);
        const char *got = arena_printf(a, "%0*d!", width, 7);
        assert_non_null(got);
        assert_string_equal(got, want);
    }
    assert_string_equal(arena_strndup(a, "abcdef", 3), "abc");
    arena_destroy(a);
    arena_destroy(NULL);
}

// Clearing an arena keeps its newest block, empty, and frees the others: the next allocation
// starts that block again. Each request of 100000 bytes is larger than a block, so gets one of
// its own, and the newest is the third.
static void test_arena_cleared(void **state) {
    (void)state;
    Arena *a = arena_create();
    arena_clear(a);  // nothing to clear yet
    char *first = arena_alloc(a, 100000), *second = arena_alloc(a, 100000), *third = arena_alloc(a, 100000);
    assert_non_null(first);
    assert_non_null(second);
    assert_non_null(third);
    third[0] = 'y';
    arena_clear(a);
    char *again = arena_alloc(a, 100000);
    assert_ptr_equal(again, third);
    assert_int_equal(again[0], 0);  // zeroed again
    again[99999] = 'x';
    char *more = arena_alloc(a, 16);  // the kept block is full: a new one
    assert_non_null(more);
    assert_true(more < again || more >= again + 100000);
    arena_destroy(a);
}

static void test_strbuf(void **state) {
    (void)state;
    StrBuf sb;
    strbuf_init(&sb);
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_append(&sb, "", 0);  // an empty append leaves an empty, readable string
    assert_string_equal(strbuf_str(&sb), "");
    for (int i = 0; i < 100; i++)
        strbuf_printf(&sb, "%02d", i);
    assert_int_equal(sb.len, 200);
    assert_memory_equal(sb.data + 198, "99", 2);
    strbuf_finish(&sb);
    // A failed append drops the rest and stays failed.
    strbuf_init(&sb);
    util_fail_allocation(1);
    strbuf_puts(&sb, "lost");
    util_fail_allocation(0);
    strbuf_putc(&sb, 'x');
    assert_true(sb.failed);
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_finish(&sb);
}

// printf into the room a buffer has left, for every length around the edge of that room (text
// that fits, that fits but for its NUL, that does not fit), and characters one at a time
// across a growth: each time the text is what was asked for, whole.
static void test_strbuf_printf_at_the_edge_of_its_room(void **state) {
    (void)state;
    for (size_t before = 50; before < 70; before++)
        for (int width = 1; width < 20; width++) {
            StrBuf sb;
            strbuf_init(&sb);
            char want[128];
            memset(want, 'a', before);
            strbuf_append(&sb, want, before);
            strbuf_printf(&sb, "%0*d", width, 7);
            snprintf(want + before, sizeof(want) - before, "%0*d", width, 7);
            assert_false(sb.failed);
            assert_int_equal(sb.len, before + (size_t)width);
            assert_string_equal(strbuf_str(&sb), want);
            strbuf_finish(&sb);
        }
    StrBuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < 1000; i++)
        strbuf_putc(&sb, (char)('a' + i % 26));
    assert_int_equal(sb.len, 1000);
    assert_int_equal(strlen(strbuf_str(&sb)), 1000);
    assert_int_equal(sb.data[999], 'a' + 999 % 26);
    strbuf_finish(&sb);
}

// A string repeated: a rule of box-drawing characters (three bytes each) and padding of one
// byte, none at all, and a count whose bytes overflow, which fails the buffer.
static void test_strbuf_repeat(void **state) {
    (void)state;
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "[");
    strbuf_repeat(&sb, " ", 3);
    strbuf_repeat(&sb, "\u2500", 4);
    strbuf_repeat(&sb, "x", 0);
    strbuf_puts(&sb, "]");
    assert_false(sb.failed);
    assert_string_equal(strbuf_str(&sb), "[   \u2500\u2500\u2500\u2500]");
    assert_int_equal(sb.len, 1 + 3 + 4 * 3 + 1);
    for (int i = 0; i < 200; i++)  // across growths
        strbuf_repeat(&sb, "ab", 7);
    assert_int_equal(sb.len, 17 + 200 * 14);
    assert_int_equal(strlen(strbuf_str(&sb)), sb.len);
    assert_memory_equal(sb.data + sb.len - 4, "abab", 4);
    strbuf_repeat(&sb, "ab", SIZE_MAX / 2 + 1);
    assert_true(sb.failed);
    strbuf_finish(&sb);
}

// A sink that refuses to be written (a full disk) fails the buffer and keeps why; the text is
// dropped, not kept growing.
static void test_strbuf_sink_that_fails(void **state) {
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        skip();
    setvbuf(full, NULL, _IONBF, 0);  // unbuffered: the write itself meets the full disk
    StrBuf sb;
    strbuf_init(&sb);
    sb.sink = full;
    strbuf_puts(&sb, "a trace");
    assert_false(strbuf_flush(&sb));
    assert_true(sb.failed);
    assert_int_equal(sb.sink_errno, ENOSPC);
    assert_string_equal(strbuf_str(&sb), "");
    assert_false(strbuf_flush(&sb));  // still failed, and nothing more is written
    strbuf_finish(&sb);
    fclose(full);
}

// Text printf cannot encode (a wide character outside the C locale's ASCII) fails the string
// instead of leaving part of it.
static void test_printf_that_cannot_encode(void **state) {
    (void)state;
    Arena *a = arena_create();
    assert_null(arena_printf(a, "%lc", (wint_t)0xE9));
    arena_destroy(a);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%lc", (wint_t)0xE9);
    assert_true(sb.failed);
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_finish(&sb);
}

// A length past half of SIZE_MAX stops doubling and asks for exactly what is needed, which
// no allocator gives: the buffer fails and nothing is copied.
static void test_strbuf_past_half_of_memory(void **state) {
    (void)state;
    StrBuf sb;
    strbuf_init(&sb);
    util_fail_allocation(1);  // stands for the allocator refusing SIZE_MAX / 2 + 2 bytes
    strbuf_append(&sb, "x", SIZE_MAX / 2 + 1);
    util_fail_allocation(0);
    assert_true(sb.failed);
    assert_int_equal(sb.cap, 0);
    strbuf_finish(&sb);
}

// ---------------------------------------------------------------- tensor

static void test_shape_text(void **state) {
    (void)state;
    Shape s = {3, {2, 30, 400}};
    char buf[64];
    shape_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "[2, 30, 400]");
    shape_format(&(Shape){0}, buf, sizeof(buf));
    assert_string_equal(buf, "[]");
    char small[6];  // cut, but always terminated
    shape_format(&s, small, sizeof(small));
    assert_string_equal(small, "[2, 3");
    Shape widest = {4, {0, SIZE_MAX, 10, 1}};  // 2^64 - 1 has 20 digits
    shape_format(&widest, buf, sizeof(buf));
    assert_string_equal(buf, "[0, 18446744073709551615, 10, 1]");
    // the longest text a shape has: every dimension of the largest rank with 20 digits
    _Static_assert(TENSOR_MAX_RANK == 4, "the longest shape below has the largest rank");
    Shape longest = {4, {SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX}};
    char room[96];
    shape_format(&longest, room, sizeof(room));
    assert_string_equal(room, "[18446744073709551615, 18446744073709551615, 18446744073709551615, "
                              "18446744073709551615]");
}

// Blocks of every size, small ones from the huge-page region and large ones from the C library:
// each aligned as malloc's, none overlapping another, each keeping what was written to it.
// 1,500 blocks of up to 300,000 bytes pass the region's 8 MiB, so later ones come from malloc.
static void test_blocks_of_every_size(void **state) {
    (void)state;
    enum { N = 1500 };
    static unsigned char *blocks[N];
    static size_t sizes[N];
    uint64_t r = 7;
    for (size_t i = 0; i < N; i++) {
        r = r * 6364136223846793005u + 1442695040888963407u;
        sizes[i] = i % 10 == 9 ? (size_t)(r >> 40) % 300000 : (size_t)(r >> 40) % 2000;
        blocks[i] = util_malloc(sizes[i]);
        assert_non_null(blocks[i]);
        assert_int_equal((uintptr_t)blocks[i] % 16, 0);
        memset(blocks[i], (int)(i % 251), sizes[i]);
        if (i % 3 == 0) {  // freed early: its block serves a later size of its class
            util_free(blocks[i]);
            blocks[i] = NULL;
        }
    }
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; blocks[i] && k < sizes[i]; k++)
            if (blocks[i][k] != (unsigned char)(i % 251))
                fail_msg("block %zu of %zu bytes changed at byte %zu", i, sizes[i], k);
    for (size_t i = 0; i < N; i++)
        util_free(blocks[i]);
}

// A block freed dirty and handed out again by calloc is zeros; realloc keeps what a block held
// when it grows within its size class, into a larger class and past the region to malloc's,
// and when it shrinks.
static void test_calloc_and_realloc_keep_their_promises(void **state) {
    (void)state;
    unsigned char *dirty = util_malloc(100);
    assert_non_null(dirty);
    memset(dirty, 0xab, 100);
    util_free(dirty);
    unsigned char *zeros = util_calloc(25, 4);
    assert_non_null(zeros);
    for (size_t k = 0; k < 100; k++)
        assert_int_equal(zeros[k], 0);
    util_free(zeros);

    unsigned char *p = util_malloc(20);
    assert_non_null(p);
    for (size_t k = 0; k < 20; k++)
        p[k] = (unsigned char)(k * 7 % 256);
    size_t grown[] = {30, 1000, 5000, 70000, 400000, 1 << 20, 10};
    size_t kept = 20;
    for (size_t g = 0; g < sizeof(grown) / sizeof(grown[0]); g++) {
        p = util_realloc(p, grown[g]);
        assert_non_null(p);
        size_t check = grown[g] < kept ? grown[g] : kept;
        for (size_t k = 0; k < check; k++)
            if (p[k] != (unsigned char)(k * 7 % 256))
                fail_msg("realloc to %zu bytes lost byte %zu", grown[g], k);
        for (size_t k = 0; k < grown[g]; k++)
            p[k] = (unsigned char)(k * 7 % 256);
        kept = grown[g];
    }
    util_free(p);
}

// Offsets in row-major order: [1, 2, 3] of [2, 3, 4] is 1*12 + 2*4 + 3 = 23, and back.
static void test_flatten(void **state) {
    (void)state;
    Shape s = {3, {2, 3, 4}};
    size_t idx[3] = {1, 2, 3}, back[3];
    assert_int_equal(shape_flatten(&s, idx), 23);
    shape_unflatten(&s, 23, back);
    assert_memory_equal(back, idx, sizeof(idx));
    Shape empty = {2, {0, 3}};  // an axis of size 0 has only index 0
    shape_unflatten(&empty, 5, back);
    assert_int_equal(back[0], 0);
    assert_int_equal(back[1], 2);
}

static void test_create_and_copy(void **state) {
    (void)state;
    Shape huge = {2, {SIZE_MAX / 2, 4}};
    assert_null(tensor_create(&huge));  // more values than can be counted
    Tensor *t = tensor_create(&(Shape){1, {3}});
    t->data[2] = 0.5;
    t->is_count = true;
    Tensor *c = tensor_copy(t);
    assert_int_equal(c->size, 3);
    assert_true(c->data[2] == 0.5 && c->is_count);
    Tensor *shape_only = tensor_create_shape_only(&(Shape){2, {768, 50257}});
    Tensor *c2 = tensor_copy(shape_only);
    assert_null(c2->data);
    assert_int_equal(c2->size, 768 * 50257);
    tensor_destroy(t);
    tensor_destroy(c);
    tensor_destroy(shape_only);
    tensor_destroy(c2);
    tensor_destroy(NULL);
}

// ---------------------------------------------------------------- sha256

// The digest of len bytes, added in pieces of at most piece bytes, as hexadecimal.
static void digest_in_pieces(const uint8_t *bytes, size_t len, size_t piece, char hex[65]) {
    Sha256 h;
    sha256_init(&h);
    for (size_t at = 0; at < len; at += piece)
        sha256_add(&h, bytes + at, len - at < piece ? len - at : piece);
    uint8_t digest[SHA256_BYTES];
    sha256_finish(&h, digest);
    sha256_hex(digest, hex);
}

// FIPS 180-4's examples and a million 'a' (NIST's), and 768 bytes that cross a block's
// padding in every way; the digests are Python's hashlib's.
static void test_sha256_digests(void **state) {
    (void)state;
    char hex[65];
    digest_in_pieces((const uint8_t *)"", 0, 1, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    digest_in_pieces((const uint8_t *)"abc", 3, 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // 56 bytes: padding spills over
    digest_in_pieces((const uint8_t *)two_blocks, strlen(two_blocks), 7, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    uint8_t *many = malloc(1000000);
    assert_non_null(many);
    memset(many, 'a', 1000000);
    digest_in_pieces(many, 1000000, 1000000, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    for (size_t i = 0; i < 768; i++)
        many[i] = (uint8_t)i;
    for (size_t piece = 1; piece <= 130; piece += 43) {
        digest_in_pieces(many, 768, piece, hex);
        assert_string_equal(hex, "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363");
    }
    free(many);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_arithmetic),
        cmocka_unit_test(test_failure_hook),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_arena_cleared),
        cmocka_unit_test(test_strbuf),
        cmocka_unit_test(test_strbuf_printf_at_the_edge_of_its_room),
        cmocka_unit_test(test_strbuf_repeat),
        cmocka_unit_test(test_strbuf_sink_that_fails),
        cmocka_unit_test(test_printf_that_cannot_encode),
        cmocka_unit_test(test_strbuf_past_half_of_memory),
        cmocka_unit_test(test_blocks_of_every_size),
        cmocka_unit_test(test_calloc_and_realloc_keep_their_promises),
        cmocka_unit_test(test_shape_text),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_create_and_copy),
        cmocka_unit_test(test_sha256_digests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
