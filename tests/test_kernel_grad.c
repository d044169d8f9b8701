// Unit tests of the kernel's derivatives: every vector-Jacobian product against a central
// finite difference of the forward kernel, plus the cases a finite difference cannot judge
// (ties, masked positions, repeated indices) and probs - onehot worked by hand.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel.h"
#include "kernel_axis.h"
#include "kernel_grad.h"
#include "kernel_sample.h"
#include "kernel_sort.h"
#include "kernel_triangle.h"
#include "ops.h"
#include "tensor.h"
#include "util.h"

// Central differences with step H: the truncation error is H^2 / 6 |f'''| (~1e-13 here) and
// the rounding error about 1e-16 |L| / H (~1e-10 for the sums L of a few values of size 1 these
// tests differentiate), so 1e-7 relative to max(1, |gradient|) leaves a wide margin while a
// wrong derivative (off by a factor, a sign or a term) misses by 1e-2 or more.
#define H 1e-6
#define FD_TOL 1e-7

#define SHAPE(...) ((Shape){.rank = ARRAY_LEN(((size_t[]){__VA_ARGS__})), .dim = {__VA_ARGS__}})
#define SCALAR_SHAPE ((Shape){.rank = 0})
#define MAX_IN 4

// One operation under test: its forward kernel, its derivative for input k, and its inputs.
typedef struct GradCase {
    const char *name;
    size_t n_in;
    Shape in_shapes[MAX_IN];
    Shape out_shape;
    unsigned no_grad;  // bit k: input k carries no gradient (indices, positions, targets)
    // Values: NULL for normal(0, 1) random numbers, else exactly these.
    const double *values[MAX_IN];
    double shift[MAX_IN];  // added to random values (keeps log and sqrt inputs positive)
    void (*forward)(Tensor *out, Tensor *const *in, const void *ctx);
    void (*grad)(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                 const void *ctx);
    const void *ctx;
} GradCase;

static double weighted_sum(const Tensor *a, const Tensor *w) {
    double s = 0.0;
    for (size_t i = 0; i < a->size; i++)
        s += a->data[i] * w->data[i];
    return s;
}

// L = sum(dout * f(inputs)): its gradient with respect to an input is exactly the
// vector-Jacobian product with dout.
static double loss_of(const GradCase *c, Tensor *out, Tensor *const *in, const Tensor *dout) {
    kernel_fill(out, 0.0);
    c->forward(out, in, c->ctx);
    return weighted_sum(out, dout);
}

static void check_case(const GradCase *c) {
    Tensor *in[MAX_IN] = {0};
    for (size_t k = 0; k < c->n_in; k++) {
        in[k] = tensor_create(&c->in_shapes[k]);
        assert_non_null(in[k]);
        if (c->values[k]) {
            memcpy(in[k]->data, c->values[k], in[k]->size * sizeof(double));
        } else {
            kernel_fill_random(in[k], KERNEL_NORMAL, 1.0, 1000 + k);
            for (size_t i = 0; i < in[k]->size; i++)
                in[k]->data[i] += c->shift[k];
        }
    }
    Tensor *out = tensor_create(&c->out_shape), *dout = tensor_create(&c->out_shape);
    assert_non_null(out);
    assert_non_null(dout);
    kernel_fill_random(dout, KERNEL_NORMAL, 1.0, 77);
    c->forward(out, in, c->ctx);
    for (size_t k = 0; k < c->n_in; k++) {
        if (c->no_grad & (1u << k))
            continue;
        Tensor *din = tensor_create(&c->in_shapes[k]);
        Tensor *scratch = tensor_create(&c->out_shape);
        assert_non_null(din);
        assert_non_null(scratch);
        c->grad(din, k, dout, in, out, c->ctx);
        double worst = 0.0;
        size_t worst_at = 0, failures = 0;
        for (size_t i = 0; i < din->size; i++) {
            double keep = in[k]->data[i];
            in[k]->data[i] = keep + H;
            double up = loss_of(c, scratch, in, dout);
            in[k]->data[i] = keep - H;
            double down = loss_of(c, scratch, in, dout);
            in[k]->data[i] = keep;
            double fd = (up - down) / (2 * H);
            double diff = fabs(fd - din->data[i]) / fmax(1.0, fabs(fd));
            if (diff > FD_TOL && failures++ < 4)
                print_error("%s, input %zu, element %zu: derivative %.12g, finite difference %.12g\n", c->name,
                            k, i, din->data[i], fd);
            if (diff > worst) {
                worst = diff;
                worst_at = i;
            }
        }
        if (failures)
            print_error("%s, input %zu: %zu of %zu elements differ, the largest by %.3g at %zu\n", c->name, k,
                        failures, din->size, worst, worst_at);
        // Adding twice doubles: the kernels accumulate rather than overwrite (up to the rounding
        // of adding a broadcast input's terms onto a non-zero start).
        Tensor *twice = tensor_copy(din);
        assert_non_null(twice);
        c->grad(twice, k, dout, in, out, c->ctx);
        for (size_t i = 0; i < din->size; i++)
            assert_true(fabs(twice->data[i] - 2.0 * din->data[i]) <= 1e-12 * (1.0 + fabs(din->data[i])));
        tensor_destroy(twice);
        tensor_destroy(din);
        tensor_destroy(scratch);
        assert_int_equal(failures, 0);
    }
    for (size_t k = 0; k < c->n_in; k++)
        tensor_destroy(in[k]);
    tensor_destroy(out);
    tensor_destroy(dout);
}

