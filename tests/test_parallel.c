// Unit tests of the kernels split among threads: softmax, layernorm, elementwise ops with and
// without broadcasting, and the random fill (which jumps splitmix64 ahead to each thread's
// first value) give the same bits on 1, 2 and 7 threads. The sizes are past the point where a
// kernel starts a second thread (2^15 values a thread), and odd, so chunks end mid-row. The
// scans read in blocks on threads (a tensor's notation, its nan and inf) find what the last
// block holds. A loop too small for two chunks never reaches the installed loop.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "fast.h"
#include "ieee.h"
#include "kernel.h"
#include "kernel_grad.h"
#include "notation.h"
#include "ops.h"
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

// ---------------------------------------------------------------- the seam's small loops

// A backend whose loop counts how often it is asked, then splits as the fast layer does.
static size_t loops_asked;
static void counting_loop(size_t n, size_t min_items, BackendLoopFn *fn, void *ctx) {
    loops_asked++;
    parallel_for(n, min_items, fn, ctx);
}
static const Backend counting = {.name = "counting", .loop = counting_loop};

// Each chunk marks where it begins (chunks begin at different items, so no two write one).
typedef struct Chunks {
    unsigned char seen[100], begins[100];
} Chunks;
static void mark_chunk(void *ctx, size_t begin, size_t end) {
    Chunks *c = ctx;
    c->begins[begin] = 1;
    count_items(c->seen, begin, end);
}

// backend_for(n, least, ...) asks the installed loop only when n holds two chunks of least
// items: a smaller loop is one call on the calling thread. Each item runs once either way, and
// with no backend installed a loop of any size is one call.
static void test_small_loops_do_not_ask_the_backend(void **state) {
    (void)state;
    static const struct {
        size_t n, least, asked, chunks;
    } cases[] = {
        {0, 1, 0, 0},       {1, 1, 0, 1},     {2, 1, 1, 2},   {99, 50, 0, 1},
        {100, 50, 1, 2},    {100, 0, 1, 2},   {7, SIZE_MAX / 2 + 2, 0, 1},  // 2 * least overflows to 2
    };
    const Backend *fast = backend_installed();
    for (int reference = 0; reference < 2; reference++) {
        backend_install(reference ? NULL : &counting);
        parallel_set_threads(2);
        for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
            Chunks c = {{0}, {0}};
            loops_asked = 0;
            backend_for(cases[k].n, cases[k].least, mark_chunk, &c);
            size_t chunks = 0;
            for (size_t i = 0; i < cases[k].n; i++) {
                chunks += c.begins[i];
                if (c.seen[i] != 1)
                    fail_msg("%zu items, at least %zu a chunk: item %zu ran %d times", cases[k].n, cases[k].least, i,
                             c.seen[i]);
            }
            size_t want_asked = reference ? 0 : cases[k].asked, want_chunks = reference ? cases[k].n > 0 : cases[k].chunks;
            if (loops_asked != want_asked || chunks != want_chunks)
                fail_msg("%s, %zu items, at least %zu a chunk: the backend asked %zu times (not %zu), %zu chunks (not %zu)",
                         reference ? "reference" : "backend", cases[k].n, cases[k].least, loops_asked, want_asked,
                         chunks, want_chunks);
        }
    }
    backend_install(fast);
    parallel_set_threads(0);
}

// ---------------------------------------------------------------- a bias's gradient

// d(x * bias)/d(bias) for a bias broadcast over 301 rows of 777, as (777,) and (1, 777), and
// as a column (301, 1): each value the sum over the rows of dout * x, added in row order (the
// loop below), whichever thread gathers it.
static void test_bias_gradient_in_row_order(void **state) {
    (void)state;
    static const size_t counts[] = {1, 2, 7};
    Shape xs = {2, {301, 777}};
    Tensor *x = make(xs, 4), *dout = make(xs, 5);
    const Shape biases[] = {{1, {777}}, {2, {1, 777}}, {2, {301, 1}}};
    for (size_t k = 0; k < ARRAY_LEN(biases); k++) {
        Tensor *bias = make(biases[k], 6), *want = tensor_create(&biases[k]);
        assert_non_null(want);
        bool column = biases[k].dim[biases[k].rank - 1] == 1;
        for (size_t q = 0; q < 301; q++)
            for (size_t c = 0; c < 777; c++)
                want->data[column ? q : c] += dout->data[q * 777 + c] * x->data[q * 777 + c];
        for (size_t t = 0; t < ARRAY_LEN(counts); t++) {
            parallel_set_threads(counts[t]);
            Tensor *din = tensor_create(&biases[k]);
            assert_non_null(din);
            kernel_grad_binary(din, 1, dout, x, bias, KERNEL_MUL);
            if (memcmp(din->data, want->data, din->size * sizeof(double)) != 0)
                fail_msg("bias %zu, %zu threads: not the sums in row order", k, counts[t]);
            tensor_destroy(din);
        }
        parallel_set_threads(0);
        tensor_destroy(bias);
        tensor_destroy(want);
    }
    tensor_destroy(x);
    tensor_destroy(dout);
}

// ---------------------------------------------------------------- scans in blocks

// 100,003 values: four blocks of 2^15, the last one short
#define SCAN_VALUES 100003

static Tensor *filled(double value) {
    Tensor *t = tensor_create(&(Shape){1, {SCAN_VALUES}});
    assert_non_null(t);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = value;
    return t;
}

