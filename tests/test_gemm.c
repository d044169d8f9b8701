// Unit tests of the fast matrix product: every path (portable, AVX2, AVX-512, those this CPU
// runs) and every thread count must give exactly the bits of gemm_reference's triple loop, on
// shapes chosen to hit every edge: odd sizes, 1-wide and empty dimensions, partial tiles, k
// longer than one cache block, more columns than one block of b, batches with broadcasting and
// transposed operands.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gemm_paths.h"
#include "same_bits.h"

#include "backend.h"
#include "fast.h"
#include "fast_ops.h"
#include "gemm.h"
#include "kernel.h"
#include "parallel.h"
#include "tensor.h"
#include "util.h"

static const size_t thread_counts[] = {1, 2, 7};

// Run f for every path this CPU has and every thread count, restoring the defaults after.
static void every_path_and_threads(GemmPathCase *f) {
    for_every_path_and_threads(thread_counts, ARRAY_LEN(thread_counts), f);
}

// (n, k, m) triples: 1-wide, empty, odd, partial tiles of every path (MR 4, 6, 8; NR 4, 8,
// 24), k past one KC block (256), n past one MC block (96), m past one NC block (2400), and
// each side of the size below which the product is not packed.
static const size_t shapes[][3] = {
    {1, 1, 1},   {1, 7, 1},   {7, 1, 9},   {0, 5, 3},   {4, 0, 6},   {3, 5, 0},   {5, 3, 1},
    {1, 3, 31},  {13, 17, 19}, {6, 8, 24}, {8, 24, 8},  {9, 25, 25}, {23, 29, 47}, {97, 31, 65},
    {33, 300, 29}, {101, 257, 50}, {2, 5, 2411}, {130, 64, 130},
    // big enough (over 2^18 multiply-adds a thread) for 7 threads: split by rows, by columns
    {130, 300, 70}, {3, 300, 2411},
    // the small ones above go through the reference order (below 2^11 multiply-adds); with a
    // longer k their rows and columns go through the packed tiles too
    {1, 2100, 1}, {7, 300, 9}, {5, 500, 1}, {1, 100, 31}, {6, 400, 24}, {8, 300, 8}, {64, 0, 64},
};

static void dense_shapes(const char *what) {
    for (size_t s = 0; s < ARRAY_LEN(shapes); s++) {
        size_t n = shapes[s][0], k = shapes[s][1], m = shapes[s][2];
        double *a = random_values(n * k), *b = random_values(k * m);
        double *want = random_values(n * m), *got = random_values(n * m);  // garbage to overwrite
        gemm_reference(want, a, b, n, k, m);
        kernel_gemm(got, a, b, n, k, m);
        char label[128];
        snprintf(label, sizeof(label), "%s, (%zu, %zu) @ (%zu, %zu)", what, n, k, k, m);
        assert_same_bits(got, want, n * m, label);
        util_free(a);
        util_free(b);
        util_free(want);
        util_free(got);
    }
}

static void test_dense_shapes(void **state) {
    every_path_and_threads(dense_shapes);
}

// Products too small to pack are summed in registers, by code specialised for each width of c
// from 1 to 16 (and a plain loop past it, or when b is read through a column step): every
// width, with a k of 0 (all zeros), 1 and more, plain and with b transposed, gives the
// reference's bits.
static void small_widths(const char *what) {
    static const size_t ns[] = {1, 3}, ks[] = {0, 1, 5};
    for (size_t m = 1; m <= 17; m++)
        for (size_t in = 0; in < ARRAY_LEN(ns); in++)
            for (size_t ik = 0; ik < ARRAY_LEN(ks); ik++) {
                const size_t n = ns[in], k = ks[ik];
                double *a = random_values(n * k), *b = random_values(k * m), *bt = random_values(m * k);
                double *want = random_values(n * m), *got = random_values(n * m);
                for (size_t p = 0; p < k; p++)
                    for (size_t j = 0; j < m; j++)
                        bt[j * k + p] = b[p * m + j];
                gemm_reference(want, a, b, n, k, m);
                char label[128];
                snprintf(label, sizeof(label), "%s, (%zu, %zu) @ (%zu, %zu)", what, n, k, k, m);
                GemmMatrix ga = {.data = a, .row_step = k, .col_step = 1};
                GemmMatrix gb = {.data = b, .row_step = m, .col_step = 1};
                gemm(got, &ga, &gb, n, k, m);
                assert_same_bits(got, want, n * m, label);
                for (size_t i = 0; i < n * m; i++)
                    got[i] = 12345.0;  // the transposed product must overwrite every element again
                GemmMatrix gbt = {.data = bt, .row_step = 1, .col_step = k};
                gemm(got, &ga, &gbt, n, k, m);
                assert_same_bits(got, want, n * m, label);
                util_free(a);
                util_free(b);
                util_free(bt);
                util_free(want);
                util_free(got);
            }
}