static Tensor *scalar(double v) {
    Tensor *t = tensor_create(&SCALAR_SHAPE);
    assert_non_null(t);
    t->data[0] = v;
    return t;
}

// ---------------------------------------------------------------- adapters

static void fw_binary(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_binary(out, in[0], in[1], *(const KernelBinary *)ctx);
}
static void gr_binary(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                      const void *ctx) {
    kernel_grad_binary(din, k, dout, in[0], in[1], *(const KernelBinary *)ctx);
}
static void fw_unary(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_unary(out, in[0], *(const KernelUnary *)ctx);
}
static void gr_unary(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    kernel_grad_unary(din, dout, in[0], *(const KernelUnary *)ctx);
}
static void fw_matmul(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_matmul(out, in[0], in[1]);
}
static void gr_matmul(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                      const void *ctx) {
    kernel_grad_matmul(din, k, dout, in[0], in[1]);
}
static void fw_transpose(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_transpose(out, in[0]);
}
static void gr_transpose(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                         const void *ctx) {
    kernel_grad_transpose(din, dout);
}
static void fw_permute(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_permute(out, in[0], ctx);
}
static void gr_permute(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                       const void *ctx) {
    kernel_grad_permute(din, dout, ctx);
}
static void fw_softmax(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_softmax(out, in[0]);
}
static void gr_softmax(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                       const void *ctx) {
    kernel_grad_softmax(din, dout, out);
}
// ctx: the axis, and (softmax) which of the two
typedef struct AxisCtx {
    size_t axis;
    KernelSoftmax kind;
} AxisCtx;
static void fw_softmax_axis(Tensor *out, Tensor *const *in, const void *ctx) {
    const AxisCtx *a = ctx;
    kernel_softmax_axis(out, in[0], a->axis, a->kind);
}
static void gr_softmax_axis(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                            const void *ctx) {
    const AxisCtx *a = ctx;
    kernel_grad_softmax_axis(din, dout, out, a->axis, a->kind);
}
static void fw_cumsum(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_cumsum(out, in[0], ((const AxisCtx *)ctx)->axis);
}
static void gr_cumsum(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                      const void *ctx) {
    kernel_grad_cumsum(din, dout, ((const AxisCtx *)ctx)->axis);
}
static void fw_triangle(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_triangle(out, in[0], -1, *(const KernelTriangle *)ctx);
}
static void gr_triangle(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                        const void *ctx) {
    kernel_grad_triangle(din, dout, -1, *(const KernelTriangle *)ctx);
}
static void fw_repeat(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_repeat_interleave(out, in[0], ((const AxisCtx *)ctx)->axis, 3);
}
static void gr_repeat(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                      const void *ctx) {
    kernel_grad_repeat_interleave(din, dout, ((const AxisCtx *)ctx)->axis, 3);
}
static void fw_sort(Tensor *out, Tensor *const *in, const void *ctx) {
    KernelSort kind = *(const KernelSort *)ctx;
    assert_true(kernel_sort(out, in[0], kind, out->shape.dim[out->shape.rank - 1]));
}
static void gr_sort(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                    const void *ctx) {
    KernelSort kind = *(const KernelSort *)ctx;
    assert_true(kernel_grad_sort(din, dout, in[0], kind, out->shape.dim[out->shape.rank - 1]));
}
static void fw_top_p(Tensor *out, Tensor *const *in, const void *ctx) {
    assert_true(kernel_top_p(out, in[0], *(const double *)ctx));
}
static void gr_top_p(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    assert_true(kernel_grad_top_p(din, dout, in[0], out, *(const double *)ctx));
}
static const double EPS = 1e-5;
static void fw_layernorm(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_layernorm(out, in[0], in[1], in[2], EPS);
}
static void gr_layernorm(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                         const void *ctx) {
    kernel_grad_layernorm(din, k, dout, in[0], in[1], EPS);
}
static void fw_rmsnorm(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_rmsnorm(out, in[0], in[1], EPS);
}
static void gr_rmsnorm(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                       const void *ctx) {
    kernel_grad_rmsnorm(din, k, dout, in[0], in[1], EPS);
}
static void fw_batchnorm(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_batchnorm(out, in[0], in[1], in[2], EPS);
}
static void gr_batchnorm(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                         const void *ctx) {
    kernel_grad_batchnorm(din, k, dout, in[0], in[1], EPS);
}
typedef struct ReduceCtx {
    int axis;
    KernelReduce op;
} ReduceCtx;
static void fw_reduce(Tensor *out, Tensor *const *in, const void *ctx) {
    const ReduceCtx *r = ctx;
    kernel_reduce(out, in[0], r->axis, r->op);
}
static void gr_reduce(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                      const void *ctx) {
    const ReduceCtx *r = ctx;
    kernel_grad_reduce(din, dout, in[0], r->axis, r->op);
}
typedef struct IndexCtx {
    KernelAxisIndex index[KERNEL_MAX_INDEX];
    size_t n;
} IndexCtx;
static void fw_index(Tensor *out, Tensor *const *in, const void *ctx) {
    const IndexCtx *x = ctx;
    kernel_index(out, in[0], x->index, x->n);
}
static void gr_index(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    const IndexCtx *x = ctx;
    kernel_grad_index(din, dout, x->index, x->n);
}
static void fw_take(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_take(out, in[0], in[1]);
}
static void gr_take(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                    const void *ctx) {
    kernel_grad_take(din, dout, in[1]);
}
static void fw_along(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_take_along_axis(out, in[0], in[1], *(const size_t *)ctx);
}
static void gr_along(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    kernel_grad_take_along_axis(din, dout, in[1], *(const size_t *)ctx);
}
static void fw_concat(Tensor *out, Tensor *const *in, const void *ctx) {
    const Tensor *parts[3] = {in[0], in[1], in[2]};
    kernel_concat(out, parts, 3, *(const size_t *)ctx);
}
static void gr_concat(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                      const void *ctx) {
    size_t axis = *(const size_t *)ctx, offset = 0;
    for (size_t p = 0; p < k; p++)
        offset += in[p]->shape.dim[axis];
    kernel_grad_concat(din, offset, dout, axis);
}
static void fw_split(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_split_heads(out, in[0], 2);
}
static void gr_split(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    kernel_grad_split_heads(din, dout);
}
static void fw_merge(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_merge_heads(out, in[0]);
}
static void gr_merge(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    kernel_grad_merge_heads(din, dout);
}
static void fw_rope(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_rope(out, in[0], in[1], 10000.0);
}
static void gr_rope(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                    const void *ctx) {
    kernel_grad_rope(din, dout, in[1], 10000.0);
}
static void fw_cross_entropy(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_cross_entropy(out, in[0], in[1]);
}
static void gr_cross_entropy(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                             const void *ctx) {
    kernel_grad_cross_entropy(din, dout, in[0], in[1]);
}

