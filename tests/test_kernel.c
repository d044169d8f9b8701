// Unit tests of the kernel: every function against numbers worked out by hand or with numpy
// 1.24 (float64), and the random fill against an independent Python splitmix64.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmocka_double.h"

#include "kernel.h"
#include "kernel_axis.h"
#include "kernel_linalg.h"
#include "kernel_sample.h"
#include "kernel_sort.h"
#include "kernel_triangle.h"
#include "tensor.h"
#include "util.h"

// Tolerances, from strict to loose:
// EXACT: the result is representable and every step is exact (small integers, multiples of
//   1/4, 0 and inf), or every step is one IEEE operation that rounds the same everywhere.
#define EXACT 0.0
// FEW_FLOPS: a handful of roundings on values below ~100 (each at most ~1e-14 absolute).
#define FEW_FLOPS 1e-12
// LIBM: one or two libm calls (exp, log, sin, tanh, pow) on values of magnitude below 10.
//   C libraries and numpy's own SIMD loops may differ by an ulp or two (~2e-15 at 8).
#define LIBM 1e-14

// ---------------------------------------------------------------- helpers

#define SHAPE(...)                                                                         \
    ((Shape){.rank = ARRAY_LEN(((size_t[]){__VA_ARGS__})), .dim = {__VA_ARGS__}})
#define SCALAR_SHAPE ((Shape){.rank = 0})

// Every tensor a test makes is kept here and destroyed after the test, pass or fail.
static Tensor *made[64];
static size_t n_made;
// Which case of a table-driven test is running, printed with a failed comparison.
static char failing_case[64];

static int destroy_made(void **state) {
    for (size_t i = 0; i < n_made; i++)
        tensor_destroy(made[i]);
    n_made = 0;
    failing_case[0] = '\0';
    return 0;
}

static Tensor *make_tensor(Shape shape, const double *values, size_t n) {
    assert_true(n_made < ARRAY_LEN(made));
    Tensor *t = tensor_create(&shape);
    assert_non_null(t);
    made[n_made++] = t;
    if (values) {
        assert_int_equal(n, t->size);
        memcpy(t->data, values, n * sizeof(double));
    }
    return t;
}

// TENSOR(SHAPE(2, 2), 1, 2, 3, 4); ZEROS(SHAPE(2, 2)) for an output.
#define TENSOR(shape, ...)                                                                 \
    make_tensor(shape, (const double[]){__VA_ARGS__},                                      \
                ARRAY_LEN(((const double[]){__VA_ARGS__})))
#define ZEROS(shape) make_tensor(shape, NULL, 0)

static void shape_is(const Shape *got, Shape want, const char *file, int line) {
    if (shape_equal(got, &want))
        return;
    char g[64], w[64];
    shape_format(got, g, sizeof(g));
    shape_format(&want, w, sizeof(w));
    print_error("shape %s, expected %s\n", g, w);
    _fail(file, line);
}
#define assert_shape(got, want) shape_is(got, want, __FILE__, __LINE__)

// Two values agree when both are nan, both the same infinity, or within eps.
static bool near(double got, double want, double eps) {
    return (isnan(got) && isnan(want)) || got == want || fabs(got - want) <= eps;
}

// Compares t with its expected shape and values; on failure prints the first few differing
// pairs and the largest difference.
static void tensor_near(const Tensor *t, Shape shape, const double *want, size_t n, double eps,
                        const char *file, int line) {
    shape_is(&t->shape, shape, file, line);
    if (t->size != n) {
        print_error("%zu values, expected %zu\n", t->size, n);
        _fail(file, line);
    }
    size_t bad = 0, worst = 0;
    double worst_diff = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (near(t->data[i], want[i], eps))
            continue;
        if (bad < 5)
            print_error("  [%zu] got %.17g, expected %.17g\n", i, t->data[i], want[i]);
        double diff = fabs(t->data[i] - want[i]);
        if (bad == 0 || diff > worst_diff || isnan(diff)) {
            worst = i;
            worst_diff = diff;
        }
        bad++;
    }
    if (bad == 0)
        return;
    if (failing_case[0])
        print_error("in %s:\n", failing_case);
    print_error("%zu of %zu values differ (eps %.3g); largest difference %.3g at [%zu]\n", bad,
                n, eps, worst_diff, worst);
    _fail(file, line);
}
#define assert_tensor_near(t, shape, eps, ...)                                             \
    tensor_near(t, shape, (const double[]){__VA_ARGS__},                                   \
                ARRAY_LEN(((const double[]){__VA_ARGS__})), eps, __FILE__, __LINE__)

// 0, 1, ..., size - 1 in a tensor of the given shape.
static Tensor *iota(Shape shape) {
    Tensor *t = ZEROS(shape);
    kernel_arange(&(Tensor){.shape = SHAPE(t->size), .size = t->size, .data = t->data});
    return t;
}

// ---------------------------------------------------------------- shapes

static void test_broadcast_shape(void **state) {
    Shape s;
    assert_true(kernel_broadcast_shape(&SHAPE(3, 1), &SHAPE(4), &s));
    assert_shape(&s, SHAPE(3, 4));
    assert_true(kernel_broadcast_shape(&SCALAR_SHAPE, &SHAPE(2, 3), &s));
    assert_shape(&s, SHAPE(2, 3));
    assert_true(kernel_broadcast_shape(&SHAPE(5, 1, 4), &SHAPE(3, 1), &s));
    assert_shape(&s, SHAPE(5, 3, 4));
    assert_true(kernel_broadcast_shape(&SHAPE(0), &SHAPE(1), &s));  // numpy: (0,)
    assert_shape(&s, SHAPE(0));
    assert_true(kernel_broadcast_shape(&SCALAR_SHAPE, &SCALAR_SHAPE, &s));
    assert_shape(&s, SCALAR_SHAPE);
    assert_false(kernel_broadcast_shape(&SHAPE(2, 3), &SHAPE(3, 2), &s));
    assert_false(kernel_broadcast_shape(&SHAPE(3), &SHAPE(4), &s));
}

static void test_matmul_shape(void **state) {
    Shape s;
    assert_true(kernel_matmul_shape(&SHAPE(2, 3, 4), &SHAPE(4, 5), &s));
    assert_shape(&s, SHAPE(2, 3, 5));
    assert_true(kernel_matmul_shape(&SHAPE(4), &SHAPE(4), &s));
    assert_shape(&s, SCALAR_SHAPE);
    assert_true(kernel_matmul_shape(&SHAPE(4), &SHAPE(4, 5), &s));
    assert_shape(&s, SHAPE(5));
    assert_true(kernel_matmul_shape(&SHAPE(2, 3, 4), &SHAPE(4), &s));
    assert_shape(&s, SHAPE(2, 3));
    assert_true(kernel_matmul_shape(&SHAPE(2, 1, 2, 3), &SHAPE(3, 3, 2), &s));
    assert_shape(&s, SHAPE(2, 3, 2, 2));
    assert_false(kernel_matmul_shape(&SHAPE(2, 3), &SHAPE(4, 5), &s));
    assert_false(kernel_matmul_shape(&SCALAR_SHAPE, &SHAPE(4, 5), &s));
    assert_false(kernel_matmul_shape(&SHAPE(4), &SCALAR_SHAPE, &s));
    assert_false(kernel_matmul_shape(&SHAPE(2, 3, 4), &SHAPE(3, 4, 5), &s));
}

// ---------------------------------------------------------------- matrix product

static void test_gemm(void **state) {
    // (2, 3) @ (3, 2) by hand: 1*7 + 2*9 + 3*11 = 58, 1*8 + 2*10 + 3*12 = 64, ...
    double a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12};
    double c[4] = {-1, -1, -1, -1};  // gemm overwrites, it does not accumulate into c
    kernel_gemm(c, a, b, 2, 3, 2);
    double want[] = {58, 64, 139, 154};
    for (size_t i = 0; i < 4; i++)
        assert_double_equal(c[i], want[i], EXACT);
}

static void test_gemm_sums_in_index_order(void **state) {
    // index order: 1 + 1e16 rounds back to 1e16 (the spacing there is 2), minus 1e16 is 0;
    // summed from the end (-1e16 + 1e16) + 1 it would be 1
    double a[] = {1, 1e16, -1e16}, b[] = {1, 1, 1}, c[1];
    kernel_gemm(c, a, b, 1, 3, 1);
    assert_double_equal(c[0], 0.0, EXACT);
}

static void test_matmul_batched(void **state) {
    // numpy: a = arange(24).reshape(2, 3, 4) * 0.5 - 3; b = arange(20).reshape(4, 5) * 0.25 - 1
    Tensor *a = iota(SHAPE(2, 3, 4)), *b = iota(SHAPE(4, 5));
    for (size_t i = 0; i < a->size; i++)
        a->data[i] = a->data[i] * 0.5 - 3;
    for (size_t i = 0; i < b->size; i++)
        b->data[i] = b->data[i] * 0.25 - 1;
    Tensor *c = ZEROS(SHAPE(2, 3, 5));
    kernel_matmul(c, a, b);
    // multiples of 1/8 below 100: exact
    assert_tensor_near(c, SHAPE(2, 3, 5), EXACT, -4.75, -7.0, -9.25, -11.5, -13.75, 2.25, 2.0,
                       1.75, 1.5, 1.25, 9.25, 11.0, 12.75, 14.5, 16.25, 16.25, 20.0, 23.75,
                       27.5, 31.25, 23.25, 29.0, 34.75, 40.5, 46.25, 30.25, 38.0, 45.75, 53.5,
                       61.25);
}