static void test_small_widths(void **state) {
    every_path_and_threads(small_widths);
}

// Transposed operands (a.T @ b.T, read through swapped steps) give the bits of the reference
// on copies made contiguous.
static void transposed(const char *what) {
    const size_t n = 37, k = 29, m = 53;
    double *at = random_values(k * n), *bt = random_values(m * k);  // a.T (k, n), b.T (m, k)
    double *a = util_malloc(n * k * sizeof(double)), *b = util_malloc(k * m * sizeof(double));
    double *want = random_values(n * m), *got = random_values(n * m);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        for (size_t p = 0; p < k; p++)
            a[i * k + p] = at[p * n + i];
    for (size_t p = 0; p < k; p++)
        for (size_t j = 0; j < m; j++)
            b[p * m + j] = bt[j * k + p];
    gemm_reference(want, a, b, n, k, m);
    GemmMatrix ga = {.data = at, .row_step = 1, .col_step = n}, gb = {.data = bt, .row_step = 1, .col_step = k};
    gemm(got, &ga, &gb, n, k, m);
    assert_same_bits(got, want, n * m, what);
    util_free(at);
    util_free(bt);
    util_free(a);
    util_free(b);
    util_free(want);
    util_free(got);
}

static void test_transposed_operands(void **state) {
    every_path_and_threads(transposed);
}

// kernel_matmul over batches, broadcast batches and vectors against one reference product per
// batch entry, worked out here from the shapes alone; and the reference tracer's own product
// (no fast layer installed) on the same operands, which must give the same bits.
static void batched(const char *what) {
    struct {
        Shape a, b;
    } cases[] = {
        {{3, {12, 64, 40}}, {3, {12, 40, 64}}},         // heads: q @ k.T, enough work for 7 threads
        {{4, {2, 3, 17, 5}}, {2, {5, 26}}},              // b broadcast over two batch axes
        {{4, {2, 1, 9, 4}}, {3, {3, 4, 7}}},             // both broadcast: (2, 1) with (3)
        {{3, {5, 1, 40}}, {3, {5, 40, 3}}},              // one row per entry
        {{3, {0, 4, 4}}, {2, {4, 4}}},                   // an empty batch
        {{1, {45}}, {2, {45, 19}}},                      // vector @ matrix
        {{3, {2, 19, 45}}, {1, {45}}},                   // matrix @ vector
    };
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        Tensor *a = random_tensor(cases[c].a), *b = random_tensor(cases[c].b);
        Shape s;
        assert_true(kernel_matmul_shape(&a->shape, &b->shape, &s));
        Tensor *got = tensor_create(&s);
        assert_non_null(got);
        kernel_matmul(got, a, b);
        Tensor *plain = tensor_create(&s);
        assert_non_null(plain);
        backend_install(NULL);
        kernel_matmul(plain, a, b);
        fast_install();
        // the matrices: a vector a is a row, a vector b a column
        size_t ar = a->shape.rank, br = b->shape.rank;
        size_t n = ar == 1 ? 1 : a->shape.dim[ar - 2], k = a->shape.dim[ar - 1];
        size_t m = br == 1 ? 1 : b->shape.dim[br - 1];
        // the batch axes of each, padded on the left to two
        size_t ab[2] = {1, 1}, bb[2] = {1, 1};
        for (size_t i = 0; ar > 2 && i < ar - 2; i++)
            ab[2 - (ar - 2) + i] = a->shape.dim[i];
        for (size_t i = 0; br > 2 && i < br - 2; i++)
            bb[2 - (br - 2) + i] = b->shape.dim[i];
        // numpy broadcasting: a 1 takes the other's size (0 included)
        size_t e0 = ab[0] == 1 ? bb[0] : ab[0], e1 = ab[1] == 1 ? bb[1] : ab[1];
        double *want = util_malloc((got->size ? got->size : 1) * sizeof(double));
        assert_non_null(want);
        for (size_t i = 0; i < e0; i++)
            for (size_t j = 0; j < e1; j++) {
                const double *ad = a->data + ((ab[0] > 1 ? i : 0) * ab[1] + (ab[1] > 1 ? j : 0)) * n * k;
                const double *bd = b->data + ((bb[0] > 1 ? i : 0) * bb[1] + (bb[1] > 1 ? j : 0)) * k * m;
                gemm_reference(want + (i * e1 + j) * n * m, ad, bd, n, k, m);
            }
        char label[128];
        snprintf(label, sizeof(label), "%s, batched case %zu", what, c);
        assert_same_bits(got->data, want, got->size, label);
        snprintf(label, sizeof(label), "%s, batched case %zu, the reference tracer's product", what, c);
        assert_same_bits(plain->data, want, plain->size, label);
        tensor_destroy(plain);
        util_free(want);
        tensor_destroy(a);
        tensor_destroy(b);
        tensor_destroy(got);
    }
}