static void fw_where(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_where(out, in[0], in[1], in[2]);
}
static void gr_where(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                     const void *ctx) {
    kernel_grad_where(din, k, dout, in[0], in[1], in[2]);
}
static void fw_clip(Tensor *out, Tensor *const *in, const void *ctx) {
    kernel_clip(out, in[0], in[1], in[2]);
}
static void gr_clip(Tensor *din, size_t k, const Tensor *dout, Tensor *const *in, const Tensor *out,
                    const void *ctx) {
    kernel_grad_clip(din, k, dout, in[0], in[1], in[2]);
}

// ---------------------------------------------------------------- against finite differences

static void test_binary(void **state) {
    // maximum and minimum: random draws never tie, where the two would share the gradient
    static const KernelBinary ops[] = {KERNEL_ADD, KERNEL_SUB, KERNEL_MUL, KERNEL_DIV, KERNEL_POW, KERNEL_MAXIMUM,
                                       KERNEL_MINIMUM};
    static const char *names[] = {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum"};
    for (size_t i = 0; i < ARRAY_LEN(ops); i++) {
        // broadcasting both ways: a [2, 1, 3] against b [4, 1] gives [2, 4, 3]; power keeps a > 0
        GradCase c = {names[i], 2, {SHAPE(2, 1, 3), SHAPE(4, 1)}, SHAPE(2, 4, 3), 0, {NULL, NULL},
                      {ops[i] == KERNEL_POW ? 3.0 : 0.0, ops[i] == KERNEL_DIV ? 4.0 : 0.0}, fw_binary, gr_binary,
                      &ops[i]};
        check_case(&c);
        // a scalar against a matrix: the scalar's gradient is the sum over the matrix
        GradCase s = {names[i], 2, {SCALAR_SHAPE, SHAPE(3, 2)}, SHAPE(3, 2), 0, {NULL, NULL},
                      {ops[i] == KERNEL_POW ? 3.0 : 0.0, ops[i] == KERNEL_DIV ? 4.0 : 0.0}, fw_binary, gr_binary,
                      &ops[i]};
        check_case(&s);
    }
}

static void test_where_clip(void **state) {
    // where([2, 1, 3] cond, a [4, 1], b [3]): cond picks a or b; cond carries no gradient
    static const double cond[] = {1, 0, 0, 1, 1, 0};
    GradCase w = {"where", 3, {SHAPE(2, 1, 3), SHAPE(4, 1), SHAPE(3)}, SHAPE(2, 4, 3), 1u << 0, {cond, NULL, NULL},
                  {0}, fw_where, gr_where, NULL};
    check_case(&w);
    // clip with bounds that cross at the last place (lo 0.5 > hi -0.5): there hi wins; values
    // kept away from the bounds, where clip has its kinks
    static const double x[] = {-2.0, 0.25, 3.0, 0.0}, lo[] = {-1.0, -1.0, -1.0, 0.5}, hi[] = {1.0, 1.0, 1.0, -0.5};
    GradCase c = {"clip", 3, {SHAPE(4), SHAPE(4), SHAPE(4)}, SHAPE(4), 0, {x, lo, hi}, {0}, fw_clip, gr_clip, NULL};
    check_case(&c);
    // a matrix against scalar bounds: the bounds gather the gradient of every value they hold
    static const double m[] = {-2.0, 0.25, 3.0, 0.5, -0.75, 1.5}, one_lo[] = {-1.0}, one_hi[] = {1.0};
    GradCase s = {"clip", 3, {SHAPE(2, 3), SCALAR_SHAPE, SCALAR_SHAPE}, SHAPE(2, 3), 0, {m, one_lo, one_hi}, {0},
                  fw_clip, gr_clip, NULL};
    check_case(&s);
}

// Every KernelUnary value, found through the op table: the entries that compute as negation
// does (kernel_unary with their .variant) are the unary kernels, their variants 0, 1, 2, ...
// each once with none skipped; each with a derivative is checked without being listed here.
static void test_unary(void **state) {
    (void)state;
    const OpDef *negate = ops_operator(OP_PREFIX, '-');
    assert_non_null(negate);
    bool seen[64] = {false};
    size_t n = 0, checked = 0;
    for (size_t i = 0; i < ops_count(); i++) {
        const OpDef *op = ops_entry(i);
        if (op->compute != negate->compute)
            continue;
        assert_true(op->variant >= 0 && (size_t)op->variant < ARRAY_LEN(seen));
        if (seen[op->variant])
            fail_msg("'%s' computes KernelUnary %d, as another entry does", op->name, op->variant);
        seen[op->variant] = true;
        n++;
        if (!op->grad)
            continue;  // floor, ceil, round: no derivative, and grad() refuses them
        // 12 normal draws: none within H of 0, where abs and relu have their kink; moved to
        // about 4 for the functions with no real value below 0 (log, sqrt)
        KernelUnary kind = (KernelUnary)op->variant;
        GradCase c = {op->name, 1, {SHAPE(3, 4)}, SHAPE(3, 4), 0, {NULL}, {op->domain.negative_gives_nan ? 4.0 : 0.0},
                      fw_unary, gr_unary, &kind};
        check_case(&c);
        checked++;
    }
    for (size_t v = 0; v < n; v++)
        if (!seen[v])
            fail_msg("KernelUnary %zu has no entry in the op table (the unary kernels' variants run 0 to %zu)", v, n - 1);
    assert_true(checked >= 12);  // negate, exp, log, sqrt, abs, relu, gelu, tanh, sin, cos, silu, sigmoid
}

static void test_matmul(void **state) {
    GradCase cases[] = {
        {"matrix", 2, {SHAPE(3, 4), SHAPE(4, 5)}, SHAPE(3, 5), 0, {0}, {0}, fw_matmul, gr_matmul, NULL},
        {"batched, b broadcast", 2, {SHAPE(2, 3, 4), SHAPE(4, 2)}, SHAPE(2, 3, 2), 0, {0}, {0}, fw_matmul,
         gr_matmul, NULL},
        {"batched both, a broadcast over heads", 2, {SHAPE(1, 3, 4), SHAPE(2, 4, 3)}, SHAPE(2, 3, 3), 0, {0},
         {0}, fw_matmul, gr_matmul, NULL},
        {"vector @ matrix", 2, {SHAPE(4), SHAPE(4, 3)}, SHAPE(3), 0, {0}, {0}, fw_matmul, gr_matmul, NULL},
        {"matrix @ vector", 2, {SHAPE(3, 4), SHAPE(4)}, SHAPE(3), 0, {0}, {0}, fw_matmul, gr_matmul, NULL},
        {"vector @ vector", 2, {SHAPE(4), SHAPE(4)}, SCALAR_SHAPE, 0, {0}, {0}, fw_matmul, gr_matmul, NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_case(&cases[i]);
}

static void test_transpose(void **state) {
    GradCase c = {"transpose", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 4, 3), 0, {0}, {0}, fw_transpose, gr_transpose, NULL};
    check_case(&c);
}

// transpose(x, axes): every value goes back through the inverse order
static void test_permute(void **state) {
    static const size_t three[] = {1, 2, 0}, four[] = {3, 1, 0, 2};
    GradCase cases[] = {
        {"transpose(x, [1, 2, 0])", 1, {SHAPE(2, 3, 4)}, SHAPE(3, 4, 2), 0, {0}, {0}, fw_permute, gr_permute, three},
        {"transpose(x, [3, 1, 0, 2])", 1, {SHAPE(2, 3, 4, 5)}, SHAPE(5, 3, 2, 4), 0, {0}, {0}, fw_permute, gr_permute,
         four},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_case(&cases[i]);
}

static void test_along_an_axis(void **state) {
    // every axis of a [2, 3, 4]: the first, a middle one, the last
    for (size_t axis = 0; axis < 3; axis++) {
        AxisCtx soft = {axis, KERNEL_SOFTMAX}, logs = {axis, KERNEL_LOG_SOFTMAX};
        GradCase s = {"softmax along an axis", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 3, 4), 0, {0}, {0}, fw_softmax_axis,
                      gr_softmax_axis, &soft};
        check_case(&s);
        GradCase l = {"log_softmax", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 3, 4), 0, {0}, {0}, fw_softmax_axis,
                      gr_softmax_axis, &logs};
        check_case(&l);
        GradCase c = {"cumsum", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 3, 4), 0, {0}, {0}, fw_cumsum, gr_cumsum, &soft};
        check_case(&c);
    }
    // three copies of each slice of a [2, 3, 4] along the middle axis
    AxisCtx middle = {1, KERNEL_SOFTMAX};
    GradCase r = {"repeat_interleave", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 9, 4), 0, {0}, {0}, fw_repeat, gr_repeat, &middle};
    check_case(&r);
    // sort and the 2 largest of rows of random numbers, which never tie
    static const KernelSort sort = KERNEL_SORT, top = KERNEL_TOPK;
    GradCase so = {"sort", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 3, 4), 0, {0}, {0}, fw_sort, gr_sort, &sort};
    check_case(&so);
    GradCase tk = {"topk", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 3, 2), 0, {0}, {0}, fw_sort, gr_sort, &top};
    check_case(&tk);
    // top-p with p = 0.8 on rows whose kept set no small step changes (the sums before each
    // value stay 0.05 or more from p): three kept of each, and a dropped one
    static const double p = 0.8, probs[] = {0.1, 0.4, 0.05, 0.3, 0.15, 0.05, 0.5, 0.25, 0.12, 0.08};
    GradCase tp = {"top_p", 1, {SHAPE(2, 5)}, SHAPE(2, 5), 0, {probs}, {0}, fw_top_p, gr_top_p, &p};
    check_case(&tp);
    // the triangles below and above the diagonal under the main one, of each [3, 4] block
    static const KernelTriangle sides[] = {KERNEL_LOWER, KERNEL_UPPER};
    for (size_t i = 0; i < 2; i++) {
        GradCase t = {"triangle", 1, {SHAPE(2, 3, 4)}, SHAPE(2, 3, 4), 0, {0}, {0}, fw_triangle, gr_triangle, &sides[i]};
        check_case(&t);
    }
}

