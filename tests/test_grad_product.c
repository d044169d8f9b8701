// Unit tests of the gradients of a matrix product through the fast product: kernel_grad_matmul
// with the fast layer installed must give exactly the bits of the reference (no backend: the
// plain loop of kernel_grad.c), for both inputs, on every path this CPU runs and at 1, 2 and 3
// threads, on shapes that reach every edge: sizes of 1, odd sizes, products big enough to be
// packed and cut into cache blocks, vectors, broadcast batches and empty axes; into a gradient
// that starts at zero and into one that already holds values (an input used twice).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmocka_double.h"
#include "gemm_paths.h"
#include "same_bits.h"

#include "backend.h"
#include "fast.h"
#include "gemm.h"
#include "kernel.h"
#include "kernel_grad.h"
#include "parallel.h"
#include "tensor.h"
#include "util.h"

static const size_t thread_counts[] = {1, 2, 3};

// Bit for bit, the tensors whole.
static void assert_same_tensor(const Tensor *got, const Tensor *want, const char *what) {
    assert_int_equal(got->size, want->size);
    assert_same_bits(got->data, want->data, got->size, what);
}

// What a gradient holds before the product adds into it: zeros but its last value is one the
// product's sum must be added to, wherever the gradient is cut into blocks to be read.
typedef enum Start { START_ZERO, START_VALUES, START_MINUS_ZERO, START_LAST_VALUE } Start;

static Tensor *start_grad(const Shape *s, Start start) {
    Tensor *t = tensor_create(s);
    assert_non_null(t);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = start == START_VALUES ? next_value() : start == START_MINUS_ZERO ? -0.0 : 0.0;
    if (start == START_LAST_VALUE && t->size)
        t->data[t->size - 1] = 1.5;
    return t;
}

static const struct {
    Shape a, b;
} cases[] = {
    {{2, {1, 1}}, {2, {1, 1}}},                 // sizes of 1: the loop itself
    {{2, {3, 5}}, {2, {5, 7}}},                 // odd sizes, too small for the fast product
    {{2, {1, 300}}, {2, {300, 29}}},            // one row
    {{2, {40, 300}}, {2, {300, 1}}},            // one column
    {{2, {64, 1}}, {2, {1, 64}}},               // an inner size of 1
    {{2, {13, 17}}, {2, {17, 11}}},             // odd sizes, not packed by the fast product
    {{2, {37, 300}}, {2, {300, 29}}},           // packed, k past one cache block (256)
    {{2, {130, 41}}, {2, {41, 3}}},             // da's inner size 3, db's 130: both packed
    {{3, {12, 33, 16}}, {3, {12, 16, 33}}},     // heads: q @ k.T
    {{3, {4, 20, 30}}, {2, {30, 19}}},          // b broadcast: db gathers 4 entries in order
    {{2, {20, 30}}, {3, {3, 30, 19}}},          // a broadcast
    {{4, {2, 1, 9, 40}}, {3, {3, 40, 7}}},      // both broadcast: (2, 1) with (3)
    {{1, {45}}, {2, {45, 19}}},                 // vector @ matrix
    {{3, {2, 19, 45}}, {1, {45}}},              // matrix @ vector
    {{2, {0, 5}}, {2, {5, 4}}},                 // no rows
    {{2, {6, 0}}, {2, {0, 4}}},                 // an empty inner axis: the gradients are 0
    {{2, {6, 5}}, {2, {5, 0}}},                 // no columns
    {{3, {0, 4, 4}}, {2, {4, 4}}},              // an empty batch
    {{2, {260, 256}}, {2, {256, 3}}},           // da of 66,560 values: read and added in blocks
    {{2, {2, 260}}, {2, {260, 256}}},           // db of 66,560 values, the same
};