static void test_batched_products(void **state) {
    every_path_and_threads(batched);
}

// While malloc_fails is set, malloc (in this program and the tracer's library, linked with
// --wrap=malloc) returns NULL, as it does when memory runs out.
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static bool malloc_fails;
void *__wrap_malloc(size_t size) {
    return malloc_fails ? NULL : __real_malloc(size);
}

// heads_in_place's products run without memory for their panels.
static bool panels_fail;

// The products of attention heads read and written in place, as the runner does for a
// block that prints only its output (run.c): split_heads(Q) @ split_heads(K).T, read through
// views of Q and K, then that @ split_heads(V) written straight into merge_heads' layout,
// give the bits of the reference loop on contiguous copies made here by index.
static void heads_in_place(const char *what) {
    const size_t B = 2, n = 37, heads = 3, dh = 5, d = heads * dh, E = B * heads;
    Tensor *q = random_tensor((Shape){3, {B, n, d}}), *k = random_tensor((Shape){3, {B, n, d}}),
           *v = random_tensor((Shape){3, {B, n, d}});
    // the copies: xh[b][h][i][j] = x[b][i][h * dh + j], kt[b][h][j][i] = k[b][i][h * dh + j]
    double *qh = util_malloc(E * n * dh * sizeof(double)), *kt = util_malloc(E * n * dh * sizeof(double)),
           *vh = util_malloc(E * n * dh * sizeof(double));
    assert_true(qh && kt && vh);
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < heads; h++)
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < dh; j++) {
                    size_t e = b * heads + h, from = (b * n + i) * d + h * dh + j;
                    qh[(e * n + i) * dh + j] = q->data[from];
                    kt[(e * dh + j) * n + i] = k->data[from];
                    vh[(e * n + i) * dh + j] = v->data[from];
                }
    double *scores = util_malloc(E * n * n * sizeof(double)), *out = util_malloc(E * n * dh * sizeof(double));
    assert_true(scores && out);
    for (size_t e = 0; e < E; e++) {
        gemm_reference(scores + e * n * n, qh + e * n * dh, kt + e * dh * n, n, dh, n);
        gemm_reference(out + e * n * dh, scores + e * n * n, vh + e * n * dh, n, n, dh);
    }
    // the views
    Shape split = {4, {B, heads, n, dh}}, split_t = {4, {B, heads, dh, n}};
    size_t dense[3], qs[4], ks[4], kts[4], vs[4], merged_steps[4];
    tensor_steps(q, dense);
    fast_split_heads_steps(&q->shape, dense, heads, qs);
    fast_split_heads_steps(&k->shape, dense, heads, ks);
    fast_split_heads_steps(&v->shape, dense, heads, vs);
    fast_transpose_steps(&split, ks, kts);
    fast_merge_heads_input_steps(&split, merged_steps);
    Tensor *qv = tensor_create_view(&split, q->data, qs), *ktv = tensor_create_view(&split_t, k->data, kts),
           *vv = tensor_create_view(&split, v->data, vs);
    Tensor *got_scores = tensor_create(&(Shape){4, {B, heads, n, n}}), *merged = tensor_create(&v->shape);
    assert_true(qv && ktv && vv && got_scores && merged);
    Tensor *into = tensor_create_view(&split, merged->data, merged_steps);
    assert_non_null(into);
    malloc_fails = panels_fail;
    kernel_matmul(got_scores, qv, ktv);
    kernel_matmul(into, got_scores, vv);
    malloc_fails = false;
    char label[128];
    snprintf(label, sizeof(label), "%s, Q_heads @ K_heads.T read in place", what);
    assert_same_bits(got_scores->data, scores, E * n * n, label);
    // merged[b][i][h * dh + j] is out[b][h][i][j]; and the view reads back what it wrote
    Tensor *back = tensor_from_view(into);
    assert_non_null(back);
    snprintf(label, sizeof(label), "%s, weights @ V_heads written in place", what);
    assert_same_bits(back->data, out, E * n * dh, label);
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < heads; h++)
            for (size_t i = 0; i < n; i++)
                assert_same_bits(merged->data + (b * n + i) * d + h * dh, out + ((b * heads + h) * n + i) * dh, dh,
                                 label);
    Tensor *all[] = {q, k, v, qv, ktv, vv, got_scores, merged, into, back};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        tensor_destroy(all[i]);
    double *bufs[] = {qh, kt, vh, scores, out};
    for (size_t i = 0; i < ARRAY_LEN(bufs); i++)
        util_free(bufs[i]);
}