static void test_softmax(void **state) {
    GradCase c = {"softmax", 1, {SHAPE(2, 3, 5)}, SHAPE(2, 3, 5), 0, {0}, {0}, fw_softmax, gr_softmax, NULL};
    check_case(&c);
}

static void test_norms(void **state) {
    GradCase cases[] = {
        {"layernorm, gamma and beta per feature", 3, {SHAPE(3, 4), SHAPE(4), SHAPE(4)}, SHAPE(3, 4), 0, {0},
         {0}, fw_layernorm, gr_layernorm, NULL},
        {"layernorm, scalar gamma and beta", 3, {SHAPE(2, 2, 5), SCALAR_SHAPE, SCALAR_SHAPE}, SHAPE(2, 2, 5), 0,
         {0}, {0}, fw_layernorm, gr_layernorm, NULL},
        {"rmsnorm, gamma per feature", 2, {SHAPE(3, 4), SHAPE(4)}, SHAPE(3, 4), 0, {0}, {0}, fw_rmsnorm,
         gr_rmsnorm, NULL},
        {"rmsnorm, scalar gamma", 2, {SHAPE(2, 2, 5), SCALAR_SHAPE}, SHAPE(2, 2, 5), 0, {0}, {0}, fw_rmsnorm,
         gr_rmsnorm, NULL},
        {"batchnorm, gamma and beta per feature", 3, {SHAPE(2, 3, 4), SHAPE(4), SHAPE(4)}, SHAPE(2, 3, 4), 0,
         {0}, {0}, fw_batchnorm, gr_batchnorm, NULL},
        {"batchnorm, scalar gamma and beta", 3, {SHAPE(5, 3), SCALAR_SHAPE, SCALAR_SHAPE}, SHAPE(5, 3), 0, {0},
         {0}, fw_batchnorm, gr_batchnorm, NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_case(&cases[i]);
}

// A tensor of shape [3] holding a, b, c.
static Tensor *three(double a, double b, double c) {
    Tensor *t = tensor_create(&SHAPE(3));
    assert_non_null(t);
    t->data[0] = a;
    t->data[1] = b;
    t->data[2] = c;
    return t;
}

// dx of a normalisation at x against want, each within 1e-12 of its own size.
static void assert_relative(const Tensor *dx, const double *want) {
    for (size_t i = 0; i < dx->size; i++)
        assert_true(fabs(dx->data[i] - want[i]) <= 1e-12 * fabs(want[i]));
}

static void test_norms_of_huge_values(void **state) {
    // At x = 1e200 * v the squares overflow; the derivative is that at v scaled by 1e-200 (a
    // normalisation is scale-free, eps aside). numpy, v = [1., -1., 3.], g = [1., 2., 3.]:
    // LayerNorm: xh = (v - v.mean()) / v.std(); (g - g.mean() - xh * (g * xh).mean()) / v.std()
    // RMSNorm: r = sqrt((v**2).mean()); g / r - v * (g * v).mean() / r**3; each times 1e-200.
    static const double ln[] = {-6.1237243569579444e-201, 3.061862178478972e-201, 3.0618621784789733e-201};
    static const double rms[] = {1.4242717305466185e-201, 1.4242717305466185e-200, 4.272815191639856e-201};
    Tensor *x = three(1e200, -1e200, 3e200), *g = three(1, 2, 3), *one = scalar(1);
    Tensor *dx = tensor_create(&SHAPE(3));
    kernel_grad_layernorm(dx, 0, g, x, one, EPS);
    assert_relative(dx, ln);
    kernel_fill(dx, 0.0);
    kernel_grad_rmsnorm(dx, 0, g, x, one, EPS);
    assert_relative(dx, rms);
    // Near 1e103 the squares do not overflow but rms^3 does: the same rescaling holds.
    Tensor *x103 = three(1e103, -1e103, 3e103);
    const double rms103[] = {rms[0] * 1e97, rms[1] * 1e97, rms[2] * 1e97};
    kernel_fill(dx, 0.0);
    kernel_grad_rmsnorm(dx, 0, g, x103, one, EPS);
    assert_relative(dx, rms103);
    tensor_destroy(x);
    tensor_destroy(x103);
    tensor_destroy(g);
    tensor_destroy(one);
    tensor_destroy(dx);
}

static void test_reductions(void **state) {
    static const KernelReduce ops[] = {KERNEL_SUM, KERNEL_MEAN, KERNEL_VAR, KERNEL_MAX, KERNEL_MIN, KERNEL_NORM};
    static const char *names[] = {"sum", "mean", "var", "max", "min", "norm"};
    for (size_t i = 0; i < ARRAY_LEN(ops); i++) {
        ReduceCtx all = {KERNEL_ALL_AXES, ops[i]}, middle = {1, ops[i]};
        GradCase a = {names[i], 1, {SHAPE(3, 4)}, SCALAR_SHAPE, 0, {0}, {0}, fw_reduce, gr_reduce, &all};
        GradCase m = {names[i], 1, {SHAPE(2, 3, 4)}, SHAPE(2, 4), 0, {0}, {0}, fw_reduce, gr_reduce, &middle};
        check_case(&a);
        check_case(&m);
    }
}

static void test_indexing(void **state) {
    static const size_t rows[] = {2, 0, 2};  // row 2 twice: its gradient is the sum of both
    IndexCtx by_list = {{{.kind = KERNEL_INDEX_LIST, .list = rows, .n_list = 3}}, 1};
    IndexCtx mixed = {{{.kind = KERNEL_INDEX_RANGE, .start = 1, .stop = 3}, {.kind = KERNEL_INDEX_AT, .start = 2}},
                      2};
    // numpy's rule: x[0, :, [2, 0, 1]] of [2, 2, 3] puts the gathered axis first: [3, 2]
    static const size_t cols[] = {2, 0, 1};
    IndexCtx moved = {{{.kind = KERNEL_INDEX_AT, .start = 0}, {.kind = KERNEL_INDEX_ALL},
                       {.kind = KERNEL_INDEX_LIST, .list = cols, .n_list = 3}},
                      3};
    // x[None, 1:3]: a new axis reads nothing
    IndexCtx fresh = {{{.kind = KERNEL_INDEX_NEW}, {.kind = KERNEL_INDEX_RANGE, .start = 1, .stop = 3}}, 2};
    static const double ids[] = {5, 0, 5, 11};
    static const double along[] = {3, 3, 0, -1, 2, 1}, picks[] = {0, 3, -1}, down[] = {2, 0, 1, 2, 0, 0, -1, 2};
    static const size_t zero = 0, one = 1;
    GradCase cases[] = {
        {"rows by a list", 1, {SHAPE(4, 3)}, SHAPE(3, 3), 0, {0}, {0}, fw_index, gr_index, &by_list},
        {"a range and a column", 1, {SHAPE(4, 3)}, SHAPE(2), 0, {0}, {0}, fw_index, gr_index, &mixed},
        {"take", 2, {SHAPE(3, 4), SHAPE(2, 2)}, SHAPE(2, 2), 2, {NULL, ids}, {0}, fw_take, gr_take, NULL},
        // a repeated pick adds up, a negative one counts from the end, [1, 4] broadcasts over [3, 1]
        {"take_along_axis, axis 1", 2, {SHAPE(3, 4), SHAPE(3, 2)}, SHAPE(3, 2), 2, {NULL, along}, {0}, fw_along,
         gr_along, &one},
        {"take_along_axis, broadcast", 2, {SHAPE(1, 4), SHAPE(3, 1)}, SHAPE(3, 1), 2, {NULL, picks}, {0}, fw_along,
         gr_along, &one},
        {"take_along_axis, axis 0", 2, {SHAPE(3, 4), SHAPE(2, 4)}, SHAPE(2, 4), 2, {NULL, down}, {0}, fw_along,
         gr_along, &zero},
        {"a gathered axis moved first", 1, {SHAPE(2, 2, 3)}, SHAPE(3, 2), 0, {0}, {0}, fw_index, gr_index, &moved},
        {"a new axis", 1, {SHAPE(4, 3)}, SHAPE(1, 2, 3), 0, {0}, {0}, fw_index, gr_index, &fresh},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_case(&cases[i]);
}

static void test_concat_and_heads(void **state) {
    static const size_t axis0 = 0, axis1 = 1;
    GradCase cases[] = {
        {"concat rows", 3, {SHAPE(1, 3), SHAPE(2, 3), SHAPE(1, 3)}, SHAPE(4, 3), 0, {0}, {0}, fw_concat,
         gr_concat, &axis0},
        {"concat columns", 3, {SHAPE(2, 1), SHAPE(2, 3), SHAPE(2, 2)}, SHAPE(2, 6), 0, {0}, {0}, fw_concat,
         gr_concat, &axis1},
        {"split_heads", 1, {SHAPE(3, 4)}, SHAPE(2, 3, 2), 0, {0}, {0}, fw_split, gr_split, NULL},
        {"merge_heads", 1, {SHAPE(2, 3, 2)}, SHAPE(3, 4), 0, {0}, {0}, fw_merge, gr_merge, NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_case(&cases[i]);
}

static void test_rope(void **state) {
    static const double positions[] = {0, 1, 5};
    GradCase c = {"rope over heads", 2, {SHAPE(2, 3, 4), SHAPE(3)}, SHAPE(2, 3, 4), 2, {NULL, positions}, {0},
                  fw_rope, gr_rope, NULL};
    check_case(&c);
}

static void test_cross_entropy(void **state) {
    static const double targets[] = {3, 0};
    GradCase c = {"cross_entropy", 2, {SHAPE(2, 5), SHAPE(2)}, SHAPE(2), 2, {NULL, targets}, {0},
                  fw_cross_entropy, gr_cross_entropy, NULL};
    check_case(&c);
}

// ---------------------------------------------------------------- what finite differences cannot judge

// Worked by hand: logits [0, ln 2, ln 5] have exp 1, 2, 5 (sum 8), probs [1/8, 2/8, 5/8]; with
// target 1 and dloss = 1 the gradient is probs - onehot = [0.125, -0.75, 0.625].
static void test_cross_entropy_probs_minus_onehot(void **state) {
    Tensor *logits = tensor_create(&SHAPE(3)), *target = scalar(1), *dout = scalar(1);
    Tensor *d = tensor_create(&SHAPE(3));
    logits->data[1] = log(2.0);
    logits->data[2] = log(5.0);
    kernel_grad_cross_entropy(d, dout, logits, target);
    assert_true(fabs(d->data[0] - 0.125) < 1e-15);
    assert_true(fabs(d->data[1] + 0.75) < 1e-15);
    assert_true(fabs(d->data[2] - 0.625) < 1e-15);
    tensor_destroy(logits);
    tensor_destroy(target);
    tensor_destroy(dout);
    tensor_destroy(d);
}

// max of [1, 3, 3, 2] is the first 3 (index 1): all the gradient goes there, none to index 2.
static void test_max_tie_goes_to_the_first(void **state) {
    static const double v[] = {1, 3, 3, 2, 3, 3};
    Tensor *x = tensor_create(&SHAPE(4)), *dout = scalar(2.5), *d = tensor_create(&SHAPE(4));
    memcpy(x->data, v, 4 * sizeof(double));
    kernel_grad_reduce(d, dout, x, KERNEL_ALL_AXES, KERNEL_MAX);
    assert_true(d->data[0] == 0 && d->data[1] == 2.5 && d->data[2] == 0 && d->data[3] == 0);
    kernel_fill(d, 0.0);
    kernel_grad_reduce(d, dout, x, KERNEL_ALL_AXES, KERNEL_MIN);
    assert_true(d->data[0] == 2.5 && d->data[1] == 0 && d->data[2] == 0 && d->data[3] == 0);
    tensor_destroy(x);
    tensor_destroy(dout);
    tensor_destroy(d);
}

// The gradient of the norm of a subnormal row is x / |x| taken at a scale where no digit is
// lost: [5e-324, 5e-324] gives 1/sqrt(2) = 0.7071067811865475 each (numpy), finite, where the
// norm was nan; and [3e-320, 4e-320] gives 0.6 and 0.8. A row of zeros gives 0 (PyTorch's).
static void test_norm_of_subnormals(void **state) {
    Tensor *x = tensor_create(&SHAPE(3, 2)), *dout = tensor_create(&SHAPE(3)), *d = tensor_create(&SHAPE(3, 2));
    const double v[] = {5e-324, 5e-324, 3e-320, 4e-320, 0, 0};
    memcpy(x->data, v, sizeof(v));
    kernel_fill(dout, 1.0);
    kernel_fill(d, 0.0);
    kernel_grad_reduce(d, dout, x, 1, KERNEL_NORM);
    assert_true(d->data[0] == 0.7071067811865475 && d->data[1] == 0.7071067811865475);
    // 3e-320 and 4e-320 are 6072 and 8096 times 2^-1074, their norm 10120 times: 3/5 and 4/5
    assert_true(d->data[2] == 0.6 && d->data[3] == 0.8);
    assert_true(d->data[4] == 0 && d->data[5] == 0);
    tensor_destroy(x);
    tensor_destroy(dout);
    tensor_destroy(d);
}

// A masked score (-inf) has softmax weight exactly 0 and gets exactly 0 gradient, never nan.
static void test_softmax_masked_gets_zero(void **state) {
    Tensor *x = tensor_create(&SHAPE(3)), *w = tensor_create(&SHAPE(3)), *dout = tensor_create(&SHAPE(3));
    Tensor *d = tensor_create(&SHAPE(3));
    x->data[0] = 0.5;
    x->data[1] = -0.25;
    x->data[2] = -INFINITY;
    dout->data[0] = 1.0;
    dout->data[1] = -2.0;
    dout->data[2] = 7.0;
    kernel_softmax(w, x);
    kernel_grad_softmax(d, dout, w);
    assert_true(d->data[2] == 0.0);
    // the two live entries: w0 (g0 - dot) and w1 (g1 - dot) sum to 0 (softmax keeps the total)
    assert_true(fabs(d->data[0] + d->data[1]) < 1e-15);
    assert_true(d->data[0] > 0);
    tensor_destroy(x);
    tensor_destroy(w);
    tensor_destroy(dout);
    tensor_destroy(d);
}

// Rows gathered twice by take add up: table [3] indexed by [2, 2, 0] with dout [1, 10, 100].
static void test_take_repeats_accumulate(void **state) {
    static const double ids[] = {2, 2, 0}, g[] = {1, 10, 100};
    Tensor *idx = tensor_create(&SHAPE(3)), *dout = tensor_create(&SHAPE(3)), *d = tensor_create(&SHAPE(3));
    memcpy(idx->data, ids, sizeof(ids));
    memcpy(dout->data, g, sizeof(g));
    kernel_grad_take(d, dout, idx);
    assert_true(d->data[0] == 100 && d->data[1] == 0 && d->data[2] == 11);
    tensor_destroy(idx);
    tensor_destroy(dout);
    tensor_destroy(d);
}

// relu'(0) = abs'(0) = 0, as PyTorch takes them; gelu'(0) = 0.5 exactly.
static void test_kinks(void **state) {
    assert_true(kernel_unary_derivative(KERNEL_RELU, 0.0) == 0.0);
    assert_true(kernel_unary_derivative(KERNEL_ABS, 0.0) == 0.0);
    assert_true(kernel_unary_derivative(KERNEL_GELU, 0.0) == 0.5);
    assert_true(kernel_unary_derivative(KERNEL_RELU, -3.0) == 0.0);
    assert_true(kernel_unary_derivative(KERNEL_ABS, -3.0) == -1.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_where_clip),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_along_an_axis),
        cmocka_unit_test(test_norms),
        cmocka_unit_test(test_norms_of_huge_values),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_indexing),
        cmocka_unit_test(test_concat_and_heads),
        cmocka_unit_test(test_rope),
        cmocka_unit_test(test_cross_entropy),
        cmocka_unit_test(test_cross_entropy_probs_minus_onehot),
        cmocka_unit_test(test_max_tie_goes_to_the_first),
        cmocka_unit_test(test_norm_of_subnormals),
        cmocka_unit_test(test_softmax_masked_gets_zero),
        cmocka_unit_test(test_take_repeats_accumulate),
        cmocka_unit_test(test_kinks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