// The notation of t at 4 decimals on 1, 2 and 7 threads, and format_style's on one pass.
static void expect_notation(const Tensor *t, FormatNotation want, const char *what) {
    static const size_t counts[] = {1, 2, 7};
    FormatStyle serial = format_style(t->data, t->size, 4, t->is_count);
    if (serial.notation != want)
        fail_msg("%s: format_style chose %d, not %d", what, (int)serial.notation, (int)want);
    for (size_t c = 0; c < ARRAY_LEN(counts); c++) {
        parallel_set_threads(counts[c]);
        FormatStyle got = notation_of(t, 4);
        if (got.notation != want || got.decimals != 4 || got.hides_small != serial.hides_small)
            fail_msg("%s, %zu threads: notation %d with %d decimals, small values %s, not %d with 4, %s", what,
                     counts[c], (int)got.notation, got.decimals, got.hides_small ? "hidden" : "shown", (int)want,
                     serial.hides_small ? "hidden" : "shown");
    }
    parallel_set_threads(0);
}

static void test_notation_in_blocks(void **state) {
    (void)state;
    Tensor *t = filled(0.5);
    expect_notation(t, FORMAT_FIXED, "0.5 everywhere");
    t->data[SCAN_VALUES - 2] = 1e-9;  // 0.0000 beside 0.5, which shows three digits: still fixed
    expect_notation(t, FORMAT_FIXED, "1e-9 in the last block");
    assert_true(format_style(t->data, t->size, 4, false).hides_small);
    t->data[SCAN_VALUES - 2] = 1e-20;  // below 1e-12 of 0.5: rounding noise, no vote
    expect_notation(t, FORMAT_FIXED, "noise in the last block");
    t->data[SCAN_VALUES - 2] = 2e8;  // past fixed notation's 1e8
    expect_notation(t, FORMAT_SCIENTIFIC, "2e8 in the last block");
    t->data[SCAN_VALUES - 2] = NAN;
    t->data[SCAN_VALUES - 1] = -INFINITY;  // neither votes
    expect_notation(t, FORMAT_FIXED, "nan and -inf in the last block");
    // The noise is measured against the largest of every block: 5e-15 in the first block is
    // noise beside the last block's 10 (below 1e-11), not beside its own block's 0.001; 0.001
    // to 10 share a fixed column.
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = 0.001;
    t->data[7] = 5e-15;
    t->data[SCAN_VALUES - 1] = 10;
    expect_notation(t, FORMAT_FIXED, "noise beside the largest of another block");
    t->data[SCAN_VALUES - 1] = 0.001;  // then 5e-15 votes, and 0.0000 is no way to print it
    expect_notation(t, FORMAT_SCIENTIFIC, "5e-15 beside 0.001");
    t->data[SCAN_VALUES - 1] = 0.05;  // a largest of three digits in the last block: fixed again
    expect_notation(t, FORMAT_FIXED, "5e-15 beside the 0.05 of another block");
    tensor_destroy(t);

    Tensor *counts = filled(3);
    counts->is_count = true;
    expect_notation(counts, FORMAT_WHOLE, "counts");
    counts->data[SCAN_VALUES - 1] = 2e15;  // past 15 digits
    expect_notation(counts, FORMAT_SCIENTIFIC, "a count of 16 digits in the last block");
    tensor_destroy(counts);

    Tensor *zeros = filled(0);
    expect_notation(zeros, FORMAT_FIXED, "zeros");
    tensor_destroy(zeros);
}

// exp of 100,003 zeros but the last, 800: exp(800) overflows, and the note says so with its
// operand (x at the inf's place: 800), on every thread count.
static void test_inf_in_the_last_block(void **state) {
    (void)state;
    static const size_t counts[] = {1, 2, 7};
    Tensor *x = filled(0), *y = filled(1);
    x->data[SCAN_VALUES - 1] = 800;
    y->data[SCAN_VALUES - 1] = INFINITY;  // exp(800), past the largest double
    const Tensor *in[1] = {x};
    Arena *arena = arena_create();
    assert_non_null(arena);
    for (size_t c = 0; c < ARRAY_LEN(counts); c++) {
        parallel_set_threads(counts[c]);
        IeeeWatch watch = {0};
        const char *note = NULL;
        assert_true(ieee_note(&watch, ops_find_function("exp"), y, in, 1, "y", arena, &note));
        assert_non_null(note);
        if (!strstr(note, "exp(800) overflows"))
            fail_msg("%zu threads: the note \"%s\" does not say that exp(800) overflows", counts[c], note);
        // the same values all finite: nothing to note
        y->data[SCAN_VALUES - 1] = 1;
        assert_true(ieee_note(&watch, ops_find_function("exp"), y, in, 1, "y", arena, &note));
        assert_null(note);
        y->data[SCAN_VALUES - 1] = INFINITY;
    }
    parallel_set_threads(0);
    arena_destroy(arena);
    tensor_destroy(x);
    tensor_destroy(y);
}

int main(void) {
    fast_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_and_elementwise),
        cmocka_unit_test(test_random_fill),
        cmocka_unit_test(test_every_item_once),
        cmocka_unit_test(test_small_loops_do_not_ask_the_backend),
        cmocka_unit_test(test_bias_gradient_in_row_order),
        cmocka_unit_test(test_notation_in_blocks),
        cmocka_unit_test(test_inf_in_the_last_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