// Every case, both inputs, every start, the fast layer against the reference.
static void every_case(const char *what) {
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        Tensor *a = random_tensor(cases[c].a), *b = random_tensor(cases[c].b);
        Shape s;
        assert_true(kernel_matmul_shape(&a->shape, &b->shape, &s));
        Tensor *dout = random_tensor(s);
        for (size_t input = 0; input < 2; input++)
            for (Start start = START_ZERO; start <= START_LAST_VALUE; start++) {
                const Shape *in = input == 0 ? &a->shape : &b->shape;
                Tensor *got = start_grad(in, start), *want = tensor_copy(got);
                assert_non_null(want);
                kernel_grad_matmul(got, input, dout, a, b);
                backend_install(NULL);
                kernel_grad_matmul(want, input, dout, a, b);
                fast_install();
                char label[160];
                snprintf(label, sizeof(label), "%s, case %zu, d%s, start %d", what, c, input ? "b" : "a", (int)start);
                assert_same_tensor(got, want, label);
                tensor_destroy(got);
                tensor_destroy(want);
            }
        tensor_destroy(dout);
        tensor_destroy(a);
        tensor_destroy(b);
    }
}

static void test_fast_matches_reference(void **state) {
    (void)state;
    for_every_path_and_threads(thread_counts, ARRAY_LEN(thread_counts), every_case);
}

// The values themselves, worked out by hand: out = a @ b with a = [[1, 2, 3], [4, 5, 6]] and
// b = [[1, -1], [0, 2], [3, 0.5]], dout = [[1, 0], [2, -1]], each gradient starting at 1:
//   da = 1 + dout @ b^T = 1 + [[1, 0, 3], [3, -2, 5.5]]
//   db = 1 + a^T @ dout = 1 + [[9, -4], [12, -5], [15, -6]]
static void test_values_by_hand(void **state) {
    (void)state;
    Shape sa = {2, {2, 3}}, sb = {2, {3, 2}}, so = {2, {2, 2}};
    Tensor *a = tensor_create(&sa), *b = tensor_create(&sb), *dout = tensor_create(&so);
    Tensor *da = tensor_create(&sa), *db = tensor_create(&sb);
    memcpy(a->data, (double[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(double));
    memcpy(b->data, (double[]){1, -1, 0, 2, 3, 0.5}, 6 * sizeof(double));
    memcpy(dout->data, (double[]){1, 0, 2, -1}, 4 * sizeof(double));
    for (size_t i = 0; i < 6; i++)
        da->data[i] = db->data[i] = 1.0;
    kernel_grad_matmul(da, 0, dout, a, b);
    kernel_grad_matmul(db, 1, dout, a, b);
    const double want_da[] = {2, 1, 4, 4, -1, 6.5}, want_db[] = {10, -3, 13, -4, 16, -5};
    for (size_t i = 0; i < 6; i++) {
        assert_double_equal(da->data[i], want_da[i], 0.0);  // small integers and halves: exact
        assert_double_equal(db->data[i], want_db[i], 0.0);
    }
    tensor_destroy(a);
    tensor_destroy(b);
    tensor_destroy(dout);
    tensor_destroy(da);
    tensor_destroy(db);
}

// Without memory for the scratch an entry is added through, the loop computes it: the same bits.
static void test_no_memory_for_scratch(void **state) {
    (void)state;
    Shape sa = {3, {4, 20, 30}}, sb = {2, {30, 19}};
    Tensor *a = random_tensor(sa), *b = random_tensor(sb);
    Shape s;
    assert_true(kernel_matmul_shape(&a->shape, &b->shape, &s));
    Tensor *dout = random_tensor(s);
    Tensor *got = start_grad(&sb, START_VALUES), *want = tensor_copy(got);
    assert_non_null(want);
    util_fail_allocation(1);
    kernel_grad_matmul(got, 1, dout, a, b);
    assert_true(util_fail_allocation(0) >= 1);  // the scratch was asked for, and refused once
    backend_install(NULL);
    kernel_grad_matmul(want, 1, dout, a, b);
    fast_install();
    assert_same_tensor(got, want, "no scratch");
    tensor_destroy(got);
    tensor_destroy(want);
    tensor_destroy(dout);
    tensor_destroy(a);
    tensor_destroy(b);
}

int main(void) {
    fast_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_matches_reference),
        cmocka_unit_test(test_values_by_hand),
        cmocka_unit_test(test_no_memory_for_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