static void test_heads_in_place(void **state) {
    every_path_and_threads(heads_in_place);
}

// Values where the order shows: in index order 1 + 2^53 rounds to 2^53, - 2^53 gives 0, on
// every lane of every tile; a sum from the other end, or a fused multiply-add keeping the
// product 0.1 * 10 unrounded, would give something else.
static void order_shows(const char *what) {
    const size_t n = 11, k = 3, m = 27;
    double a[11 * 3], b[3 * 27], c[11 * 27];
    for (size_t i = 0; i < n; i++) {
        a[i * k + 0] = 1;
        a[i * k + 1] = 0x1p53;
        a[i * k + 2] = -0x1p53;
    }
    for (size_t j = 0; j < k * m; j++)
        b[j] = 1;
    kernel_gemm(c, a, b, n, k, m);
    for (size_t i = 0; i < n * m; i++)
        if (c[i] != 0.0) {
            print_error("%s: element %zu is %.17g, not 0\n", what, i, c[i]);
            fail();
        }
    // no fused multiply-add: -1 + 0.1 * 10 is -1 + 1 = 0 when the product is rounded first;
    // fused, the product keeps its error and the sum is 2^-54 (5.55e-17), not 0
    double x[2] = {-1.0, 0.1}, y[2] = {1.0, 10.0}, z;
    kernel_gemm(&z, x, y, 1, 2, 1);
    if (z != 0.0) {
        print_error("%s: -1 + 0.1 * 10 is %.17g, not 0: a fused multiply-add?\n", what, z);
        fail();
    }
    // the same in a full tile of every path (8 x 24)
    double xa[8 * 2], yb[2 * 24], zc[8 * 24];
    for (size_t i = 0; i < 8; i++) {
        xa[i * 2] = -1.0;
        xa[i * 2 + 1] = 0.1;
    }
    for (size_t j = 0; j < 24; j++) {
        yb[j] = 1.0;
        yb[24 + j] = 10.0;
    }
    kernel_gemm(zc, xa, yb, 8, 2, 24);
    for (size_t i = 0; i < 8 * 24; i++)
        if (zc[i] != 0.0) {
            print_error("%s: tile element %zu: -1 + 0.1 * 10 is %.17g, not 0\n", what, i, zc[i]);
            fail();
        }
}

static void test_order_shows(void **state) {
    every_path_and_threads(order_shows);
}

// Without memory for its packed panels, a product is still computed, by the reference loop:
// the same bits as the packed paths.
static void test_no_memory_for_panels(void **state) {
    size_t n = 13, k = 17, m = 19;
    double *a = random_values(n * k), *b = random_values(k * m);
    double *want = random_values(n * m), *got = random_values(n * m);  // garbage to overwrite
    gemm_reference(want, a, b, n, k, m);
    parallel_set_threads(1);
    malloc_fails = true;
    kernel_gemm(got, a, b, n, k, m);
    malloc_fails = false;
    parallel_set_threads(0);
    assert_same_bits(got, want, n * m, "no memory for the packed panels");
    // and read and written through steps
    parallel_set_threads(1);
    panels_fail = true;
    heads_in_place("no memory for the packed panels, heads in place");
    panels_fail = false;
    parallel_set_threads(0);
    util_free(a);
    util_free(b);
    util_free(want);
    util_free(got);
}

// A path number past the table is refused and named "?".
static void test_unknown_path(void **state) {
    GemmPath before = gemm_path();
    assert_false(gemm_set_path(GEMM_PATH_COUNT));
    assert_string_equal(gemm_path_name(GEMM_PATH_COUNT), "?");
    assert_int_equal(gemm_path(), before);
}

int main(void) {
    fast_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_shapes),
        cmocka_unit_test(test_small_widths),
        cmocka_unit_test(test_transposed_operands),
        cmocka_unit_test(test_batched_products),
        cmocka_unit_test(test_heads_in_place),
        cmocka_unit_test(test_order_shows),
        cmocka_unit_test(test_no_memory_for_panels),
        cmocka_unit_test(test_unknown_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
