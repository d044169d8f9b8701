// Unit tests of the fast layer's small blocks (fast/pool.c): once installed, every block
// util_malloc gives is aligned as malloc's are (a block holds doubles, size_t and pointers),
// holds all the bytes asked for without touching another block, and keeps its bytes when
// util_realloc moves it to a larger size class. Under AddressSanitizer the pool serves nothing
// and the C library's blocks pass the same tests.
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pool.h"
#include "util.h"

// Sizes on each side of the classes' edges: 16-byte steps up to 1024, then four classes in
// each doubling, up to the largest the pool serves (256 KiB) and past it.
static const size_t sizes[] = {1,    7,    8,    15,    16,    17,    31,     33,         100,
                               1023, 1024, 1025, 1280,  1281,  4097,  100000, 256 << 10, (256 << 10) + 1};
#define N_SIZES (sizeof(sizes) / sizeof(*sizes))

static unsigned char pattern(size_t block, size_t byte) {
    return (unsigned char)(block * 31 + byte * 7 + 1);
}

static void test_blocks_aligned_and_apart(void **state) {
    (void)state;
    unsigned char *blocks[2][N_SIZES];
    // two rounds, so that each size's block has a neighbour of every size
    for (size_t round = 0; round < 2; round++)
        for (size_t k = 0; k < N_SIZES; k++) {
            blocks[round][k] = util_malloc(sizes[k]);
            assert_non_null(blocks[round][k]);
            if ((uintptr_t)blocks[round][k] % alignof(max_align_t) != 0)
                fail_msg("a block of %zu bytes at %p is not aligned to %zu", sizes[k], (void *)blocks[round][k],
                         alignof(max_align_t));
            for (size_t b = 0; b < sizes[k]; b++)
                blocks[round][k][b] = pattern(round * N_SIZES + k, b);
        }
    for (size_t round = 0; round < 2; round++)
        for (size_t k = 0; k < N_SIZES; k++) {
            for (size_t b = 0; b < sizes[k]; b++)
                if (blocks[round][k][b] != pattern(round * N_SIZES + k, b))
                    fail_msg("byte %zu of the block of %zu bytes was written over", b, sizes[k]);
            util_free(blocks[round][k]);
        }
}

// A block grown past its class, or shrunk, keeps the bytes it had (as many as fit).
static void test_realloc_keeps_the_bytes(void **state) {
    (void)state;
    unsigned char *p = util_malloc(20);
    assert_non_null(p);
    for (size_t b = 0; b < 20; b++)
        p[b] = pattern(1, b);
    p = util_realloc(p, 3000);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
    for (size_t b = 0; b < 20; b++)
        assert_int_equal(p[b], pattern(1, b));
    p = util_realloc(p, 10);
    assert_non_null(p);
    for (size_t b = 0; b < 10; b++)
        assert_int_equal(p[b], pattern(1, b));
    util_free(p);
}

int main(void) {
    pool_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_aligned_and_apart),
        cmocka_unit_test(test_realloc_keeps_the_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
