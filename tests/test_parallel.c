// Unit tests of the kernels split among threads: softmax, layernorm, elementwise ops with and
// without broadcasting, and the random fill (which jumps splitmix64 ahead to each thread's
// first value) give the same bits on 1, 2 and 7 threads. The sizes are past the point where a
// kernel starts a second thread (2^15 values a thread), and odd, so chunks end mid-row.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fast.h"
#include "kernel.h"
#include "parallel.h"
#include "tensor.h"
#include "util.h"

static const size_t thread_counts[] = {2, 7};

typedef void RunFn(Tensor *out, Tensor *const *in);

static Tensor *make(Shape s, uint64_t seed) {
    Tensor *t = tensor_create(&s);
    assert_non_null(t);
    kernel_fill_random(t, KERNEL_NORMAL, 3.0, seed);
    return t;
}

// run on 1 thread, then on each other count, and compare every bit
static void same_bits_on_every_count(RunFn *run, Shape out_shape, Tensor *const *in, const char *what) {
    parallel_set_threads(1);
    Tensor *want = tensor_create(&out_shape), *got = tensor_create(&out_shape);
    assert_non_null(want);
    assert_non_null(got);
    run(want, in);
    for (size_t t = 0; t < ARRAY_LEN(thread_counts); t++) {
        parallel_set_threads(thread_counts[t]);
        memset(got->data, 0xff, got->size * sizeof(double));  // nan everywhere until written
        run(got, in);
        size_t bad = 0;
        for (size_t i = 0; i < got->size; i++)
            if (memcmp(&got->data[i], &want->data[i], sizeof(double)) != 0 && bad++ < 4)
                print_error("%s, %zu threads: element %zu is %.17g, on one thread %.17g\n", what, thread_counts[t],
                            i, got->data[i], want->data[i]);
        if (bad) {
            print_error("%s, %zu threads: %zu of %zu elements differ\n", what, thread_counts[t], bad, got->size);
            fail();
        }
    }
    parallel_set_threads(0);
    tensor_destroy(want);
    tensor_destroy(got);
}

static void run_softmax(Tensor *out, Tensor *const *in) {
    kernel_softmax(out, in[0]);
}
static void run_layernorm(Tensor *out, Tensor *const *in) {
    kernel_layernorm(out, in[0], in[1], in[2], 1e-5);
}
static void run_add_row(Tensor *out, Tensor *const *in) {
    kernel_binary(out, in[0], in[1], KERNEL_ADD);
}
static void run_div_column(Tensor *out, Tensor *const *in) {
    kernel_binary(out, in[0], in[2], KERNEL_DIV);
}
static void run_mul_whole(Tensor *out, Tensor *const *in) {
    kernel_binary(out, in[0], in[0], KERNEL_MUL);
}
static void run_gelu(Tensor *out, Tensor *const *in) {
    kernel_unary(out, in[0], KERNEL_GELU);
}

static void test_rows_and_elementwise(void **state) {
    Shape xs = {2, {301, 777}}, rs = {1, {777}}, cs = {2, {301, 1}};
    Tensor *in[3] = {make(xs, 1), make(rs, 2), make(cs, 3)};
    // a masked score or two: -inf must give exact zeros wherever the chunk starts
    in[0]->data[5] = -INFINITY;
    in[0]->data[777 * 150 + 3] = -INFINITY;
    same_bits_on_every_count(run_softmax, xs, in, "softmax");
    Tensor *ln_in[3] = {in[0], in[1], in[1]};
    same_bits_on_every_count(run_layernorm, xs, ln_in, "layernorm");
    same_bits_on_every_count(run_add_row, xs, in, "x + row");
    same_bits_on_every_count(run_div_column, xs, in, "x / column");
    same_bits_on_every_count(run_mul_whole, xs, in, "x * x");
    same_bits_on_every_count(run_gelu, xs, in, "gelu");
    for (size_t i = 0; i < 3; i++)
        tensor_destroy(in[i]);
}

static void run_normal(Tensor *out, Tensor *const *in) {
    kernel_fill_random(out, KERNEL_NORMAL, 0.02, 12345);
}
static void run_uniform(Tensor *out, Tensor *const *in) {
    kernel_fill_random(out, KERNEL_UNIFORM, 2.0, 777);
}

static void test_random_fill(void **state) {
    // 230,001 values: 115,001 Box-Muller pairs, the last one half used; 7 threads get chunks
    Shape s = {1, {230001}};
    same_bits_on_every_count(run_normal, s, NULL, "normal fill");
    same_bits_on_every_count(run_uniform, s, NULL, "uniform fill");
}

// Each chunk counts the items it was given (each thread its own items, so no two write one).
static void count_items(void *ctx, size_t begin, size_t end) {
    unsigned char *seen = ctx;
    for (size_t i = begin; i < end; i++)
        seen[i]++;
}

// Every item goes to exactly one chunk, however many threads and whatever the least a thread
// takes (0: no least, so as many threads as items, up to the count asked for).
static void test_every_item_once(void **state) {
    (void)state;
    static const size_t sizes[] = {1, 2, 6, 7, 100};
    static const size_t least[] = {0, 1, 3, 1000};
    unsigned char seen[100];
    for (size_t t = 0; t < ARRAY_LEN(thread_counts); t++) {
        parallel_set_threads(thread_counts[t]);
        for (size_t s = 0; s < ARRAY_LEN(sizes); s++)
            for (size_t m = 0; m < ARRAY_LEN(least); m++) {
                memset(seen, 0, sizeof(seen));
                parallel_for(sizes[s], least[m], count_items, seen);
                for (size_t i = 0; i < sizes[s]; i++)
                    if (seen[i] != 1)
                        fail_msg("%zu threads, %zu items, at least %zu a thread: item %zu ran %d times",
                                 thread_counts[t], sizes[s], least[m], i, seen[i]);
            }
    }
    parallel_set_threads(0);
    memset(seen, 0, sizeof(seen));
    parallel_for(0, 0, count_items, seen);  // nothing to do: no chunk at all
    for (size_t i = 0; i < sizeof(seen); i++)
        assert_int_equal(seen[i], 0);
}

int main(void) {
    fast_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_and_elementwise),
        cmocka_unit_test(test_random_fill),
        cmocka_unit_test(test_every_item_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