static void test_matmul_vectors(void **state) {
    Tensor *u = TENSOR(SHAPE(3), 1, 2, 3), *v = TENSOR(SHAPE(3), 4, 5, 6);
    Tensor *dot = ZEROS(SCALAR_SHAPE);
    kernel_matmul(dot, u, v);
    assert_tensor_near(dot, SCALAR_SHAPE, EXACT, 32);  // 4 + 10 + 18

    Tensor *m = TENSOR(SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    Tensor *row = TENSOR(SHAPE(2), 1, -2), *vm = ZEROS(SHAPE(3));
    kernel_matmul(vm, row, m);
    assert_tensor_near(vm, SHAPE(3), EXACT, -7, -8, -9);
    Tensor *col = TENSOR(SHAPE(3), 1, 0.5, -1), *mv = ZEROS(SHAPE(2));
    kernel_matmul(mv, m, col);
    assert_tensor_near(mv, SHAPE(2), EXACT, -1, 0.5);
}

static void test_matmul_broadcast_batch(void **state) {
    // numpy: (arange(12).reshape(2, 1, 2, 3) - 5) @ (arange(18).reshape(3, 3, 2) * 0.5)
    Tensor *a = iota(SHAPE(2, 1, 2, 3)), *b = iota(SHAPE(3, 3, 2));
    for (size_t i = 0; i < a->size; i++)
        a->data[i] -= 5;
    for (size_t i = 0; i < b->size; i++)
        b->data[i] *= 0.5;
    Tensor *c = ZEROS(SHAPE(2, 3, 2, 2));
    kernel_matmul(c, a, b);
    assert_tensor_near(c, SHAPE(2, 3, 2, 2), EXACT, -10.0, -16.0, -1.0, -2.5, -46.0, -52.0,
                       -10.0, -11.5, -82.0, -88.0, -19.0, -20.5, 8.0, 11.0, 17.0, 24.5, 26.0,
                       29.0, 62.0, 69.5, 44.0, 47.0, 107.0, 114.5);
}

static void test_transpose(void **state) {
    Tensor *a = iota(SHAPE(2, 3, 4)), *t = ZEROS(SHAPE(2, 4, 3));
    kernel_transpose(t, a);
    // numpy: swapaxes(arange(24).reshape(2, 3, 4), -1, -2)
    assert_tensor_near(t, SHAPE(2, 4, 3), EXACT, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 16,
                       20, 13, 17, 21, 14, 18, 22, 15, 19, 23);

    Tensor *m = TENSOR(SHAPE(2, 3), 1, 2, 3, 4, 5, 6), *mt = ZEROS(SHAPE(3, 2));
    kernel_transpose(mt, m);
    assert_tensor_near(mt, SHAPE(3, 2), EXACT, 1, 4, 2, 5, 3, 6);

    Tensor *v = TENSOR(SHAPE(3), 7, 8, 9), *vt = ZEROS(SHAPE(3));  // rank 1: a copy
    kernel_transpose(vt, v);
    assert_tensor_near(vt, SHAPE(3), EXACT, 7, 8, 9);
}

static void test_permute(void **state) {
    Tensor *a = iota(SHAPE(2, 3, 4)), *t = ZEROS(SHAPE(3, 4, 2));
    kernel_permute(t, a, (const size_t[]){1, 2, 0});
    // numpy: np.transpose(np.arange(24).reshape(2, 3, 4), (1, 2, 0))
    assert_tensor_near(t, SHAPE(3, 4, 2), EXACT, 0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20,
                       9, 21, 10, 22, 11, 23);
    Tensor *r = ZEROS(SHAPE(4, 3, 2));
    kernel_permute(r, a, (const size_t[]){2, 1, 0});  // np.transpose(x): every axis reversed
    assert_tensor_near(r, SHAPE(4, 3, 2), EXACT, 0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22,
                       3, 15, 7, 19, 11, 23);

    // np.transpose(np.arange(120).reshape(2, 3, 4, 5), (3, 1, 0, 2)): its first 12 and last 5
    Tensor *b = iota(SHAPE(2, 3, 4, 5)), *u = ZEROS(SHAPE(5, 3, 2, 4));
    kernel_permute(u, b, (const size_t[]){3, 1, 0, 2});
    const double first[] = {0, 5, 10, 15, 60, 65, 70, 75, 20, 25, 30, 35}, last[] = {59, 104, 109, 114, 119};
    for (size_t i = 0; i < ARRAY_LEN(first); i++)
        assert_double_equal(u->data[i], first[i], EXACT);
    for (size_t i = 0; i < ARRAY_LEN(last); i++)
        assert_double_equal(u->data[115 + i], last[i], EXACT);

    Tensor *s = TENSOR(SCALAR_SHAPE, 7), *so = ZEROS(SCALAR_SHAPE);  // no axes: a copy
    kernel_permute(so, s, NULL);
    assert_tensor_near(so, SCALAR_SHAPE, EXACT, 7);
    Tensor *e = ZEROS(SHAPE(2, 0)), *eo = ZEROS(SHAPE(0, 2));  // nothing to move
    kernel_permute(eo, e, (const size_t[]){1, 0});
    assert_int_equal(eo->size, 0);
}

// ---------------------------------------------------------------- elementwise

static void test_binary_broadcast(void **state) {
    // [3, 1] + [4] -> [3, 4]: the column repeats across, the row repeats down
    Tensor *col = TENSOR(SHAPE(3, 1), 1, 2, 3), *row = TENSOR(SHAPE(4), 10, 20, 30, 40);
    Tensor *sum = ZEROS(SHAPE(3, 4));
    kernel_binary(sum, col, row, KERNEL_ADD);
    assert_tensor_near(sum, SHAPE(3, 4), EXACT, 11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43);

    Tensor *m = TENSOR(SHAPE(2, 3), 1, 2, 3, 4, 5, 6), *two = TENSOR(SCALAR_SHAPE, 2);
    Tensor *out = ZEROS(SHAPE(2, 3));
    kernel_binary(out, m, two, KERNEL_SUB);
    assert_tensor_near(out, SHAPE(2, 3), EXACT, -1, 0, 1, 2, 3, 4);
    kernel_binary(out, two, m, KERNEL_SUB);
    assert_tensor_near(out, SHAPE(2, 3), EXACT, 1, 0, -1, -2, -3, -4);
    Tensor *r = TENSOR(SHAPE(3), 1, 0.5, -1);
    kernel_binary(out, m, r, KERNEL_MUL);
    assert_tensor_near(out, SHAPE(2, 3), EXACT, 1, 1, -3, 4, 2.5, -6);

    // numpy: power([2, 9, -8, 4], [0.5, 0.5, 1/3, -2]); a negative base to a fractional
    // power is nan, not a real cube root
    Tensor *base = TENSOR(SHAPE(4), 2, 9, -8, 4), *ex = TENSOR(SHAPE(4), 0.5, 0.5, 1.0 / 3, -2);
    Tensor *p = ZEROS(SHAPE(4));
    kernel_binary(p, base, ex, KERNEL_POW);
    assert_tensor_near(p, SHAPE(4), LIBM, 1.4142135623730951, 3.0, NAN, 0.0625);
}

static void test_binary_ieee(void **state) {
    // division by zero gives values, not errors: inf, -inf and nan (0/0)
    Tensor *a = TENSOR(SHAPE(4), 1, -1, 0, 6), *b = TENSOR(SHAPE(4), 0, 0, 0, 4);
    Tensor *q = ZEROS(SHAPE(4));
    kernel_binary(q, a, b, KERNEL_DIV);
    assert_tensor_near(q, SHAPE(4), EXACT, INFINITY, -INFINITY, NAN, 1.5);
    assert_true(isinf(q->data[0]) && q->data[0] > 0);
    assert_true(isinf(q->data[1]) && q->data[1] < 0);
    assert_true(isnan(q->data[2]));
}

static void test_binary_apply(void **state) {
    assert_double_equal(kernel_binary_apply(KERNEL_ADD, 1.5, 2), 3.5, EXACT);
    assert_double_equal(kernel_binary_apply(KERNEL_SUB, 1.5, 2), -0.5, EXACT);
    assert_double_equal(kernel_binary_apply(KERNEL_MUL, 1.5, 2), 3, EXACT);
    assert_double_equal(kernel_binary_apply(KERNEL_DIV, 1.5, 2), 0.75, EXACT);
    assert_double_equal(kernel_binary_apply(KERNEL_POW, 1.5, 2), 2.25, EXACT);
    assert_true(isnan(kernel_binary_apply(KERNEL_DIV, 0, 0)));
}

// The same bits as numpy's floor_divide and remainder, the sign of a zero included: Python's
// rule (the remainder has b's sign) at both signs, a quotient snapped to a whole number where
// the division rounds (1 // 0.1 is 9, not 10), by 0, at inf and nan, near the largest and
// smallest doubles and past 2^53. Values from numpy 1.24 (np.floor_divide, np.remainder).
static void test_floor_divide_remainder_as_numpy(void **state) {
    (void)state;
    static const double cases[][4] = {  // a, b, a // b, a % b
        {7.0, 2.0, 3.0, 1.0},
        {-7.0, 2.0, -4.0, 1.0},
        {7.0, -2.0, -4.0, -1.0},
        {-7.0, -2.0, 3.0, -1.0},
        {0x1.e000000000000p+2, -2.0, -4.0, -0x1.0000000000000p-1},
        {0x1.8000000000000p-1, 0x1.0000000000000p-2, 3.0, 0.0},
        {1.0, 0x1.999999999999ap-4, 9.0, 0x1.9999999999996p-4},
        {0x1.5333333333333p+2, 0x1.999999999999ap-4, 52.0, 0x1.9999999999978p-4},
        {-0x1.5333333333333p+2, 0x1.999999999999ap-4, -53.0, 0x1.1000000000000p-51},
        {0.0, 3.0, 0.0, 0.0},
        {-0.0, 3.0, -0.0, 0.0},
        {0.0, -3.0, -0.0, -0.0},
        {6.0, 3.0, 2.0, 0.0},
        {-6.0, 3.0, -2.0, 0.0},
        {6.0, -3.0, -2.0, -0.0},
        {-3.0, 0x1.7e43c8800759cp+996, -1.0, 0x1.7e43c8800759cp+996},
        {1.0, 0.0, INFINITY, NAN},
        {-1.0, 0.0, -INFINITY, NAN},
        {0.0, 0.0, NAN, NAN},
        {INFINITY, 2.0, NAN, NAN},
        {-1.0, INFINITY, -1.0, INFINITY},
        {1.0, -INFINITY, -1.0, -INFINITY},
        {NAN, 2.0, NAN, NAN},
        {2.0, NAN, NAN, NAN},
        {0x1.1ccf385ebc8a0p+1023, 0x0.730d67819e8d2p-1022, INFINITY, 0x0.28401cf53d610p-1022},
        {-0x1.1ccf385ebc8a0p+1023, 3.0, -0x1.7bbef5d3a60d5p+1021, 1.0},
        {0x1.0000000000001p+53, 3.0, 3002399751580330.0, 1.0},
        {-0x1.6345785d8a000p+56, 7.0, -0x1.9606406ae6db8p+53, 2.0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        double a = cases[i][0], b = cases[i][1];
        double got[2] = {kernel_binary_apply(KERNEL_FLOOR_DIV, a, b), kernel_binary_apply(KERNEL_MOD, a, b)};
        for (size_t k = 0; k < 2; k++) {
            double want = cases[i][2 + k];
            bool same = isnan(want) ? isnan(got[k]) : memcmp(&got[k], &want, sizeof(double)) == 0;
            if (!same)
                fail_msg("%a %s %a: %a, numpy gives %a", a, k ? "%" : "//", b, got[k], want);
        }
    }
}

static void test_sigmoid_floor_ceil_round(void **state) {
    Tensor *x = TENSOR(SHAPE(6), 0.5, 1.5, 2.5, -0.5, -2.7, 3.2), *y = ZEROS(SHAPE(6));
    kernel_unary(y, x, KERNEL_FLOOR);
    assert_tensor_near(y, SHAPE(6), EXACT, 0, 1, 2, -1, -3, 3);
    kernel_unary(y, x, KERNEL_CEIL);
    assert_tensor_near(y, SHAPE(6), EXACT, 1, 2, 3, -0.0, -2, 4);
    // halves to the even neighbour, as numpy's round: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0
    kernel_unary(y, x, KERNEL_ROUND);
    assert_tensor_near(y, SHAPE(6), EXACT, 0, 2, 2, -0.0, -3, 3);
    assert_true(signbit(y->data[3]));
    // numpy: 1 / (1 + np.exp(-x))
    kernel_unary(y, x, KERNEL_SIGMOID);
    assert_tensor_near(y, SHAPE(6), LIBM, 0.6224593312018546, 0.8175744761936437, 0.9241418199787566,
                       0.3775406687981454, 0.06297335605699649, 0.9608342772032357);
}

static void test_maximum_minimum_where_clip(void **state) {
    // numpy: maximum and minimum of [[1, -2, 3], [0.5, 4, nan]] and [0, 1, 3]: nan wins, and
    // two equal numbers give either (3)
    Tensor *a = TENSOR(SHAPE(2, 3), 1, -2, 3, 0.5, 4, NAN), *b = TENSOR(SHAPE(3), 0, 1, 3);
    Tensor *out = ZEROS(SHAPE(2, 3));
    kernel_binary(out, a, b, KERNEL_MAXIMUM);
    assert_tensor_near(out, SHAPE(2, 3), EXACT, 1, 1, 3, 0.5, 4, NAN);
    kernel_binary(out, a, b, KERNEL_MINIMUM);
    assert_tensor_near(out, SHAPE(2, 3), EXACT, 0, -2, 3, 0, 1, NAN);
    assert_true(isnan(kernel_binary_apply(KERNEL_MAXIMUM, 1, NAN)));
    assert_true(isnan(kernel_binary_apply(KERNEL_MINIMUM, NAN, 1)));
    // of equal numbers the second, as numpy: maximum(-0.0, 0.0) is 0.0, minimum(0.0, -0.0) -0.0
    assert_false(signbit(kernel_binary_apply(KERNEL_MAXIMUM, -0.0, 0.0)));
    assert_true(signbit(kernel_binary_apply(KERNEL_MAXIMUM, 0.0, -0.0)));
    assert_true(signbit(kernel_binary_apply(KERNEL_MINIMUM, 0.0, -0.0)));
    assert_false(signbit(kernel_binary_apply(KERNEL_MINIMUM, -0.0, 0.0)));

    // where([[1], [0]], a, b): row 0 from a, row 1 from b (three shapes broadcast)
    Tensor *cond = TENSOR(SHAPE(2, 1), 1, 0);
    kernel_where(out, cond, a, b);
    assert_tensor_near(out, SHAPE(2, 3), EXACT, 1, -2, 3, 0, 1, 3);

    // clip([-3, 0.25, 2, 7], [-1, 0, 0, 5], [1, 1, 1, 4]): the last has lo > hi, and hi wins
    Tensor *x = TENSOR(SHAPE(4), -3, 0.25, 2, 7), *lo = TENSOR(SHAPE(4), -1, 0, 0, 5);
    Tensor *hi = TENSOR(SHAPE(4), 1, 1, 1, 4), *c = ZEROS(SHAPE(4));
    kernel_clip(c, x, lo, hi);
    assert_tensor_near(c, SHAPE(4), EXACT, -1, 0.25, 1, 4);
}

static void test_unary(void **state) {
    Tensor *x = TENSOR(SHAPE(5), -2, -0.5, 0, 0.5, 2), *y = ZEROS(SHAPE(5));
    kernel_unary(y, x, KERNEL_NEG);
    assert_tensor_near(y, SHAPE(5), EXACT, 2, 0.5, 0, -0.5, -2);
    kernel_unary(y, x, KERNEL_ABS);
    assert_tensor_near(y, SHAPE(5), EXACT, 2, 0.5, 0, 0.5, 2);
    kernel_unary(y, x, KERNEL_RELU);
    assert_tensor_near(y, SHAPE(5), EXACT, 0, 0, 0, 0.5, 2);
    // the rest from numpy, e.g. np.exp([-2, -0.5, 0, 0.5, 2])
    kernel_unary(y, x, KERNEL_EXP);
    assert_tensor_near(y, SHAPE(5), LIBM, 0.1353352832366127, 0.6065306597126334, 1.0,
                       1.6487212707001282, 7.38905609893065);
    kernel_unary(y, x, KERNEL_LOG);  // log(0) = -inf, log(x < 0) = nan
    assert_tensor_near(y, SHAPE(5), LIBM, NAN, NAN, -INFINITY, -0.6931471805599453,
                       0.6931471805599453);
    assert_true(isinf(y->data[2]) && y->data[2] < 0);
    kernel_unary(y, x, KERNEL_SQRT);
    assert_tensor_near(y, SHAPE(5), LIBM, NAN, NAN, 0.0, 0.7071067811865476, 1.4142135623730951);
    kernel_unary(y, x, KERNEL_TANH);
    assert_tensor_near(y, SHAPE(5), LIBM, -0.9640275800758169, -0.46211715726000974, 0.0,
                       0.46211715726000974, 0.9640275800758169);
    kernel_unary(y, x, KERNEL_SIN);
    assert_tensor_near(y, SHAPE(5), LIBM, -0.9092974268256817, -0.479425538604203, 0.0,
                       0.479425538604203, 0.9092974268256817);
    kernel_unary(y, x, KERNEL_COS);
    assert_tensor_near(y, SHAPE(5), LIBM, -0.4161468365471424, 0.8775825618903728, 1.0,
                       0.8775825618903728, -0.4161468365471424);
    // numpy: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))
    kernel_unary(y, x, KERNEL_GELU);
    assert_tensor_near(y, SHAPE(5), LIBM, -0.04540230591222494, -0.15428599017485606, 0.0,
                       0.34571400982514394, 1.954597694087775);
    // numpy: x * (1 / (1 + exp(-x)))
    kernel_unary(y, x, KERNEL_SILU);
    assert_tensor_near(y, SHAPE(5), LIBM, -0.2384058440442351, -0.1887703343990727, 0.0, 0.3112296656009273,
                       1.761594155955765);
}

static void test_unary_apply(void **state) {
    assert_double_equal(kernel_unary_apply(KERNEL_NEG, 3), -3, EXACT);
    assert_double_equal(kernel_unary_apply(KERNEL_RELU, -3), 0, EXACT);
    assert_true(isnan(kernel_unary_apply(KERNEL_RELU, NAN)));  // as numpy's maximum(nan, 0)
    assert_double_equal(kernel_unary_apply(KERNEL_EXP, 0), 1, EXACT);
    double log0 = kernel_unary_apply(KERNEL_LOG, 0);
    assert_true(isinf(log0) && log0 < 0);
}

// ---------------------------------------------------------------- rows

static void test_softmax_rows(void **state) {
    Tensor *a = TENSOR(SHAPE(2, 3), 1, 2, 3, -1, 0, 0.5), *p = ZEROS(SHAPE(2, 3));
    kernel_softmax(p, a);
    // numpy: e = exp(a - a.max(-1, keepdims=True)); e / e.sum(-1, keepdims=True)
    assert_tensor_near(p, SHAPE(2, 3), LIBM, 0.09003057317038046, 0.24472847105479764,
                       0.6652409557748218, 0.12195165230972886, 0.33149896042409155,
                       0.5465493872661796);
}

static void test_softmax_large(void **state) {
    // without the max subtracted exp(1000) overflows to inf and inf / inf is nan; with it the
    // other terms are exp(-1000) and exp(-2000), which are exactly 0 in double
    Tensor *a = TENSOR(SHAPE(3), 1000, 2000, 3000), *p = ZEROS(SHAPE(3));
    kernel_softmax(p, a);
    assert_tensor_near(p, SHAPE(3), EXACT, 0, 0, 1);
}

static void test_softmax_neg_inf(void **state) {
    // masked entries get exactly 0; the rest is softmax([0.5, 1.5]) (numpy)
    Tensor *a = TENSOR(SHAPE(4), 0.5, -INFINITY, 1.5, -INFINITY), *p = ZEROS(SHAPE(4));
    kernel_softmax(p, a);
    assert_tensor_near(p, SHAPE(4), LIBM, 0.2689414213699951, 0, 0.7310585786300049, 0);
    assert_true(p->data[1] == 0.0 && p->data[3] == 0.0);

    // a row with nothing to attend to has no finite max: nan, as numpy gives
    Tensor *none = TENSOR(SHAPE(2, 2), -INFINITY, -INFINITY, 0, -INFINITY);
    Tensor *q = ZEROS(SHAPE(2, 2));
    kernel_softmax(q, none);
    assert_tensor_near(q, SHAPE(2, 2), EXACT, NAN, NAN, 1, 0);
}

static void test_softmax_axis(void **state) {
    Tensor *a = TENSOR(SHAPE(2, 3), 1, 2, 3, -1, 0, 0.5), *p = ZEROS(SHAPE(2, 3));
    // numpy: e = exp(a - a.max(0, keepdims=True)); e / e.sum(0, keepdims=True): each column sums to 1
    kernel_softmax_axis(p, a, 0, KERNEL_SOFTMAX);
    assert_tensor_near(p, SHAPE(2, 3), LIBM, 0.8807970779778825, 0.8807970779778825, 0.9241418199787566,
                       0.11920292202211755, 0.11920292202211755, 0.07585818002124356);
    // along the last axis, the same bits as the rows kernel
    Tensor *q = ZEROS(SHAPE(2, 3));
    kernel_softmax_axis(p, a, 1, KERNEL_SOFTMAX);
    kernel_softmax(q, a);
    for (size_t i = 0; i < 6; i++)
        assert_true(p->data[i] == q->data[i]);
    // numpy: m = a.max(-1, keepdims=True); a - m - log(exp(a - m).sum(-1, keepdims=True))
    kernel_softmax_axis(p, a, 1, KERNEL_LOG_SOFTMAX);
    assert_tensor_near(p, SHAPE(2, 3), FEW_FLOPS, -2.4076059644443806, -1.4076059644443804, -0.40760596444438035,
                       -2.104130605336728, -1.1041306053367281, -0.6041306053367281);
    // a log-probability far below log of the smallest double: log(softmax) would give -inf
    Tensor *far = TENSOR(SHAPE(2), 0, -1000), *lf = ZEROS(SHAPE(2));
    kernel_softmax_axis(lf, far, 0, KERNEL_LOG_SOFTMAX);
    assert_tensor_near(lf, SHAPE(2), EXACT, 0, -1000);
    // a masked entry is -inf; a line of nothing but -inf is nan, as PyTorch's log_softmax
    Tensor *masked = TENSOR(SHAPE(2, 2), 0, -INFINITY, -INFINITY, -INFINITY), *lm = ZEROS(SHAPE(2, 2));
    kernel_softmax_axis(lm, masked, 1, KERNEL_LOG_SOFTMAX);
    assert_tensor_near(lm, SHAPE(2, 2), EXACT, 0, -INFINITY, NAN, NAN);
    // a line's max is its own: the larger value just past row 0 (row 1's first) is not in it,
    // or row 0 would be exp(-1000) / (2 exp(-1000)) = 0 / 0. numpy: [[0.5, 0.5], [1, 0]]
    Tensor *apart = TENSOR(SHAPE(2, 2), 0, 0, 1000, 0), *pa = ZEROS(SHAPE(2, 2));
    kernel_softmax_axis(pa, apart, 1, KERNEL_SOFTMAX);
    assert_tensor_near(pa, SHAPE(2, 2), EXACT, 0.5, 0.5, 1, 0);
}

static void test_cumsum(void **state) {
    Tensor *a = TENSOR(SHAPE(2, 3), 1, 2, 3, -1, 0, 0.5), *c = ZEROS(SHAPE(2, 3));
    // numpy: cumsum(a, axis=0) and cumsum(a, axis=1)
    kernel_cumsum(c, a, 0);
    assert_tensor_near(c, SHAPE(2, 3), EXACT, 1, 2, 3, 0, 2, 3.5);
    kernel_cumsum(c, a, 1);
    assert_tensor_near(c, SHAPE(2, 3), EXACT, 1, 3, 6, -1, -1, -0.5);
    // the first value as it is: numpy's cumsum([-0.0, 1.0]) starts at -0.0
    Tensor *z = TENSOR(SHAPE(2), -0.0, 1), *cz = ZEROS(SHAPE(2));
    kernel_cumsum(cz, z, 0);
    assert_true(signbit(cz->data[0]) && cz->data[1] == 1);
    // an empty axis has no sums to make
    Tensor *e = ZEROS(SHAPE(2, 0)), *ce = ZEROS(SHAPE(2, 0));
    kernel_cumsum(ce, e, 1);
    kernel_cumsum(ce, e, 0);
    assert_int_equal(ce->size, 0);
}

static void test_repeat_interleave(void **state) {
    // torch.repeat_interleave(a, 2, dim=0) and (a, 3, dim=1) of a = [[1, 2], [3, 4]]
    Tensor *a = TENSOR(SHAPE(2, 2), 1, 2, 3, 4), *rows = ZEROS(SHAPE(4, 2)), *cols = ZEROS(SHAPE(2, 6));
    kernel_repeat_interleave(rows, a, 0, 2);
    assert_tensor_near(rows, SHAPE(4, 2), EXACT, 1, 2, 1, 2, 3, 4, 3, 4);
    kernel_repeat_interleave(cols, a, 1, 3);
    assert_tensor_near(cols, SHAPE(2, 6), EXACT, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4);
    // the gradient gathers each slice's copies: rows of dout [1..8] as [4, 2] back to [2, 2]
    Tensor *g = TENSOR(SHAPE(4, 2), 1, 2, 3, 4, 5, 6, 7, 8), *d = ZEROS(SHAPE(2, 2));
    kernel_grad_repeat_interleave(d, g, 0, 2);
    assert_tensor_near(d, SHAPE(2, 2), EXACT, 4, 6, 12, 14);
}

static void test_sort_and_topk(void **state) {
    // numpy: sort(x), argsort(x, kind='stable') and argsort(-x, kind='stable')[:, :2] of
    // x = [[3, 1, 2, 1], [0.5, nan, 4, 0.5]]: equal values keep their order, nan sorts last
    Tensor *x = TENSOR(SHAPE(2, 4), 3, 1, 2, 1, 0.5, NAN, 4, 0.5), *out = ZEROS(SHAPE(2, 4));
    Tensor *top = ZEROS(SHAPE(2, 2));
    assert_true(kernel_sort(out, x, KERNEL_SORT, 4));
    assert_tensor_near(out, SHAPE(2, 4), EXACT, 1, 1, 2, 3, 0.5, 0.5, 4, NAN);
    assert_true(kernel_sort(out, x, KERNEL_ARGSORT, 4));
    assert_tensor_near(out, SHAPE(2, 4), EXACT, 1, 3, 2, 0, 0, 3, 2, 1);
    // the two largest, largest first: nan counts as the largest, as it sorts last
    assert_true(kernel_sort(top, x, KERNEL_TOPK, 2));
    assert_tensor_near(top, SHAPE(2, 2), EXACT, 3, 2, NAN, 4);
    assert_true(kernel_sort(top, x, KERNEL_ARGTOPK, 2));
    assert_tensor_near(top, SHAPE(2, 2), EXACT, 0, 2, 1, 2);
    // nan comes first wherever it stands, before or after larger numbers: torch.topk of
    // [[1, 2, nan], [2, nan, 1], [nan, 1, 2]] gives indices [[2, 1, 0], [1, 0, 2], [0, 2, 1]]
    Tensor *late = TENSOR(SHAPE(3, 3), 1, 2, NAN, 2, NAN, 1, NAN, 1, 2), *where = ZEROS(SHAPE(3, 3));
    assert_true(kernel_sort(where, late, KERNEL_ARGTOPK, 3));
    assert_tensor_near(where, SHAPE(3, 3), EXACT, 2, 1, 0, 1, 0, 2, 0, 2, 1);
    // the gradient goes back where each value came from: topk's [[1, 2], [3, 4]]
    Tensor *g = TENSOR(SHAPE(2, 2), 1, 2, 3, 4), *d = ZEROS(SHAPE(2, 4));
    assert_true(kernel_grad_sort(d, g, x, KERNEL_TOPK, 2));
    assert_tensor_near(d, SHAPE(2, 4), EXACT, 1, 0, 2, 0, 0, 3, 4, 0);
}

static void test_top_p(void **state) {
    // numpy: order = argsort(-x, kind='stable'); keep while the sum before is below p; divide
    // by the kept sum. p = 0.8: row 0 keeps 0.4, 0.3 and 0.15 (0.85); row 1, five equal
    // values, the first four (0.2 + 0.2 + 0.2 is below 0.8); row 2 keeps 0.5, 0.25 and 0.12.
    // Then five equal values and p = 0.5: the first three, as equal values go by position;
    // and p = 1: every value.
    Tensor *x = TENSOR(SHAPE(3, 5), 0.1, 0.4, 0.05, 0.3, 0.15, 0.2, 0.2, 0.2, 0.2, 0.2, 0.05, 0.5, 0.25, 0.12,
                       0.08);
    Tensor *out = ZEROS(SHAPE(3, 5));
    assert_true(kernel_top_p(out, x, 0.8));
    assert_tensor_near(out, SHAPE(3, 5), EXACT, 0.0, 0.4705882352941177, 0.0, 0.35294117647058826,
                       0.17647058823529413, 0.25, 0.25, 0.25, 0.25, 0.0, 0.0, 0.5747126436781609,
                       0.28735632183908044, 0.13793103448275862, 0.0);
    Tensor *equal = TENSOR(SHAPE(5), 0.2, 0.2, 0.2, 0.2, 0.2), *kept = ZEROS(SHAPE(5));
    assert_true(kernel_top_p(kept, equal, 0.5));
    assert_tensor_near(kept, SHAPE(5), EXACT, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0);
    Tensor *all = TENSOR(SHAPE(5), 0.05, 0.5, 0.25, 0.12, 0.08), *same = ZEROS(SHAPE(5));
    assert_true(kernel_top_p(same, all, 1.0));
    assert_tensor_near(same, SHAPE(5), EXACT, 0.05, 0.5, 0.25, 0.12, 0.08);
    // the largest is always kept, however small p is
    assert_true(kernel_top_p(same, all, 1e-9));
    assert_tensor_near(same, SHAPE(5), EXACT, 0, 1, 0, 0, 0);
}

static void test_sample(void **state) {
    // numpy: np.random.default_rng(s).choice(5, p=p) draws these ids for s = 0..5, and
    // np.random.default_rng(s).random() is the u each drew with: [3, 2, 2, 0, 4, 3]
    Tensor *p = TENSOR(SHAPE(6, 5), 0.1, 0.0, 0.45, 0.3, 0.15, 0.1, 0.0, 0.45, 0.3, 0.15, 0.1, 0.0, 0.45, 0.3,
                       0.15, 0.1, 0.0, 0.45, 0.3, 0.15, 0.1, 0.0, 0.45, 0.3, 0.15, 0.1, 0.0, 0.45, 0.3, 0.15);
    Tensor *u = TENSOR(SHAPE(6), 0.6369616873214543, 0.5118216247002567, 0.2616121342493164, 0.08564916714362436,
                       0.9430561055723676, 0.8050029237453802);
    Tensor *ids = ZEROS(SHAPE(6));
    kernel_sample(ids, p, u);
    assert_tensor_near(ids, SHAPE(6), EXACT, 3, 2, 2, 0, 4, 3);
    // at the boundaries: u = 0 is id 0; u = 0.1 = cdf[0] is past id 0, and id 1 (probability 0)
    // is skipped; u just below 1 is the last id; one u for every row
    Tensor *at = TENSOR(SHAPE(3, 5), 0.1, 0.0, 0.45, 0.3, 0.15, 0.1, 0.0, 0.45, 0.3, 0.15, 0.1, 0.0, 0.45, 0.3,
                        0.15);
    Tensor *edge = TENSOR(SHAPE(3), 0.0, 0.1, 0.9999999999999999), *three = ZEROS(SHAPE(3));
    kernel_sample(three, at, edge);
    assert_tensor_near(three, SHAPE(3), EXACT, 0, 2, 4);
    Tensor *one = TENSOR(SCALAR_SHAPE, 0.5);
    kernel_sample(three, at, one);
    assert_tensor_near(three, SHAPE(3), EXACT, 2, 2, 2);
    // weights need not sum to 1: cdf is cumsum / sum, [1, 3] is [0.25, 1]
    Tensor *w = TENSOR(SHAPE(2), 1, 3), *pick = ZEROS(SCALAR_SHAPE), *quarter = TENSOR(SCALAR_SHAPE, 0.25);
    kernel_sample(pick, w, quarter);
    assert_double_equal(pick->data[0], 1, EXACT);
}

static void test_eigvals(void **state) {
    // numpy 1.24's np.linalg.eigvals, and by hand: [[2, 1], [-1, 2]] has 2 ± i, so the block
    // upper triangular first matrix has 3, 2 + i, 2 - i; J + I (3 × 3) has 4, 1, 1; the cyclic
    // permutation has the cube roots of 1, of modulus 1 (the larger real part first); the
    // triangular fourth has its diagonal, -3 then two zeros (-0 shown as 0).
    Tensor *a = TENSOR(SHAPE(4, 3, 3), 2, 1, 0, -1, 2, 0.5, 0, 0, 3, 2, 1, 1, 1, 2, 1, 1, 1, 2, 0, 0, 1, 1, 0, 0, 0, 1,
                       0, 0, 5, 1, 0, -3, 2, 0, 0, -0.0);
    Tensor *ev = ZEROS(SHAPE(4, 3, 2));
    size_t failed = 99;
    assert_int_equal(kernel_eigvals(ev, a, KERNEL_EIG_ITERATIONS, &failed), KERNEL_LINALG_OK);
    double h = 0.8660254037844386;  // sqrt(3) / 2
    assert_tensor_near(ev, SHAPE(4, 3, 2), FEW_FLOPS, 3, 0, 2, 1, 2, -1, 4, 0, 1, 0, 1, 0, 1, 0, -0.5, h, -0.5, -h, -3,
                       0, 0, 0, 0, 0);
    for (size_t i = 0; i < ev->size; i++)
        assert_false(signbit(ev->data[i]) && ev->data[i] == 0.0);
    // Scaled by a power of two first, so that 1e300 neither overflows nor loses digits:
    // (5 ± sqrt(33)) / 2 × 1e300.
    Tensor *big = TENSOR(SHAPE(2, 2), 1e300, 2e300, 3e300, 4e300), *big_ev = ZEROS(SHAPE(2, 2));
    assert_int_equal(kernel_eigvals(big_ev, big, KERNEL_EIG_ITERATIONS, &failed), KERNEL_LINALG_OK);
    assert_double_equal(big_ev->data[0] / 5.372281323269015e+300, 1.0, FEW_FLOPS);
    assert_double_equal(big_ev->data[2] / -3.722813232690143e+299, 1.0, FEW_FLOPS);
    assert_true(big_ev->data[1] == 0.0 && big_ev->data[3] == 0.0);
    // D M D^-1 for D = diag(1, 2^20, 2^-20): rows and columns a trillion apart, balanced back;
    // M = [[4, 1, 2], [0.5, 3, 1], [1, -1, 2]] has 3.5 ± sqrt(7) / 2 and 2.
    Tensor *skew = TENSOR(SHAPE(3, 3), 4.0, 9.5367431640625e-07, 2097152.0, 524288.0, 3.0, 1099511627776.0,
                          9.5367431640625e-07, -9.094947017729282e-13, 2.0);
    Tensor *skew_ev = ZEROS(SHAPE(3, 2));
    assert_int_equal(kernel_eigvals(skew_ev, skew, KERNEL_EIG_ITERATIONS, &failed), KERNEL_LINALG_OK);
    assert_tensor_near(skew_ev, SHAPE(3, 2), FEW_FLOPS, 4.822875655532296, 0, 2.1771243444677073, 0, 2, 0);
    // A triangular matrix's eigenvalues are its diagonal, exactly, however often a value repeats
    // (the iteration would find 3 three times only to about 1e-5); a column alone (the last of
    // the second) gives its diagonal value, 7, and leaves [[1, 2], [3, 4]], with (5 ± sqrt(33)) / 2
    // (numpy gives the same bits).
    Tensor *tri = TENSOR(SHAPE(2, 3, 3), 3, 0, 0, 1, 3, 0, 2, 1, 3, 1, 2, 0, 3, 4, 0, 5, 6, 7);
    Tensor *tri_ev = ZEROS(SHAPE(2, 3, 2));
    assert_int_equal(kernel_eigvals(tri_ev, tri, KERNEL_EIG_ITERATIONS, &failed), KERNEL_LINALG_OK);
    assert_tensor_near(tri_ev, SHAPE(2, 3, 2), EXACT, 3, 0, 3, 0, 3, 0, 7, 0, 5.372281323269014, 0,
                       -0.3722813232690143, 0);
    // One number is its own eigenvalue; no matrix has none.
    Tensor *one = TENSOR(SHAPE(1, 1), -2.5), *one_ev = ZEROS(SHAPE(1, 2));
    assert_int_equal(kernel_eigvals(one_ev, one, KERNEL_EIG_ITERATIONS, &failed), KERNEL_LINALG_OK);
    assert_tensor_near(one_ev, SHAPE(1, 2), EXACT, -2.5, 0);
    Tensor *none = ZEROS(SHAPE(2, 0, 0)), *none_ev = ZEROS(SHAPE(2, 0, 2));
    assert_int_equal(kernel_eigvals(none_ev, none, KERNEL_EIG_ITERATIONS, &failed), KERNEL_LINALG_OK);
    // With no QR step allowed, the first two still split into numbers and 2 × 2 blocks (the
    // first is block triangular; J + I's Hessenberg form is [[2, -sqrt 2, 0], [-sqrt 2, 3, 0],
    // [0, 0, 1]]), and the cyclic permutation, which needs steps, is the one reported.
    failed = 99;
    assert_int_equal(kernel_eigvals(ev, a, 0, &failed), KERNEL_LINALG_NO_CONVERGENCE);
    assert_int_equal(failed, 2);
}

static void test_svdvals(void **state) {
    // By hand: [[3, 0], [4, 5]] has σ² = 25 ± 20 (they add up to 50, the squares of its
    // entries, and multiply to 15², its determinant squared): 3 sqrt 5 and sqrt 5. numpy 1.24's
    // np.linalg.svd(compute_uv=False) for [[1, 2, 3], [4, 5, 6]], and its transpose the same.
    Tensor *a = TENSOR(SHAPE(2, 2), 3, 0, 4, 5), *sv = ZEROS(SHAPE(2));
    size_t failed = 99;
    assert_int_equal(kernel_svdvals(sv, a, KERNEL_SVD_SWEEPS, &failed), KERNEL_LINALG_OK);
    assert_tensor_near(sv, SHAPE(2), FEW_FLOPS, 6.708203932499369, 2.23606797749979);
    Tensor *wide = TENSOR(SHAPE(1, 2, 3), 1, 2, 3, 4, 5, 6), *tall = TENSOR(SHAPE(3, 2), 1, 4, 2, 5, 3, 6);
    Tensor *wide_sv = ZEROS(SHAPE(1, 2)), *tall_sv = ZEROS(SHAPE(2));
    assert_int_equal(kernel_svdvals(wide_sv, wide, KERNEL_SVD_SWEEPS, &failed), KERNEL_LINALG_OK);
    assert_int_equal(kernel_svdvals(tall_sv, tall, KERNEL_SVD_SWEEPS, &failed), KERNEL_LINALG_OK);
    assert_tensor_near(wide_sv, SHAPE(1, 2), FEW_FLOPS, 9.508032000695724, 0.7728696356734843);
    assert_tensor_near(tall_sv, SHAPE(2), FEW_FLOPS, 9.508032000695724, 0.7728696356734843);
    // A diagonal matrix: the sizes of its entries, largest first, a tiny one kept to its last
    // digit (one-sided Jacobi is accurate relative to each value); zeros give zeros.
    Tensor *diag = TENSOR(SHAPE(2, 3, 3), 2, 0, 0, 0, -5, 0, 0, 0, 1e-20, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    Tensor *diag_sv = ZEROS(SHAPE(2, 3));
    assert_int_equal(kernel_svdvals(diag_sv, diag, KERNEL_SVD_SWEEPS, &failed), KERNEL_LINALG_OK);
    assert_tensor_near(diag_sv, SHAPE(2, 3), EXACT, 5, 2, 1e-20, 0, 0, 0);
    // Scaled by a power of two first: numpy's for [[1, 2], [3, 4]] × 1e300.
    Tensor *big = TENSOR(SHAPE(2, 2), 1e300, 2e300, 3e300, 4e300), *big_sv = ZEROS(SHAPE(2));
    assert_int_equal(kernel_svdvals(big_sv, big, KERNEL_SVD_SWEEPS, &failed), KERNEL_LINALG_OK);
    assert_double_equal(big_sv->data[0] / 5.464985704219043e+300, 1.0, FEW_FLOPS);
    assert_double_equal(big_sv->data[1] / 3.659661906262575e+299, 1.0, FEW_FLOPS);
    // No rows: no singular values. With one sweep allowed, a matrix that needs a rotation is
    // reported, as only a sweep without one shows it is done; the diagonal ones need none.
    Tensor *empty = ZEROS(SHAPE(0, 4)), *empty_sv = ZEROS(SHAPE(0));
    assert_int_equal(kernel_svdvals(empty_sv, empty, KERNEL_SVD_SWEEPS, &failed), KERNEL_LINALG_OK);
    assert_int_equal(kernel_svdvals(diag_sv, diag, 1, &failed), KERNEL_LINALG_OK);
    assert_int_equal(kernel_svdvals(wide_sv, wide, 1, &failed), KERNEL_LINALG_NO_CONVERGENCE);
    assert_int_equal(failed, 0);
}

static void test_eye_and_triangles(void **state) {
    Tensor *i3 = ZEROS(SHAPE(3, 3));
    kernel_eye(i3);
    assert_tensor_near(i3, SHAPE(3, 3), EXACT, 1, 0, 0, 0, 1, 0, 0, 0, 1);
    // numpy: a = arange(1, 13).reshape(2, 2, 3); each [2, 3] block on its own
    Tensor *a = TENSOR(SHAPE(2, 2, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), *t = ZEROS(SHAPE(2, 2, 3));
    kernel_triangle(t, a, 0, KERNEL_LOWER);  // tril(a)
    assert_tensor_near(t, SHAPE(2, 2, 3), EXACT, 1, 0, 0, 4, 5, 0, 7, 0, 0, 10, 11, 0);
    kernel_triangle(t, a, 1, KERNEL_UPPER);  // triu(a, 1)
    assert_tensor_near(t, SHAPE(2, 2, 3), EXACT, 0, 2, 3, 0, 0, 6, 0, 8, 9, 0, 0, 12);
    kernel_triangle(t, a, -1, KERNEL_LOWER);  // tril(a, -1)
    assert_tensor_near(t, SHAPE(2, 2, 3), EXACT, 0, 0, 0, 4, 0, 0, 0, 0, 0, 10, 0, 0);
    kernel_triangle(t, a, -1, KERNEL_UPPER);  // triu(a, -1): every entry
    assert_tensor_near(t, SHAPE(2, 2, 3), EXACT, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    // the entries set to 0 pass nothing back: din += dout inside the triangle only
    Tensor *g = TENSOR(SHAPE(2, 2, 3), 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2), *d = ZEROS(SHAPE(2, 2, 3));
    kernel_grad_triangle(d, g, 0, KERNEL_LOWER);
    kernel_grad_triangle(d, g, 0, KERNEL_LOWER);
    assert_tensor_near(d, SHAPE(2, 2, 3), EXACT, 2, 0, 0, 2, 2, 0, 4, 0, 0, 4, 4, 0);
}

static void test_layernorm(void **state) {
    Tensor *x = TENSOR(SHAPE(4), 2, 4, 6, 8), *y = ZEROS(SHAPE(4));
    Tensor *one = TENSOR(SCALAR_SHAPE, 1), *zero = TENSOR(SCALAR_SHAPE, 0);
    kernel_layernorm(y, x, one, zero, 1e-5);
    // numpy: (x - x.mean()) / sqrt(x.var() + 1e-5); mean 5, population variance 5
    assert_tensor_near(y, SHAPE(4), FEW_FLOPS, -1.3416394448610998, -0.4472131482870333,
                       0.4472131482870333, 1.3416394448610998);
}

static void test_layernorm_gamma_beta(void **state) {
    Tensor *x = TENSOR(SHAPE(2, 3), 1, -1, 3, 0.25, 0.5, 2), *y = ZEROS(SHAPE(2, 3));
    Tensor *gamma = TENSOR(SHAPE(3), 1, 2, 0.5), *beta = TENSOR(SHAPE(3), 0, -1, 0.25);
    kernel_layernorm(y, x, gamma, beta, 1e-5);
    // numpy, per row: (x - mu) / sqrt(var + 1e-5) * gamma + beta
    assert_tensor_near(y, SHAPE(2, 3), FEW_FLOPS, 0.0, -3.4494851500028276, 0.8623712875007069,
                       -0.8626549634301388, -2.0783187042876734, 0.9509071577869879);
}

static void test_layernorm_constant_row(void **state) {
    // variance 0: (x - mean) is exactly 0 and eps keeps the divisor positive, so the row is
    // beta, not nan
    Tensor *x = TENSOR(SHAPE(2, 4), 5, 5, 5, 5, 0, 0, 0, 0), *y = ZEROS(SHAPE(2, 4));
    Tensor *gamma = TENSOR(SCALAR_SHAPE, 3), *beta = TENSOR(SHAPE(4), 0.5, -1, 0, 2);
    kernel_layernorm(y, x, gamma, beta, 1e-5);
    assert_tensor_near(y, SHAPE(2, 4), EXACT, 0.5, -1, 0, 2, 0.5, -1, 0, 2);
}

static void test_rmsnorm(void **state) {
    // numpy: x / sqrt(mean(x**2, axis=-1, keepdims=True) + 1e-5) * gamma; mean(x^2) of the first
    // row is (1 + 4 + 9 + 0.25) / 4 = 3.5625; the zero row stays 0 (eps keeps it from 0 / 0)
    Tensor *x = TENSOR(SHAPE(2, 4), 1, -2, 3, 0.5, 0, 0, 0, 0), *y = ZEROS(SHAPE(2, 4));
    Tensor *gamma = TENSOR(SHAPE(4), 1, 2, 0.5, 1);
    kernel_rmsnorm(y, x, gamma, 1e-5);
    assert_tensor_near(y, SHAPE(2, 4), FEW_FLOPS, 0.5298121992304703, -2.119248796921881, 0.7947182988457054,
                       0.26490609961523515, 0.0, 0.0, 0.0, 0.0);
    // [3, 4] has mean square 12.5, root 3.5355...: a scalar gamma 2 scales both
    Tensor *x2 = TENSOR(SHAPE(2), 3, 4), *y2 = ZEROS(SHAPE(2)), *two = TENSOR(SCALAR_SHAPE, 2);
    kernel_rmsnorm(y2, x2, two, 0);
    assert_tensor_near(y2, SHAPE(2), FEW_FLOPS, 1.697056274847714, 2.262741699796952);
}

static void test_norms_of_huge_values(void **state) {
    // Squares of 1e200 overflow to inf, so (x - mean) / sqrt(var + eps) read directly would give
    // 0, -0, 0. A normalisation does not change when its line is scaled (eps aside, and eps is
    // nothing beside a variance of 1e400), so the answer is that of [1, -1, 3]. numpy, on
    // v = [1., -1., 3.]: (v - v.mean()) / v.std() and v / sqrt((v**2).mean()).
    Tensor *x = TENSOR(SHAPE(3), 1e200, -1e200, 3e200), *y = ZEROS(SHAPE(3));
    Tensor *one = TENSOR(SCALAR_SHAPE, 1), *zero = TENSOR(SCALAR_SHAPE, 0);
    kernel_layernorm(y, x, one, zero, 1e-5);
    assert_tensor_near(y, SHAPE(3), FEW_FLOPS, 0.0, -1.224744871391589, 1.224744871391589);
    kernel_rmsnorm(y, x, one, 1e-5);
    assert_tensor_near(y, SHAPE(3), FEW_FLOPS, 0.5222329678670935, -0.5222329678670935, 1.5666989036012806);
    // as a batch: the same line down a column
    Tensor *col = TENSOR(SHAPE(3, 1), 1e200, -1e200, 3e200), *ycol = ZEROS(SHAPE(3, 1));
    kernel_batchnorm(ycol, col, one, zero, 1e-5);
    assert_tensor_near(ycol, SHAPE(3, 1), FEW_FLOPS, 0.0, -1.224744871391589, 1.224744871391589);
    // A sum that overflows though every value is finite: the mean of [1e308, 1e308] is 1e308,
    // and each value is the mean, so LayerNorm gives beta; RMSNorm gives x / |x| = 1.
    Tensor *big = TENSOR(SHAPE(2), 1e308, 1e308), *ybig = ZEROS(SHAPE(2));
    kernel_layernorm(ybig, big, one, TENSOR(SCALAR_SHAPE, 0.5), 1e-5);
    assert_tensor_near(ybig, SHAPE(2), EXACT, 0.5, 0.5);
    kernel_rmsnorm(ybig, big, one, 1e-5);
    assert_tensor_near(ybig, SHAPE(2), FEW_FLOPS, 1.0, 1.0);
    // An infinite value has no finite answer: nan, as numpy gives.
    Tensor *inf = TENSOR(SHAPE(2), INFINITY, 1.0), *yinf = ZEROS(SHAPE(2));
    kernel_layernorm(yinf, inf, one, zero, 1e-5);
    assert_tensor_near(yinf, SHAPE(2), EXACT, NAN, NAN);
}

static void test_batchnorm(void **state) {
    // numpy: x = sin(arange(24)).reshape(2, 3, 4) * 3 + 1; statistics over axes (0, 1)
    Tensor *x = iota(SHAPE(2, 3, 4)), *y = ZEROS(SHAPE(2, 3, 4));
    for (size_t i = 0; i < x->size; i++)
        x->data[i] = sin(x->data[i]) * 3 + 1;
    Tensor *gamma = TENSOR(SHAPE(4), 1, 0.5, 2, -1), *beta = TENSOR(SHAPE(4), 0, 0.1, -0.2, 0.3);
    kernel_batchnorm(y, x, gamma, beta, 1e-5);
    assert_tensor_near(
        y, SHAPE(2, 3, 4), FEW_FLOPS, -0.07919402542206527, 0.5837151245912428,
        2.339822558643385, 0.022993479081331147, -1.199373690234134, -0.5882024444952539,
        -1.185021431317741, -0.7602554187692192, 1.3852025588290302, 0.3042399732733069,
        -1.9696461156859917, 1.7555602591438053, -0.8734013320303793, 0.3094789556347669,
        2.580927713693999, -0.7500845812786678, -0.5053335304575705, -0.5898123169345645,
        -2.583354711624009, 0.009697272992252204, 1.2721000193151186, 0.5805807079305019,
        -0.3827280137096434, 1.522088988830499);
}

// ---------------------------------------------------------------- reductions

static void test_reduce_shape(void **state) {
    Shape s;
    assert_true(kernel_reduce_shape(&SHAPE(2, 3, 4), 1, false, &s));
    assert_shape(&s, SHAPE(2, 4));
    assert_true(kernel_reduce_shape(&SHAPE(2, 3, 4), 1, true, &s));
    assert_shape(&s, SHAPE(2, 1, 4));
    assert_true(kernel_reduce_shape(&SHAPE(2, 3, 4), 2, false, &s));
    assert_shape(&s, SHAPE(2, 3));
    assert_true(kernel_reduce_shape(&SHAPE(2, 3, 4), KERNEL_ALL_AXES, false, &s));
    assert_shape(&s, SCALAR_SHAPE);
    assert_true(kernel_reduce_shape(&SHAPE(2, 3, 4), KERNEL_ALL_AXES, true, &s));
    assert_shape(&s, SHAPE(1, 1, 1));
    assert_false(kernel_reduce_shape(&SHAPE(2, 3, 4), 3, false, &s));
    assert_false(kernel_reduce_shape(&SHAPE(2, 3, 4), -2, false, &s));
    assert_false(kernel_reduce_shape(&SCALAR_SHAPE, 0, false, &s));
}

// numpy: r = cos(arange(24) * 1.7).reshape(2, 3, 4) * 5, then r.sum(axis=...) etc.
static const double reduce_input[] = {
    5.0, -0.6442224714776232, -4.833990962897305, 1.8898887135649012, 4.3469874517491265,
    -3.0100595134241184, -3.5713282601360015, 3.9303514807051965, 2.558519962265745,
    -4.589653902071463, -1.3758166902579847, 4.94418671347073, 0.1017542166584149,
    -4.97040765464631, 1.1790651047526128, 4.66657556031961, -2.381590241075076,
    -4.052865979858663, 3.4259691763199216, 3.170031447868677, -4.242851373923026,
    -2.076695368580317, 4.777992903064197, 0.8454592098944652};

static const struct ReduceCase {
    int axis;
    KernelReduce op;
    Shape shape;
    double want[12];
} reduce_cases[] = {
    {0, KERNEL_SUM, {2, {3, 4}},
     {5.101754216658415, -5.6146301261239335, -3.654925858144692, 6.556464273884512,
      1.9653972106740505, -7.062925493282782, -0.14535908381607987, 7.1003829285738735,
      -1.684331411657281, -6.66634927065178, 3.4021762128062125, 5.789645923365195}},
    {0, KERNEL_MEAN, {2, {3, 4}},
     {2.5508771083292077, -2.8073150630619668, -1.827462929072346, 3.278232136942256,
      0.9826986053370252, -3.531462746641391, -0.07267954190803994, 3.5501914642869368,
      -0.8421657058286405, -3.33317463532589, 1.7010881064031063, 2.8948229616825976}},
    {0, KERNEL_VAR, {2, {3, 4}},
     {5.998202938505905, 4.678969559767071, 9.039210818175375, 1.927497461235152,
      11.318439442092869, 0.2718613316094254, 12.240542853558159, 0.14452163808313148,
      11.564663013182557, 1.578740147761493, 9.467343127716028, 4.199891787143129}},
    {0, KERNEL_MAX, {2, {3, 4}},
     {5.0, -0.6442224714776232, 1.1790651047526128, 4.66657556031961, 4.3469874517491265,
      -3.0100595134241184, 3.4259691763199216, 3.9303514807051965, 2.558519962265745,
      -2.076695368580317, 4.777992903064197, 4.94418671347073}},
    {0, KERNEL_MIN, {2, {3, 4}},
     {0.1017542166584149, -4.97040765464631, -4.833990962897305, 1.8898887135649012,
      -2.381590241075076, -4.052865979858663, -3.5713282601360015, 3.170031447868677,
      -4.242851373923026, -4.589653902071463, -1.3758166902579847, 0.8454592098944652}},
    {0, KERNEL_ARGMAX, {2, {3, 4}}, {0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0}},
    {1, KERNEL_SUM, {2, {2, 4}},
     {11.90550741401487, -8.243935886973205, -9.78113591329129, 10.764426907740827,
      -6.522687398339687, -11.099969003085292, 9.383027184136731, 8.682066218082753}},
    {1, KERNEL_MEAN, {2, {2, 4}},
     {3.96850247133829, -2.7479786289910684, -3.2603786377637634, 3.5881423025802754,
      -2.1742291327798955, -3.6999896676950974, 3.127675728045577, 2.8940220726942507}},
    {1, KERNEL_VAR, {2, {2, 4}},
     {1.0650962359741054, 2.628748057245564, 2.041506383817467, 1.6133429395012577,
      3.1674322709019544, 1.4578559782646259, 2.203203040218344, 2.4715789481731516}},
    {1, KERNEL_MAX, {2, {2, 4}},
     {5.0, -0.6442224714776232, -1.3758166902579847, 4.94418671347073, 0.1017542166584149,
      -2.076695368580317, 4.777992903064197, 4.66657556031961}},
    {1, KERNEL_MIN, {2, {2, 4}},
     {2.558519962265745, -4.589653902071463, -4.833990962897305, 1.8898887135649012,
      -4.242851373923026, -4.97040765464631, 1.1790651047526128, 0.8454592098944652}},
    {1, KERNEL_ARGMAX, {2, {2, 4}}, {0, 0, 2, 2, 0, 2, 2, 0}},
    {2, KERNEL_SUM, {2, {2, 3}},
     {1.411675279189973, 1.6959511588942031, 1.537236083407027, 0.9769872270843281,
      0.16154440325485897, -0.6960946295446809}},
    {2, KERNEL_MEAN, {2, {2, 3}},
     {0.35291881979749323, 0.4239877897235508, 0.3843090208517568, 0.24424680677108201,
      0.04038610081371474, -0.17402365738617023}},
    {2, KERNEL_VAR, {2, {2, 3}},
     {12.96399094958013, 13.859935975052082, 13.339506866733226, 11.910950536230125,
      10.969383689023653, 11.434332989772606}},
    {2, KERNEL_MAX, {2, {2, 3}},
     {5.0, 4.3469874517491265, 4.94418671347073, 4.66657556031961, 3.4259691763199216,
      4.777992903064197}},
    {2, KERNEL_MIN, {2, {2, 3}},
     {-4.833990962897305, -3.5713282601360015, -4.589653902071463, -4.97040765464631,
      -4.052865979858663, -4.242851373923026}},
    {2, KERNEL_ARGMAX, {2, {2, 3}}, {0, 0, 3, 3, 2, 2}},
    {KERNEL_ALL_AXES, KERNEL_SUM, {0, {0}}, {5.087299522285712}},
    {KERNEL_ALL_AXES, KERNEL_MEAN, {0, {0}}, {0.21197081342857135}},
    {KERNEL_ALL_AXES, KERNEL_VAR, {0, {0}}, {12.458682297952535}},
    {KERNEL_ALL_AXES, KERNEL_MAX, {0, {0}}, {5.0}},
    {KERNEL_ALL_AXES, KERNEL_MIN, {0, {0}}, {-4.97040765464631}},
    {KERNEL_ALL_AXES, KERNEL_ARGMAX, {0, {0}}, {0}},
    // numpy: sqrt(sum(x * x, axis)) and np.linalg.norm(x.ravel())
    {0, KERNEL_NORM, {2, {3, 4}},
     {5.001035284879299, 5.011983125083661, 4.9757073015419735, 5.034739994263088, 4.956639182152399,
      5.048383991442288, 4.9489039532749315, 5.0494318633246165, 4.954574873640807, 5.037617154437477,
      4.9721311071736904, 5.015952903811585}},
    {1, KERNEL_NORM, {2, {2, 4}},
     {7.1022759945651694, 5.526337286839412, 6.165608302204356, 6.59274786179496, 4.86663269398794,
      6.741167447701125, 5.996388538117866, 5.704456864263594}},
    {2, KERNEL_NORM, {2, {2, 3}},
     {7.235618188640798, 7.493917966160757, 7.344984762473306, 6.919713011057032, 6.624504427098706,
      6.7718881334832055}},
    {KERNEL_ALL_AXES, KERNEL_NORM, {0, {0}}, {17.323011694528024}},
};

static void test_reduce(void **state) {
    Tensor *r = make_tensor(SHAPE(2, 3, 4), reduce_input, ARRAY_LEN(reduce_input));
    for (size_t c = 0; c < ARRAY_LEN(reduce_cases); c++) {
        const struct ReduceCase *rc = &reduce_cases[c];
        snprintf(failing_case, sizeof(failing_case), "reduce_cases[%zu] (axis %d, op %d)", c,
                 rc->axis, (int)rc->op);
        Tensor *out = ZEROS(rc->shape);
        kernel_reduce(out, r, rc->axis, rc->op);
        // sums of up to 24 values below 5 in magnitude: each rounding is below 1e-15; numpy
        // may add in another order (pairwise), so the last digits can differ
        tensor_near(out, rc->shape, rc->want, out->size, FEW_FLOPS, __FILE__, __LINE__);
    }
}

static void test_reduce_keepdims(void **state) {
    // the same values in another shape: keepdims only keeps the axis as size 1
    Tensor *a = TENSOR(SHAPE(2, 2), 1, 2, 3, 4), *out = ZEROS(SHAPE(1, 2));
    kernel_reduce(out, a, 0, KERNEL_SUM);
    assert_tensor_near(out, SHAPE(1, 2), EXACT, 4, 6);
}

static void test_norm_extremes(void **state) {
    // The squares of 1e300 overflow and those of 1e-300 underflow; the norm of each row is
    // still sqrt(2) times its value, 3-4-5 stays exact, a row of zeros is 0, inf gives inf and
    // nan gives nan (as numpy's norm does on them). The two roots are the correctly rounded
    // sqrt(2e600) and sqrt(2e-600) (Python's decimal at 60 digits).
    Tensor *a = TENSOR(SHAPE(6, 2), 1e300, 1e300, 1e-300, -1e-300, 3, 4, 0, 0, INFINITY, 1, NAN, 1);
    Tensor *out = ZEROS(SHAPE(6));
    kernel_reduce(out, a, 1, KERNEL_NORM);
    assert_tensor_near(out, SHAPE(6), EXACT, 1.4142135623730952e300, 1.414213562373095e-300, 5, 0, INFINITY,
                       NAN);
    // Subnormal rows (the largest below 2^-1022), whose scale 2^1074 is past the largest
    // double: the norm is the exact one correctly rounded (Python's decimal at 80 digits; numpy's
    // hypot agrees), 5e-324 * sqrt(2) rounding to 5e-324 on the subnormals' grid, never nan.
    // (numpy's linalg.norm squares first and gives 0 for each.)
    Tensor *sub = TENSOR(SHAPE(5, 2), 5e-324, 5e-324, 1e-310, -1e-310, 5e-324, 0, 3e-320, 4e-320, 1e-308, 1e-308);
    Tensor *sub_out = ZEROS(SHAPE(5));
    kernel_reduce(sub_out, sub, 1, KERNEL_NORM);
    assert_tensor_near(sub_out, SHAPE(5), EXACT, 5e-324, 1.4142135623731e-310, 5e-324, 5e-320,
                       1.414213562373095e-308);
    // an empty axis: the norm of nothing is 0
    Tensor *none = ZEROS(SHAPE(2, 0)), *zero = TENSOR(SHAPE(2), 7, 7);
    kernel_reduce(zero, none, 1, KERNEL_NORM);
    assert_tensor_near(zero, SHAPE(2), EXACT, 0, 0);
}

static void test_argmax_ties(void **state) {
    // the first of equal largest values wins
    Tensor *a = TENSOR(SHAPE(2, 4), 3, 1, 3, 2, 7, 0, 9, 9), *out = ZEROS(SHAPE(2));
    kernel_reduce(out, a, 1, KERNEL_ARGMAX);
    assert_tensor_near(out, SHAPE(2), EXACT, 0, 2);
    Tensor *all = ZEROS(SCALAR_SHAPE);
    kernel_reduce(all, a, KERNEL_ALL_AXES, KERNEL_ARGMAX);
    assert_tensor_near(all, SCALAR_SHAPE, EXACT, 6);  // flat index, as numpy
}

static void test_reduce_nan(void **state) {
    // numpy: max and min propagate nan, argmax points at the first nan
    Tensor *a = TENSOR(SHAPE(4), 1, NAN, 3, NAN), *out = ZEROS(SCALAR_SHAPE);
    kernel_reduce(out, a, 0, KERNEL_MAX);
    assert_true(isnan(out->data[0]));
    kernel_reduce(out, a, 0, KERNEL_MIN);
    assert_true(isnan(out->data[0]));
    kernel_reduce(out, a, 0, KERNEL_ARGMAX);
    assert_double_equal(out->data[0], 1, EXACT);
}

// ---------------------------------------------------------------- indexing and reshaping

static void test_index(void **state) {
    Tensor *a = iota(SHAPE(2, 3, 4));
    KernelAxisIndex at1[] = {{.kind = KERNEL_INDEX_AT, .start = 1}};
    Tensor *o1 = ZEROS(SHAPE(3, 4));
    kernel_index(o1, a, at1, 1);  // a[1]
    assert_tensor_near(o1, SHAPE(3, 4), EXACT, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);

    KernelAxisIndex range[] = {{.kind = KERNEL_INDEX_ALL},
                               {.kind = KERNEL_INDEX_RANGE, .start = 0, .stop = 2}};
    Tensor *o2 = ZEROS(SHAPE(2, 2, 4));
    kernel_index(o2, a, range, 2);  // a[:, 0:2]
    assert_tensor_near(o2, SHAPE(2, 2, 4), EXACT, 0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16,
                       17, 18, 19);

    const size_t rows[] = {2, 0};
    KernelAxisIndex list[] = {{.kind = KERNEL_INDEX_ALL},
                              {.kind = KERNEL_INDEX_LIST, .list = rows, .n_list = 2},
                              {.kind = KERNEL_INDEX_RANGE, .start = 1, .stop = 3}};
    Tensor *o3 = ZEROS(SHAPE(2, 2, 2));
    kernel_index(o3, a, list, 3);  // a[:, [2, 0], 1:3], gathered in list order
    assert_tensor_near(o3, SHAPE(2, 2, 2), EXACT, 9, 10, 1, 2, 21, 22, 13, 14);

    KernelAxisIndex point[] = {{.kind = KERNEL_INDEX_AT, .start = 1},
                               {.kind = KERNEL_INDEX_AT, .start = 2},
                               {.kind = KERNEL_INDEX_AT, .start = 3}};
    Tensor *o4 = ZEROS(SCALAR_SHAPE);
    kernel_index(o4, a, point, 3);  // a[1, 2, 3]
    assert_tensor_near(o4, SCALAR_SHAPE, EXACT, 23);
}

static void test_index_list_moves_first(void **state) {
    // numpy's rule: the whole number 0 and the list [3, 1] are advanced indices with a ':'
    // between them, so the gathered axis goes first: a[0, :, [3, 1]] is [2, 3], with
    // out[k, j] = a[0, j, cols[k]] (numpy 1.24: [[3, 7, 11], [1, 5, 9]] for a = arange(24))
    Tensor *a = iota(SHAPE(2, 3, 4));
    const size_t cols[] = {3, 1};
    KernelAxisIndex ix[] = {{.kind = KERNEL_INDEX_AT, .start = 0},
                            {.kind = KERNEL_INDEX_ALL},
                            {.kind = KERNEL_INDEX_LIST, .list = cols, .n_list = 2}};
    Shape s;
    assert_true(kernel_index_shape(&a->shape, ix, 3, &s));
    assert_shape(&s, SHAPE(2, 3));
    assert_int_equal(kernel_index_list_axis(ix, 3), 0);
    Tensor *o = ZEROS(s);
    kernel_index(o, a, ix, 3);
    assert_tensor_near(o, SHAPE(2, 3), EXACT, 3, 7, 11, 1, 5, 9);
    // Side by side they stay: a[:, 0, [3, 1]] is [2, 2] = [[3, 1], [15, 13]].
    KernelAxisIndex adjacent[] = {{.kind = KERNEL_INDEX_ALL},
                                  {.kind = KERNEL_INDEX_AT, .start = 0},
                                  {.kind = KERNEL_INDEX_LIST, .list = cols, .n_list = 2}};
    assert_true(kernel_index_shape(&a->shape, adjacent, 3, &s));
    assert_int_equal(kernel_index_list_axis(adjacent, 3), 1);
    Tensor *o2 = ZEROS(s);
    kernel_index(o2, a, adjacent, 3);
    assert_tensor_near(o2, SHAPE(2, 2), EXACT, 3, 1, 15, 13);
    // A new axis separates too: a[1, None, [2, 0]] is [2, 1, 4] (rows 2 and 0 of a[1]).
    const size_t rows[] = {2, 0};
    KernelAxisIndex apart[] = {{.kind = KERNEL_INDEX_AT, .start = 1},
                               {.kind = KERNEL_INDEX_NEW},
                               {.kind = KERNEL_INDEX_LIST, .list = rows, .n_list = 2}};
    assert_true(kernel_index_shape(&a->shape, apart, 3, &s));
    assert_shape(&s, SHAPE(2, 1, 4));
    Tensor *o3 = ZEROS(s);
    kernel_index(o3, a, apart, 3);
    assert_tensor_near(o3, SHAPE(2, 1, 4), EXACT, 20, 21, 22, 23, 12, 13, 14, 15);
}

static void test_index_new_axis(void **state) {
    // x[:, None] on [3] is [3, 1]; x[None] is [1, 3]; x[None, :, None] is [1, 3, 1]; the
    // values do not move.
    Tensor *x = TENSOR(SHAPE(3), 10, 20, 30);
    Shape s;
    KernelAxisIndex column[] = {{.kind = KERNEL_INDEX_ALL}, {.kind = KERNEL_INDEX_NEW}};
    assert_true(kernel_index_shape(&x->shape, column, 2, &s));
    assert_shape(&s, SHAPE(3, 1));
    Tensor *o = ZEROS(s);
    kernel_index(o, x, column, 2);
    assert_tensor_near(o, SHAPE(3, 1), EXACT, 10, 20, 30);
    KernelAxisIndex row[] = {{.kind = KERNEL_INDEX_NEW}};
    assert_true(kernel_index_shape(&x->shape, row, 1, &s));
    assert_shape(&s, SHAPE(1, 3));
    KernelAxisIndex both[] = {{.kind = KERNEL_INDEX_NEW}, {.kind = KERNEL_INDEX_ALL}, {.kind = KERNEL_INDEX_NEW}};
    assert_true(kernel_index_shape(&x->shape, both, 3, &s));
    assert_shape(&s, SHAPE(1, 3, 1));
    // A scalar takes new axes: 5[None, None] is [[5]].
    Shape scalar = SCALAR_SHAPE;
    assert_true(kernel_index_shape(&scalar, both, 1, &s));
    assert_shape(&s, SHAPE(1));
    // No more than TENSOR_MAX_RANK axes in the result: [3] with four new axes is 5.
    KernelAxisIndex five[] = {{.kind = KERNEL_INDEX_NEW}, {.kind = KERNEL_INDEX_NEW}, {.kind = KERNEL_INDEX_NEW},
                              {.kind = KERNEL_INDEX_NEW}};
    assert_false(kernel_index_shape(&x->shape, five, 4, &s));
    assert_true(kernel_index_shape(&x->shape, five, 3, &s));
    assert_shape(&s, SHAPE(1, 1, 1, 3));
}

// numpy.isclose's rule: |a - b| <= atol + rtol * |b|; a nan is close to nothing, an inf only
// to the same inf.
static void test_isclose(void **state) {
    (void)state;
    assert_true(kernel_isclose(1.0, 1.0 + 1e-9, 1e-5, 1e-8));
    assert_false(kernel_isclose(1.0, 1.1, 1e-5, 1e-8));
    assert_true(kernel_isclose(0.0, 1e-9, 0.0, 1e-8));  // atol alone: 1e-9 <= 1e-8
    assert_false(kernel_isclose(NAN, 1.0, 1e-5, 1e-8));
    assert_false(kernel_isclose(1.0, NAN, 1e-5, 1e-8));
    assert_false(kernel_isclose(NAN, NAN, 1e-5, 1e-8));
    assert_true(kernel_isclose(INFINITY, INFINITY, 1e-5, 1e-8));
    assert_false(kernel_isclose(INFINITY, -INFINITY, 1e-5, 1e-8));
    assert_false(kernel_isclose(1.0, INFINITY, 1e-5, 1e-8));
    assert_false(kernel_isclose(-INFINITY, 1e308, 1e-5, 1e-8));
}

static void test_reshape_shape(void **state) {
    Shape s, a = SHAPE(2, 3, 4);
    const long long flat[] = {24}, rows[] = {-1, 4}, cube[] = {2, -1, 2, 3}, two[] = {-1, -1},
                    wrong[] = {5, 5}, neg[] = {-2, -12}, zero[] = {0, -1}, five[] = {1, 1, 1, 1, 24};
    assert_int_equal(kernel_reshape_shape(&a, flat, 1, &s), KERNEL_RESHAPE_OK);
    assert_shape(&s, SHAPE(24));
    assert_int_equal(kernel_reshape_shape(&a, rows, 2, &s), KERNEL_RESHAPE_OK);
    assert_shape(&s, SHAPE(6, 4));
    assert_int_equal(kernel_reshape_shape(&a, cube, 4, &s), KERNEL_RESHAPE_OK);
    assert_shape(&s, SHAPE(2, 2, 2, 3));
    assert_int_equal(kernel_reshape_shape(&a, two, 2, &s), KERNEL_RESHAPE_TWO_UNKNOWN);
    assert_int_equal(kernel_reshape_shape(&a, wrong, 2, &s), KERNEL_RESHAPE_SIZE_DIFFERS);
    assert_int_equal(kernel_reshape_shape(&a, neg, 2, &s), KERNEL_RESHAPE_NEGATIVE);
    assert_int_equal(kernel_reshape_shape(&a, zero, 2, &s), KERNEL_RESHAPE_UNKNOWN_OF_ZERO);
    assert_int_equal(kernel_reshape_shape(&a, five, 5, &s), KERNEL_RESHAPE_TOO_MANY_AXES);
    // -1 cannot make 24 from 5s; a scalar reshapes to [] and to [1, 1].
    const long long by5[] = {-1, 5}, ones[] = {1, 1};
    assert_int_equal(kernel_reshape_shape(&a, by5, 2, &s), KERNEL_RESHAPE_SIZE_DIFFERS);
    // 2^40 * 2^40 = 2^80 does not fit in 64 bits, let alone match 24.
    const long long huge[] = {1LL << 40, 1LL << 40}, huge_and_unknown[] = {1LL << 40, 1LL << 40, -1};
    assert_int_equal(kernel_reshape_shape(&a, huge, 2, &s), KERNEL_RESHAPE_SIZE_DIFFERS);
    assert_int_equal(kernel_reshape_shape(&a, huge_and_unknown, 3, &s), KERNEL_RESHAPE_SIZE_DIFFERS);
    Shape scalar = SCALAR_SHAPE;
    assert_int_equal(kernel_reshape_shape(&scalar, NULL, 0, &s), KERNEL_RESHAPE_OK);
    assert_int_equal(s.rank, 0);
    assert_int_equal(kernel_reshape_shape(&scalar, ones, 2, &s), KERNEL_RESHAPE_OK);
    assert_shape(&s, SHAPE(1, 1));
    // An empty tensor: [2, 0] reshapes to [0, 5] but not to [-1, 0] (any size would do).
    Shape empty = SHAPE(2, 0);
    const long long to05[] = {0, 5}, unknown0[] = {-1, 0};
    assert_int_equal(kernel_reshape_shape(&empty, to05, 2, &s), KERNEL_RESHAPE_OK);
    assert_shape(&s, SHAPE(0, 5));
    assert_int_equal(kernel_reshape_shape(&empty, unknown0, 2, &s), KERNEL_RESHAPE_UNKNOWN_OF_ZERO);
}

static void test_reshape(void **state) {
    Tensor *a = iota(SHAPE(2, 3)), *out = ZEROS(SHAPE(3, 2));
    kernel_reshape(out, a);
    assert_tensor_near(out, SHAPE(3, 2), EXACT, 0, 1, 2, 3, 4, 5);
}

static void test_index_shape(void **state) {
    Shape s, a = SHAPE(2, 3, 4);
    const size_t two[] = {0, 1}, far[] = {0, 3};
    KernelAxisIndex lists[] = {{.kind = KERNEL_INDEX_LIST, .list = two, .n_list = 2},
                               {.kind = KERNEL_INDEX_LIST, .list = two, .n_list = 2}};
    assert_false(kernel_index_shape(&a, lists, 2, &s));  // at most one list
    assert_true(kernel_index_shape(&a, lists, 1, &s));
    assert_shape(&s, SHAPE(2, 3, 4));
    KernelAxisIndex out_of_range[] = {{.kind = KERNEL_INDEX_ALL},
                                      {.kind = KERNEL_INDEX_LIST, .list = far, .n_list = 2}};
    assert_false(kernel_index_shape(&a, out_of_range, 2, &s));
    KernelAxisIndex too_many[4] = {{.kind = KERNEL_INDEX_ALL}};
    assert_false(kernel_index_shape(&a, too_many, 4, &s));
    KernelAxisIndex more_than_max[KERNEL_MAX_INDEX + 1] = {{.kind = KERNEL_INDEX_NEW}};
    assert_false(kernel_index_shape(&a, more_than_max, KERNEL_MAX_INDEX + 1, &s));
    KernelAxisIndex backwards[] = {{.kind = KERNEL_INDEX_RANGE, .start = 2, .stop = 1}};
    assert_false(kernel_index_shape(&a, backwards, 1, &s));  // 2:1 is not a range
    KernelAxisIndex empty[] = {{.kind = KERNEL_INDEX_RANGE, .start = 1, .stop = 1}};
    assert_true(kernel_index_shape(&a, empty, 1, &s));
    assert_shape(&s, SHAPE(0, 3, 4));
    assert_true(kernel_index_shape(&a, NULL, 0, &s));
    assert_shape(&s, SHAPE(2, 3, 4));
}

static void test_concat(void **state) {
    Tensor *p = iota(SHAPE(2, 3)), *q = TENSOR(SHAPE(2, 2), 100, 101, 102, 103);
    const Tensor *cols[] = {p, q};
    const Shape *col_shapes[] = {&p->shape, &q->shape};
    Shape s;
    assert_true(kernel_concat_shape(col_shapes, 2, 1, &s));
    assert_shape(&s, SHAPE(2, 5));
    Tensor *wide = ZEROS(s);
    kernel_concat(wide, cols, 2, 1);
    assert_tensor_near(wide, SHAPE(2, 5), EXACT, 0, 1, 2, 100, 101, 3, 4, 5, 102, 103);
    assert_false(kernel_concat_shape(col_shapes, 2, 0, &s));  // 3 columns against 2

    Tensor *r = TENSOR(SHAPE(1, 3), -7, -6, -5);
    const Tensor *rows[] = {p, r};
    Tensor *tall = ZEROS(SHAPE(3, 3));
    kernel_concat(tall, rows, 2, 0);
    assert_tensor_near(tall, SHAPE(3, 3), EXACT, 0, 1, 2, 3, 4, 5, -7, -6, -5);

    const Shape *bad_rank[] = {&p->shape, &SHAPE(6)};
    assert_false(kernel_concat_shape(bad_rank, 2, 0, &s));
    assert_false(kernel_concat_shape(col_shapes, 0, 0, &s));
    assert_false(kernel_concat_shape(col_shapes, 2, 2, &s));
}

static void test_split_merge_heads(void **state) {
    Tensor *x = iota(SHAPE(2, 3, 4));
    Shape s;
    assert_true(kernel_split_heads_shape(&x->shape, 2, &s));
    assert_shape(&s, SHAPE(2, 2, 3, 2));
    Tensor *h = ZEROS(s);
    kernel_split_heads(h, x, 2);
    // numpy: x.reshape(2, 3, 2, 2).transpose(0, 2, 1, 3)
    assert_tensor_near(h, SHAPE(2, 2, 3, 2), EXACT, 0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11, 12,
                       13, 16, 17, 20, 21, 14, 15, 18, 19, 22, 23);
    assert_true(kernel_merge_heads_shape(&h->shape, &s));
    assert_shape(&s, SHAPE(2, 3, 4));
    Tensor *back = ZEROS(s);
    kernel_merge_heads(back, h);
    tensor_near(back, x->shape, x->data, x->size, EXACT, __FILE__, __LINE__);

    assert_false(kernel_split_heads_shape(&SHAPE(3, 4), 3, &s));  // 4 columns, 3 heads
    assert_false(kernel_split_heads_shape(&SHAPE(3, 4), 0, &s));
    assert_false(kernel_split_heads_shape(&SHAPE(4), 2, &s));
    assert_false(kernel_split_heads_shape(&SHAPE(2, 2, 3, 4), 2, &s));  // rank 5
    assert_false(kernel_merge_heads_shape(&SHAPE(3, 4), &s));
}

static void test_heads_take_column_blocks(void **state) {
    // one row of 6 columns, 3 heads: head h gets columns 2h and 2h + 1 (PyTorch's view)
    Tensor *x = iota(SHAPE(1, 6)), *h = ZEROS(SHAPE(3, 1, 2));
    kernel_split_heads(h, x, 3);
    assert_tensor_near(h, SHAPE(3, 1, 2), EXACT, 0, 1, 2, 3, 4, 5);
    Tensor *x2 = iota(SHAPE(2, 4)), *h2 = ZEROS(SHAPE(2, 2, 2));
    kernel_split_heads(h2, x2, 2);
    // head 0 = columns 0-1 of both rows, head 1 = columns 2-3
    assert_tensor_near(h2, SHAPE(2, 2, 2), EXACT, 0, 1, 4, 5, 2, 3, 6, 7);
}

static void test_take(void **state) {
    Tensor *table = TENSOR(SHAPE(3, 2), 0, 10, 20, 30, 40, 50);
    Tensor *idx = TENSOR(SHAPE(2, 2), 5, 0, 2, 2), *out = ZEROS(SHAPE(2, 2));
    kernel_take(out, table, idx);  // table.flat[idx]
    assert_tensor_near(out, SHAPE(2, 2), EXACT, 50, 0, 20, 20);
    Tensor *one = TENSOR(SCALAR_SHAPE, 3), *o1 = ZEROS(SCALAR_SHAPE);
    kernel_take(o1, table, one);
    assert_tensor_near(o1, SCALAR_SHAPE, EXACT, 30);
}

static void test_take_along_axis(void **state) {
    Tensor *x = iota(SHAPE(2, 3, 4));
    Shape s;
    // numpy: np.take_along_axis(np.arange(24.).reshape(2, 3, 4), j, 2), j [2, 3, 1], -1 the last
    Tensor *j = TENSOR(SHAPE(2, 3, 1), 2, 0, -1, 3, 3, 0), *o = ZEROS(SHAPE(2, 3, 1));
    assert_true(kernel_take_along_axis_shape(&x->shape, &j->shape, 2, &s));
    assert_shape(&s, SHAPE(2, 3, 1));
    kernel_take_along_axis(o, x, j, 2);
    assert_tensor_near(o, SHAPE(2, 3, 1), EXACT, 2, 4, 11, 15, 19, 20);
    // k [1, 1, 4] along axis 1 broadcasts over axis 0: [2, 1, 4]
    Tensor *k = TENSOR(SHAPE(1, 1, 4), 2, 0, 1, -1), *ok = ZEROS(SHAPE(2, 1, 4));
    assert_true(kernel_take_along_axis_shape(&x->shape, &k->shape, 1, &s));
    assert_shape(&s, SHAPE(2, 1, 4));
    kernel_take_along_axis(ok, x, k, 1);
    assert_tensor_near(ok, SHAPE(2, 1, 4), EXACT, 8, 1, 6, 11, 20, 13, 18, 23);
    // x [1, 3] broadcasts over the indices' [2, 1]
    Tensor *y = TENSOR(SHAPE(1, 3), 0, 1, 2), *m = TENSOR(SHAPE(2, 1), 0, 2), *om = ZEROS(SHAPE(2, 1));
    kernel_take_along_axis(om, y, m, 1);
    assert_tensor_near(om, SHAPE(2, 1), EXACT, 0, 2);

    assert_false(kernel_take_along_axis_shape(&x->shape, &SHAPE(2, 4), 1, &s));     // ranks differ
    assert_false(kernel_take_along_axis_shape(&x->shape, &SHAPE(3, 3, 4), 2, &s));  // 3 against 2
    assert_false(kernel_take_along_axis_shape(&x->shape, &SHAPE(2, 3, 4), 3, &s));  // no axis 3
}

// ---------------------------------------------------------------- builders

static void test_causal_mask(void **state) {
    Tensor *m = ZEROS(SHAPE(3, 3));
    kernel_causal_mask(m);
    assert_tensor_near(m, SHAPE(3, 3), EXACT, 0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0,
                       0);
}

static void test_relative_positions_arange(void **state) {
    Tensor *r = ZEROS(SHAPE(2, 3));
    kernel_relative_positions(r);
    assert_tensor_near(r, SHAPE(2, 3), EXACT, 0, -1, -2, 1, 0, -1);
    Tensor *a = ZEROS(SHAPE(4));
    kernel_arange(a);
    assert_tensor_near(a, SHAPE(4), EXACT, 0, 1, 2, 3);
}

static void test_sinusoidal(void **state) {
    Tensor *pe = ZEROS(SHAPE(4, 6));
    kernel_sinusoidal(pe, 10000);
    // numpy: pe[pos, 2i] = sin(pos / 10000 ** (2i / 6)), pe[pos, 2i + 1] = cos(...)
    assert_tensor_near(pe, SHAPE(4, 6), LIBM, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.8414709848078965,
                       0.5403023058681398, 0.046399223464731285, 0.9989229760406304,
                       0.0021544330233656045, 0.9999976792064809, 0.9092974268256817,
                       -0.4161468365471424, 0.09269850077872725, 0.9956942241237399,
                       0.0043088560467428125, 0.9999907168366957, 0.1411200080598672,
                       -0.9899924966004454, 0.13879810108005056, 0.990320699135675,
                       0.006463259070189646, 0.9999791129229608);
}

static void test_rope(void **state) {
    Tensor *x = iota(SHAPE(3, 4));
    for (size_t i = 0; i < x->size; i++)
        x->data[i] = x->data[i] * 0.5 - 2;
    Tensor *pos = TENSOR(SHAPE(3), 0, 1, 5), *y = ZEROS(SHAPE(3, 4));
    kernel_rope(y, x, pos, 10000);
    // numpy, per row r and pair i: th = pos[r] * 10000 ** (-2i / 4);
    // (x0 cos th - x1 sin th, x0 sin th + x1 cos th); position 0 leaves the row as it is
    assert_tensor_near(y, SHAPE(3, 4), FEW_FLOPS, -2.0, -1.5, -1.0, -0.5, -0.42073549240394825,
                       0.2701511529340699, 0.9849502504154153, 1.5099248339591647,
                       2.9646350575842986, -1.2086930856682114, 2.821323688737525,
                       3.645563419194417);
}

static double rope_dot(const Tensor *q, const Tensor *k, double pq, double pk) {
    Tensor *rq = ZEROS(q->shape), *rk = ZEROS(k->shape);
    kernel_rope(rq, q, TENSOR(SHAPE(1), pq), 10000);
    kernel_rope(rk, k, TENSOR(SHAPE(1), pk), 10000);
    double dot = 0.0;
    for (size_t i = 0; i < q->size; i++)
        dot += rq->data[i] * rk->data[i];
    return dot;
}

static void test_rope_relative(void **state) {
    // the score of a rotated query and key depends only on how far apart they are: 7 - 3 = 4
    Tensor *q = ZEROS(SHAPE(1, 8)), *k = ZEROS(SHAPE(1, 8));
    kernel_fill_random(q, KERNEL_NORMAL, 1, 1);
    kernel_fill_random(k, KERNEL_NORMAL, 1, 2);
    assert_double_equal(rope_dot(q, k, 3, 7), rope_dot(q, k, 0, 4), 1e-12);
    assert_double_equal(rope_dot(q, k, 10, 11), rope_dot(q, k, 100, 101), 1e-12);
}

static void test_rope_heads_share_positions(void **state) {
    // [heads, n, d]: every head is rotated by the same row positions
    Tensor *x = iota(SHAPE(2, 3, 4)), *y = ZEROS(SHAPE(2, 3, 4));
    Tensor *pos = TENSOR(SHAPE(3), 0, 1, 5);
    kernel_rope(y, x, pos, 10000);
    Tensor *head = ZEROS(SHAPE(3, 4)), *one = ZEROS(SHAPE(3, 4));
    memcpy(head->data, x->data + 12, 12 * sizeof(double));
    kernel_rope(one, head, pos, 10000);
    tensor_near(one, SHAPE(3, 4), y->data + 12, 12, EXACT, __FILE__, __LINE__);
}

static void test_alibi_slopes(void **state) {
    Tensor *s8 = ZEROS(SHAPE(8));
    kernel_alibi_slopes(s8);
    // powers of two are exact
    assert_tensor_near(s8, SHAPE(8), EXACT, 1.0 / 2, 1.0 / 4, 1.0 / 8, 1.0 / 16, 1.0 / 32,
                       1.0 / 64, 1.0 / 128, 1.0 / 256);
    Tensor *s4 = ZEROS(SHAPE(4));
    kernel_alibi_slopes(s4);
    assert_tensor_near(s4, SHAPE(4), EXACT, 1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256);
}

static void test_identity_fill(void **state) {
    Tensor *eye = ZEROS(SHAPE(2, 3, 3));
    kernel_fill(eye, 7);
    kernel_identity(eye);
    assert_tensor_near(eye, SHAPE(2, 3, 3), EXACT, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0,
                       0, 0, 1);
    Tensor *f = ZEROS(SHAPE(2, 2));
    kernel_fill(f, -2.5);
    assert_tensor_near(f, SHAPE(2, 2), EXACT, -2.5, -2.5, -2.5, -2.5);
}

static void test_random_exact(void **state) {
    // values from a separate Python implementation of the recipe in kernel.h:
    //   state = (state + 0x9E3779B97F4A7C15) & M; z = ...; u = (z >> 11) * 2.0**-53
    // uniform is scale * (2u - 1): every step is one correctly rounded IEEE operation
    Tensor *u = ZEROS(SHAPE(5));
    kernel_fill_random(u, KERNEL_UNIFORM, 0.5, 42);
    assert_tensor_near(u, SHAPE(5), EXACT, 0.2415648787718233, -0.3400896071230799,
                       -0.22139886974486134, -0.15580928347636247, -0.4619698314597538);
    // the first splitmix64 output for seed 0 is 0xE220A8397B1DCDAF
    Tensor *u0 = ZEROS(SCALAR_SHAPE);
    kernel_fill_random(u0, KERNEL_UNIFORM, 1, 0);
    assert_double_equal(u0->data[0], 2 * (double)(UINT64_C(0xE220A8397B1DCDAF) >> 11) *
                                             0x1.0p-53 - 1,
                        EXACT);
    // unit: u itself, in [0, 1); seed 7's first draw and seed 1's first three
    Tensor *unit = ZEROS(SCALAR_SHAPE), *three = ZEROS(SHAPE(3));
    kernel_fill_random(unit, KERNEL_UNIT, 1, 7);
    assert_double_equal(unit->data[0], 0.3898297483912715, EXACT);
    kernel_fill_random(three, KERNEL_UNIT, 1, 1);
    assert_tensor_near(three, SHAPE(3), EXACT, 0.5665615751722809, 0.7457817572627011, 0.9710027535867962);
    // normal, an odd count: the fifth value is the cosine of the third pair, its sine dropped
    Tensor *n = ZEROS(SHAPE(5));
    kernel_fill_random(n, KERNEL_NORMAL, 2, 7);
    assert_tensor_near(n, SHAPE(5), LIBM, 1.9769486646374705, 0.20931329497798795,
                       -3.7285116134624547, -2.1400862074366835, 0.00784041443037868);
    // the same seed gives the same values
    Tensor *again = ZEROS(SHAPE(5));
    kernel_fill_random(again, KERNEL_NORMAL, 2, 7);
    tensor_near(again, SHAPE(5), n->data, 5, EXACT, __FILE__, __LINE__);
}

// Mean and population standard deviation of a tensor's values.
static void moments(const Tensor *t, double *mean, double *sd) {
    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < t->size; i++)
        sum += t->data[i];
    *mean = sum / (double)t->size;
    for (size_t i = 0; i < t->size; i++)
        sq += (t->data[i] - *mean) * (t->data[i] - *mean);
    *sd = sqrt(sq / (double)t->size);
}

static void test_random_moments(void **state) {
    // 100000 draws: the mean's standard error is scale / 316, the sd's about scale / 447;
    // the bounds are over 5 standard errors wide (and the draws are fixed by the seed)
    Tensor *n = ZEROS(SHAPE(100000));
    double mean, sd;
    kernel_fill_random(n, KERNEL_NORMAL, 3, 123);
    moments(n, &mean, &sd);
    assert_double_equal(mean, 0, 0.05);
    assert_double_equal(sd, 3, 0.05);

    Tensor *u = ZEROS(SHAPE(100000));
    kernel_fill_random(u, KERNEL_UNIFORM, 2, 123);
    moments(u, &mean, &sd);
    assert_double_equal(mean, 0, 0.03);
    assert_double_equal(sd, 2 / sqrt(3), 0.02);  // uniform on [-a, a): sd a / sqrt(3)
    for (size_t i = 0; i < u->size; i++)
        assert_true(u->data[i] >= -2 && u->data[i] < 2);
}

// ---------------------------------------------------------------- loss

static void test_cross_entropy(void **state) {
    Tensor *logits = TENSOR(SHAPE(2, 3), 1, 2, 3, 0.5, -1, 2);
    Tensor *targets = TENSOR(SHAPE(2), 2, 0), *out = ZEROS(SHAPE(2));
    kernel_cross_entropy(out, logits, targets);
    // numpy: log(exp(logits).sum(1)) - logits[arange(2), targets]
    assert_tensor_near(out, SHAPE(2), LIBM, 0.40760596444438013, 1.7413112966571571);
}

static void test_cross_entropy_stable(void **state) {
    // exp(1000) overflows; with the max taken out the sum is 1 + e^-1000 + e^-2000 = 1 exactly
    Tensor *logits = TENSOR(SHAPE(2, 3), 1000, 0, -1000, 1000, 0, -1000);
    Tensor *targets = TENSOR(SHAPE(2), 0, 1), *out = ZEROS(SHAPE(2));
    kernel_cross_entropy(out, logits, targets);
    assert_tensor_near(out, SHAPE(2), EXACT, 0, 1000);
}

#define TEST(f) cmocka_unit_test_teardown(f, destroy_made)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_broadcast_shape),
        TEST(test_isclose),
        TEST(test_matmul_shape),
        TEST(test_gemm),
        TEST(test_gemm_sums_in_index_order),
        TEST(test_matmul_batched),
        TEST(test_matmul_vectors),
        TEST(test_matmul_broadcast_batch),
        TEST(test_transpose),
        TEST(test_permute),
        TEST(test_binary_broadcast),
        TEST(test_binary_ieee),
        TEST(test_binary_apply),
        TEST(test_floor_divide_remainder_as_numpy),
        TEST(test_maximum_minimum_where_clip),
        TEST(test_sigmoid_floor_ceil_round),
        TEST(test_unary),
        TEST(test_unary_apply),
        TEST(test_softmax_rows),
        TEST(test_softmax_large),
        TEST(test_softmax_neg_inf),
        TEST(test_softmax_axis),
        TEST(test_cumsum),
        TEST(test_eye_and_triangles),
        TEST(test_sort_and_topk),
        TEST(test_eigvals),
        TEST(test_svdvals),
        TEST(test_top_p),
        TEST(test_sample),
        TEST(test_repeat_interleave),
        TEST(test_layernorm),
        TEST(test_layernorm_gamma_beta),
        TEST(test_layernorm_constant_row),
        TEST(test_rmsnorm),
        TEST(test_norms_of_huge_values),
        TEST(test_batchnorm),
        TEST(test_reduce_shape),
        TEST(test_reduce),
        TEST(test_reduce_keepdims),
        TEST(test_norm_extremes),
        TEST(test_argmax_ties),
        TEST(test_reduce_nan),
        TEST(test_index),
        TEST(test_index_list_moves_first),
        TEST(test_index_new_axis),
        TEST(test_reshape_shape),
        TEST(test_reshape),
        TEST(test_index_shape),
        TEST(test_concat),
        TEST(test_split_merge_heads),
        TEST(test_heads_take_column_blocks),
        TEST(test_take),
        TEST(test_take_along_axis),
        TEST(test_causal_mask),
        TEST(test_relative_positions_arange),
        TEST(test_sinusoidal),
        TEST(test_rope),
        TEST(test_rope_relative),
        TEST(test_rope_heads_share_positions),
        TEST(test_alibi_slopes),
        TEST(test_identity_fill),
        TEST(test_random_exact),
        TEST(test_random_moments),
        TEST(test_cross_entropy),
        TEST(test_cross_entropy_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
