// kernel: dense math on plain tensors (see kernel.h for the contract of every function).
//
// Every kernel first checks that its output has the shape the matching *_shape function gives:
// the caller was meant to check the inputs, so a mismatch is a programming error (ASSERT).
// Sums always run in index order, so every run prints the same digits.
#include "kernel.h"

#include <math.h>
#include <string.h>

#include "backend.h"
#include "kernel_private.h"
#include "util.h"

// ---------------------------------------------------------------- shapes

bool kernel_broadcast_shape(const Shape *a, const Shape *b, Shape *out) {
    Shape s = {.rank = a->rank > b->rank ? a->rank : b->rank};
    for (size_t i = 0; i < s.rank; i++) {
        // i counts from the last axis; a missing axis acts as size 1
        size_t da = i < a->rank ? a->dim[a->rank - 1 - i] : 1;
        size_t db = i < b->rank ? b->dim[b->rank - 1 - i] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        s.dim[s.rank - 1 - i] = da == 1 ? db : da;
    }
    *out = s;
    return true;
}

bool kernel_matmul_shape(const Shape *a, const Shape *b, Shape *out) {
    if (a->rank == 0 || b->rank == 0)
        return false;
    MatView va = mat_view(a, true), vb = mat_view(b, false);
    Shape s;
    if (va.cols != vb.rows || !kernel_broadcast_shape(&va.batch, &vb.batch, &s))
        return false;
    // a vector operand's unit axis is dropped again: [k] @ [k] -> []
    if (a->rank >= 2)
        s.dim[s.rank++] = va.rows;
    if (b->rank >= 2)
        s.dim[s.rank++] = vb.cols;
    *out = s;
    return true;
}

// ---------------------------------------------------------------- matrix product

// c (n, m) = a (n, k) @ b (k, m), contiguous: backend.h holds the order of every sum.
void kernel_gemm(double *c, const double *a, const double *b, size_t n, size_t k, size_t m) {
    BackendMatrix ga = {.data = a, .row_step = k, .col_step = 1}, gb = {.data = b, .row_step = m, .col_step = 1};
    BackendOutput out = {.data = c, .row_step = m};
    backend_product(&out, &ga, &gb, (const size_t[2]){1, 1}, n, k, m);
}

// The step of each of the broadcast batch axes through an operand whose own batch axes are
// `own` with steps `step` (0 along a broadcast axis), right-aligned into two slots: [h] is
// (1, h), [b, h] is (b, h).
static void batch_steps(size_t slots[2], const Shape *own, const size_t *step, const Shape *batch) {
    size_t shift = batch->rank - own->rank;
    for (size_t i = shift; i < batch->rank; i++)
        slots[2 - batch->rank + i] = own->dim[i - shift] == 1 ? 0 : step[i - shift];
}

// A matmul operand as the product reads it, its own values or those it views: its matrix (a vector as
// a row or a column) and the steps of its batch axes through the broadcast batch shape.
static BackendMatrix product_operand(const Tensor *t, const MatView *v, const Shape *batch) {
    size_t step[TENSOR_MAX_RANK];
    tensor_steps(t, step);
    size_t r = t->shape.rank;
    // a vector is one row (left) or one column (right), its values a step apart either way
    BackendMatrix g = {.data = t->view ? t->view : t->data, .row_step = r >= 2 ? step[r - 2] : 1,
                    .col_step = r >= 2 ? step[r - 1] : 1};
    batch_steps(g.batch_step, &v->batch, step, batch);
    return g;
}

// out (..., n, m) = a (..., n, k) @ b (..., k, m), one product per (broadcast) batch entry.
// Any of the three may be a view (tensor.h); out's columns must be side by side.
void kernel_matmul(Tensor *out, const Tensor *a, const Tensor *b) {
    ASSERT(a->shape.rank > 0 && b->shape.rank > 0);
    ASSERT((out->data || out->view) && (a->data || a->view) && (b->data || b->view));
    MatView va = mat_view(&a->shape, true), vb = mat_view(&b->shape, false);
    Shape batch;
    ASSERT(va.cols == vb.rows && kernel_broadcast_shape(&va.batch, &vb.batch, &batch));
    ASSERT(batch.rank <= 2);
    size_t entries[2] = {1, 1};
    for (size_t i = 0; i < batch.rank; i++)
        entries[2 - batch.rank + i] = batch.dim[i];
    // the output's axes are the batch axes, then a's rows (if a is a matrix), then b's columns:
    // kernel_matmul_shape's, checked here without working it out again (the finite-difference
    // checks of a backward pass run tens of thousands of small products)
    size_t rows_axis = a->shape.rank >= 2 ? 1 : 0, r = batch.rank + rows_axis + (b->shape.rank >= 2);
    ASSERT(out->shape.rank == r);
    for (size_t i = 0; i < batch.rank; i++)
        ASSERT(out->shape.dim[i] == batch.dim[i]);
    ASSERT(!rows_axis || out->shape.dim[batch.rank] == va.rows);
    ASSERT(b->shape.rank < 2 || out->shape.dim[r - 1] == vb.cols);
    BackendMatrix ga = product_operand(a, &va, &batch), gb = product_operand(b, &vb, &batch);
    size_t step[TENSOR_MAX_RANK];
    tensor_steps(out, step);
    ASSERT(b->shape.rank < 2 || step[r - 1] == 1);
    BackendOutput c = {.data = out->view ? out->view : out->data,
                    .row_step = rows_axis ? step[batch.rank] : 0};
    batch_steps(c.batch_step, &batch, step, &batch);
    backend_product(&c, &ga, &gb, entries, va.rows, va.cols, vb.cols);
}

// out (..., m, n) = a (..., n, m)
void kernel_transpose(Tensor *out, const Tensor *a) {
    expect_values(a);
    Shape s = a->shape;
    if (s.rank < 2) {
        expect_shape(out, &s);
        memcpy(out->data, a->data, a->size * sizeof(double));
        return;
    }
    size_t n = s.dim[s.rank - 2], m = s.dim[s.rank - 1];
    s.dim[s.rank - 2] = m;
    s.dim[s.rank - 1] = n;
    expect_shape(out, &s);
    size_t blocks = dims_product(&s, 0, s.rank - 2);
    for (size_t bl = 0; bl < blocks; bl++) {
        const double *src = a->data + bl * n * m;
        double *dst = out->data + bl * n * m;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                dst[j * n + i] = src[i * m + j];
    }
}

// ---------------------------------------------------------------- elementwise

// a // b, with a % b in *mod, as numpy's npy_divmod (from CPython's float divmod): fmod(a, b)
// is exact, and a - fmod(a, b) a whole multiple of b up to the rounding of the division, which
// the last step snaps to the nearest whole number.
static double floor_divmod(double a, double b, double *mod) {
    *mod = fmod(a, b);
    if (b == 0)  // fmod gave nan; the quotient is inf, -inf or nan as IEEE says
        return a / b;
    double div = (a - *mod) / b;
    if (*mod != 0) {
        if ((b < 0) != (*mod < 0)) {  // the remainder takes b's sign, as in Python
            *mod += b;
            div -= 1.0;
        }
    } else {
        *mod = copysign(0.0, b);
    }
    if (div == 0)
        return copysign(0.0, a / b);
    double floordiv = floor(div);
    if (div - floordiv > 0.5)
        floordiv += 1.0;
    return floordiv;
}

double kernel_binary_apply(KernelBinary op, double a, double b) {
    switch (op) {
    case KERNEL_ADD:
        return a + b;
    case KERNEL_SUB:
        return a - b;
    case KERNEL_MUL:
        return a * b;
    case KERNEL_DIV:
        return a / b;
    case KERNEL_POW:
        return pow(a, b);
    case KERNEL_FLOOR_DIV: {
        double mod;
        return floor_divmod(a, b, &mod);
    }
    case KERNEL_MOD: {
        double mod;
        floor_divmod(a, b, &mod);
        return mod;
    }
    case KERNEL_EQ:
        return a == b;
    case KERNEL_NE:
        return a != b;
    case KERNEL_LT:
        return a < b;
    case KERNEL_LE:
        return a <= b;
    case KERNEL_GT:
        return a > b;
    case KERNEL_GE:
        return a >= b;
    case KERNEL_MAXIMUM:
        return a > b || isnan(a) ? a : b;
    case KERNEL_MINIMUM:
        return a < b || isnan(a) ? a : b;
    case KERNEL_AND:
        return a != 0 && b != 0;
    case KERNEL_OR:
        return a != 0 || b != 0;
    }
    ASSERT(!"unknown KernelBinary");
    return NAN;
}

// out[j] = a[j * sa] op b[j * sb] for j < len, with sa and sb each 0 (a repeated value) or 1.
// One loop per op and stride pair, so the compiler sees plain arrays; every element is still
// the one IEEE operation kernel_binary_apply does.
#define BINARY_LINE(OUT, A, B)                                                             \
    do {                                                                                   \
        if (sa && sb)                                                                      \
            for (size_t j = 0; j < len; j++)                                               \
                OUT[j] = A[j] op_sym B[j];                                                 \
        else if (sa)                                                                       \
            for (size_t j = 0; j < len; j++)                                               \
                OUT[j] = A[j] op_sym B[0];                                                 \
        else if (sb)                                                                       \
            for (size_t j = 0; j < len; j++)                                               \
                OUT[j] = A[0] op_sym B[j];                                                 \
        else                                                                               \
            for (size_t j = 0; j < len; j++)                                               \
                OUT[j] = A[0] op_sym B[0];                                                 \
    } while (0)

static void binary_line(double *restrict out, const double *a, size_t sa, const double *b, size_t sb, size_t len,
                        KernelBinary op) {
    switch (op) {
#define op_sym +
    case KERNEL_ADD: BINARY_LINE(out, a, b); return;
#undef op_sym
#define op_sym -
    case KERNEL_SUB: BINARY_LINE(out, a, b); return;
#undef op_sym
#define op_sym *
    case KERNEL_MUL: BINARY_LINE(out, a, b); return;
#undef op_sym
#define op_sym /
    case KERNEL_DIV: BINARY_LINE(out, a, b); return;
#undef op_sym
    case KERNEL_POW:
        for (size_t j = 0; j < len; j++)
            out[j] = pow(a[j * sa], b[j * sb]);
        return;
    case KERNEL_FLOOR_DIV:
    case KERNEL_MOD:
    case KERNEL_EQ:
    case KERNEL_NE:
    case KERNEL_LT:
    case KERNEL_LE:
    case KERNEL_GT:
    case KERNEL_GE:
    case KERNEL_MAXIMUM:
    case KERNEL_MINIMUM:
    case KERNEL_AND:
    case KERNEL_OR:
        // Comparisons and // and % are for claims, counts and small checks, not hot loops: the
        // one generic path.
        for (size_t j = 0; j < len; j++)
            out[j] = kernel_binary_apply(op, a[j * sa], b[j * sb]);
        return;
    }
    ASSERT(!"unknown KernelBinary");
}
#undef BINARY_LINE

typedef struct BinaryJob {
    Tensor *out;
    const Tensor *a, *b;
    KernelBinary op;
    bool a_whole, b_whole;  // one line: the whole tensor (or a single value)
    Walk walk;              // else: lines of the last axis, len long, input steps sa and sb
    size_t len, sa, sb;
} BinaryJob;

static void binary_lines(void *ctx, size_t begin, size_t end) {
    const BinaryJob *j = ctx;
    if (j->len == 0) {
        binary_line(j->out->data + begin, j->a->data + (j->a_whole ? begin : 0), j->a_whole,
                    j->b->data + (j->b_whole ? begin : 0), j->b_whole, end - begin, j->op);
        return;
    }
    Walk w = j->walk;
    walk_seek(&w, begin);
    for (size_t line = begin; line < end; line++, walk_next(&w))
        binary_line(j->out->data + line * j->len, j->a->data + w.off[0], j->sa, j->b->data + w.off[1], j->sb, j->len,
                    j->op);
}

// out (broadcast of a and b) = a op b, one line of the last axis at a time
void kernel_binary(Tensor *out, const Tensor *a, const Tensor *b, KernelBinary op) {
    Shape s;
    ASSERT(kernel_broadcast_shape(&a->shape, &b->shape, &s));
    expect_shape(out, &s);
    expect_values(a);
    expect_values(b);
    if (out->size == 0)
        return;
    BinaryJob j = {.out = out, .a = a, .b = b, .op = op, .a_whole = a->size == out->size, .b_whole = b->size == out->size};
    // No broadcasting but of a single value: the whole tensor is one line.
    if ((j.a_whole || a->size == 1) && (j.b_whole || b->size == 1)) {
        backend_for(out->size, min_items(1), binary_lines, &j);
        return;
    }
    walk_init(&j.walk, &s, &a->shape, &b->shape);
    j.len = last_dim(&s);
    j.sa = j.walk.stride[0][s.rank - 1];
    j.sb = j.walk.stride[1][s.rank - 1];
    j.walk.rank--;  // walk the other axes; the last is the line
    backend_for(out->size / j.len, min_items(j.len), binary_lines, &j);
}

bool kernel_broadcast_shape3(const Shape *a, const Shape *b, const Shape *c, Shape *out) {
    Shape ab;
    return kernel_broadcast_shape(a, b, &ab) && kernel_broadcast_shape(&ab, c, out);
}

void walk3(const Shape *out, const Shape *s0, const Shape *s1, const Shape *s2,
                  void (*visit)(void *ctx, size_t i, size_t o0, size_t o1, size_t o2), void *ctx) {
    size_t stride[3][TENSOR_MAX_RANK], idx[TENSOR_MAX_RANK] = {0}, n;
    ASSERT(shape_size(out, &n));
    broadcast_strides(stride[0], s0, out);
    broadcast_strides(stride[1], s1, out);
    broadcast_strides(stride[2], s2, out);
    size_t off[3] = {0};
    for (size_t i = 0; i < n; i++) {
        visit(ctx, i, off[0], off[1], off[2]);
        for (size_t k = out->rank; k-- > 0;) {
            idx[k]++;
            for (size_t t = 0; t < 3; t++)
                off[t] += stride[t][k];
            if (idx[k] < out->dim[k])
                break;
            for (size_t t = 0; t < 3; t++)
                off[t] -= stride[t][k] * out->dim[k];
            idx[k] = 0;
        }
    }
}

typedef struct Ternary {
    double *out;
    const double *t0, *t1, *t2;
} Ternary;

static void where_one(void *ctx, size_t i, size_t o0, size_t o1, size_t o2) {
    Ternary *t = ctx;
    t->out[i] = t->t0[o0] != 0 ? t->t1[o1] : t->t2[o2];
}

static void clip_one(void *ctx, size_t i, size_t o0, size_t o1, size_t o2) {
    Ternary *t = ctx;
    double low = kernel_binary_apply(KERNEL_MAXIMUM, t->t0[o0], t->t1[o1]);
    t->out[i] = kernel_binary_apply(KERNEL_MINIMUM, low, t->t2[o2]);
}

// out (broadcast of t0, t1, t2) = one(t0, t1, t2), element by element
static void ternary(Tensor *out, const Tensor *t0, const Tensor *t1, const Tensor *t2,
                    void (*one)(void *, size_t, size_t, size_t, size_t)) {
    Shape s;
    ASSERT(kernel_broadcast_shape3(&t0->shape, &t1->shape, &t2->shape, &s));
    expect_shape(out, &s);
    expect_values(t0);
    expect_values(t1);
    expect_values(t2);
    Ternary t = {out->data, t0->data, t1->data, t2->data};
    walk3(&s, &t0->shape, &t1->shape, &t2->shape, one, &t);
}

// out (broadcast) = cond ? a : b
void kernel_where(Tensor *out, const Tensor *cond, const Tensor *a, const Tensor *b) {
    ternary(out, cond, a, b, where_one);
}

// out (broadcast) = minimum(maximum(x, lo), hi)
void kernel_clip(Tensor *out, const Tensor *x, const Tensor *lo, const Tensor *hi) {
    ternary(out, x, lo, hi, clip_one);
}

bool kernel_isclose(double a, double b, double rtol, double atol) {
    if (isnan(a) || isnan(b))
        return false;
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= atol + rtol * fabs(b);
}

// out [] = 1 when a (broadcast with b) is close to b everywhere
void kernel_allclose(Tensor *out, const Tensor *a, const Tensor *b, double rtol, double atol) {
    Shape s;
    ASSERT(kernel_broadcast_shape(&a->shape, &b->shape, &s));
    ASSERT(out->shape.rank == 0);
    expect_values(out);
    expect_values(a);
    expect_values(b);
    size_t n;
    ASSERT(shape_size(&s, &n));
    Walk w;
    walk_init(&w, &s, &a->shape, &b->shape);
    bool close = true;
    for (size_t i = 0; i < n && close; i++, walk_next(&w))
        close = kernel_isclose(a->data[w.off[0]], b->data[w.off[1]], rtol, atol);
    out->data[0] = close;
}

double kernel_unary_apply(KernelUnary op, double x) {
    switch (op) {
    case KERNEL_NEG:
        return -x;
    case KERNEL_EXP:
        return exp(x);
    case KERNEL_LOG:
        return log(x);
    case KERNEL_SQRT:
        return sqrt(x);
    case KERNEL_ABS:
        return fabs(x);
    case KERNEL_RELU:
        return x > 0 || isnan(x) ? x : 0.0;  // nan stays nan, as numpy's maximum(x, 0)
    case KERNEL_GELU:
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / PI) * (x + 0.044715 * x * x * x)));
    case KERNEL_TANH:
        return tanh(x);
    case KERNEL_SIN:
        return sin(x);
    case KERNEL_COS:
        return cos(x);
    case KERNEL_SILU:
        return x / (1.0 + exp(-x));
    case KERNEL_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case KERNEL_FLOOR:
        return floor(x);
    case KERNEL_CEIL:
        return ceil(x);
    case KERNEL_ROUND:
        return nearbyint(x);  // the default rounding mode: to nearest, ties to even
    case KERNEL_LOGICAL_NOT:
        return x == 0;
    }
    ASSERT(!"unknown KernelUnary");
    return NAN;
}

// Beside the values above: an elementwise function's value and derivative are written together.
double kernel_unary_derivative(KernelUnary op, double x) {
    switch (op) {
    case KERNEL_NEG:
        return -1.0;
    case KERNEL_EXP:
        return exp(x);
    case KERNEL_LOG:
        return 1.0 / x;
    case KERNEL_SQRT:
        return 0.5 / sqrt(x);
    case KERNEL_ABS:
        return x > 0 ? 1.0 : x < 0 ? -1.0 : isnan(x) ? x : 0.0;
    case KERNEL_RELU:
        return x > 0 ? 1.0 : isnan(x) ? x : 0.0;
    case KERNEL_GELU: {
        // y = 0.5 x (1 + t), t = tanh(u), u = c (x + 0.044715 x^3), c = sqrt(2/pi):
        // y' = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2)
        double c = sqrt(2.0 / PI);
        double t = tanh(c * (x + 0.044715 * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    }
    case KERNEL_TANH: {
        double t = tanh(x);
        return 1.0 - t * t;
    }
    case KERNEL_SIN:
        return cos(x);
    case KERNEL_COS:
        return -sin(x);
    case KERNEL_SILU: {
        // y = x s, s = 1 / (1 + e^-x): y' = s + x s (1 - s)
        double sig = 1.0 / (1.0 + exp(-x));
        return sig + x * sig * (1.0 - sig);
    }
    case KERNEL_SIGMOID: {
        double sig = 1.0 / (1.0 + exp(-x));
        return sig * (1.0 - sig);
    }
    case KERNEL_FLOOR:
    case KERNEL_CEIL:
    case KERNEL_ROUND:
    case KERNEL_LOGICAL_NOT:
        break;  // flat, then a jump: their entries leave .grad NULL, and grad() refuses them
    }
    ASSERT(!"unknown KernelUnary");
    return NAN;
}

typedef struct UnaryJob {
    Tensor *out;
    const Tensor *a;
    KernelUnary op;
} UnaryJob;

static void unary_values(void *ctx, size_t begin, size_t end) {
    const UnaryJob *j = ctx;
    for (size_t i = begin; i < end; i++)
        j->out->data[i] = kernel_unary_apply(j->op, j->a->data[i]);
}

// out (same shape) = op(a)
void kernel_unary(Tensor *out, const Tensor *a, KernelUnary op) {
    expect_shape(out, &a->shape);
    expect_values(a);
    UnaryJob j = {.out = out, .a = a, .op = op};
    backend_for(a->size, min_items(1), unary_values, &j);
}

// ---------------------------------------------------------------- rows

typedef struct RowsJob {
    Tensor *out;
    const Tensor *x, *gamma, *beta;
    double eps;
    size_t d;
} RowsJob;

static void softmax_rows(void *ctx, size_t begin, size_t end) {
    const RowsJob *job = ctx;
    size_t d = job->d;
    for (size_t r = begin; r < end; r++) {
        const double *x = job->x->data + r * d;
        double *y = job->out->data + r * d;
        // subtract the row max first so exp() cannot overflow; an all -inf row keeps
        // max = -inf and -inf - -inf = nan, which is numpy's answer too
        double max = -INFINITY;
        for (size_t j = 0; j < d; j++)
            if (x[j] > max)
                max = x[j];
        double sum = 0.0;
        for (size_t j = 0; j < d; j++) {
            double t = x[j] - max;
            y[j] = t == -INFINITY ? 0.0 : exp(t);  // exp(-inf) is an exact 0: a masked score costs nothing
            sum += y[j];
        }
        for (size_t j = 0; j < d; j++)
            y[j] /= sum;
    }
}

// out (..., d) = softmax(a (..., d)) along the last axis
void kernel_softmax(Tensor *out, const Tensor *a) {
    expect_shape(out, &a->shape);
    expect_values(a);
    RowsJob job = {.out = out, .x = a, .d = last_dim(&a->shape)};
    backend_for(row_count(a), min_items(job.d), softmax_rows, &job);
}

static void layernorm_rows(void *ctx, size_t begin, size_t end) {
    const RowsJob *job = ctx;
    size_t d = job->d;
    for (size_t r = begin; r < end; r++) {
        const double *xr = job->x->data + r * d;
        double *y = job->out->data + r * d;
        LineStats l = line_stats(xr, d, 1, true, job->eps);
        for (size_t j = 0; j < d; j++)
            y[j] = (xr[j] * l.scale - l.mean) / l.sd * param_at(job->gamma, j) + param_at(job->beta, j);
    }
}

// out (..., d) = (x - mean) / sqrt(var + eps) * gamma (d) + beta (d), per row of x (..., d)
void kernel_layernorm(Tensor *out, const Tensor *x, const Tensor *gamma, const Tensor *beta,
                      double eps) {
    size_t d, rows;
    expect_norm(out, x, gamma, beta, &d, &rows);
    RowsJob job = {.out = out, .x = x, .gamma = gamma, .beta = beta, .eps = eps, .d = d};
    backend_for(rows, min_items(d), layernorm_rows, &job);
}

// out (..., d) = x / sqrt(mean(x^2) + eps) * gamma (d), each row of x (..., d) alone
void kernel_rmsnorm(Tensor *out, const Tensor *x, const Tensor *gamma, double eps) {
    expect_shape(out, &x->shape);
    expect_values(x);
    size_t d = last_dim(&x->shape), rows = row_count(x);
    expect_param(gamma, d);
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x->data + r * d;
        LineStats l = line_stats(xr, d, 1, false, eps);  // sd: the spread around 0, sqrt(mean(x^2) + eps)
        for (size_t j = 0; j < d; j++)
            out->data[r * d + j] = xr[j] * l.scale / l.sd * param_at(gamma, j);
    }
}

// out (..., d) = (x - mean_f) / sqrt(var_f + eps) * gamma (d) + beta (d), where mean_f and
// var_f of feature f run over every row of x (..., d)
void kernel_batchnorm(Tensor *out, const Tensor *x, const Tensor *gamma, const Tensor *beta,
                      double eps) {
    size_t d, rows;
    expect_norm(out, x, gamma, beta, &d, &rows);
    for (size_t f = 0; f < d; f++) {
        // feature f is the column x[0][f], x[1][f], ...: a line with step d
        LineStats l = line_stats(x->data + f, rows, d, true, eps);
        for (size_t r = 0; r < rows; r++)
            out->data[r * d + f] =
                (x->data[r * d + f] * l.scale - l.mean) / l.sd * param_at(gamma, f) + param_at(beta, f);
    }
}

// ---------------------------------------------------------------- reductions

bool kernel_reduce_shape(const Shape *a, int axis, bool keepdims, Shape *out) {
    Shape s = *a;
    if (axis == KERNEL_ALL_AXES) {
        for (size_t i = 0; i < s.rank; i++)
            s.dim[i] = 1;
        if (!keepdims)
            s.rank = 0;
    } else {
        if (axis < 0 || (size_t)axis >= a->rank)
            return false;
        s.dim[axis] = 1;
        if (!keepdims) {
            memmove(s.dim + axis, s.dim + axis + 1, (s.rank - (size_t)axis - 1) * sizeof(size_t));
            s.rank--;
        }
    }
    *out = s;
    return true;
}

// One value from the n values x[0], x[step], ..., x[(n - 1) * step], in that order.
static double reduce_line(const double *x, size_t n, size_t step, KernelReduce op) {
    if (op == KERNEL_SUM || op == KERNEL_MEAN || op == KERNEL_VAR) {
        double sum = line_sum(x, n, step, 1.0);
        if (op == KERNEL_SUM)
            return sum;
        double mean = sum / (double)n;  // nan for n = 0, as numpy
        return op == KERNEL_MEAN ? mean : line_var(x, n, step, 1.0, mean);
    }
    if (op == KERNEL_NORM)
        return line_norm(x, n, step);
    if (op == KERNEL_ALL || op == KERNEL_ANY) {
        // nan is nonzero, so it is true, as numpy's all and any count it
        for (size_t i = 0; i < n; i++)
            if ((x[i * step] != 0) == (op == KERNEL_ANY))
                return op == KERNEL_ANY;
        return op == KERNEL_ALL;
    }
    ASSERT(op == KERNEL_MAX || op == KERNEL_MIN || op == KERNEL_ARGMAX);
    // numpy raises on the max of nothing: the caller must have rejected an empty axis
    ASSERT(n > 0);
    size_t best = line_extreme(x, n, step, op == KERNEL_MIN);
    return op == KERNEL_ARGMAX ? (double)best : x[best * step];
}

// out (a without axis, or with it as 1) = op over axis of a; one value for KERNEL_ALL_AXES
void kernel_reduce(Tensor *out, const Tensor *a, int axis, KernelReduce op) {
    Shape dropped, kept;
    ASSERT(kernel_reduce_shape(&a->shape, axis, false, &dropped));
    ASSERT(kernel_reduce_shape(&a->shape, axis, true, &kept));
    expect_values(out);
    ASSERT(shape_equal(&out->shape, &dropped) || shape_equal(&out->shape, &kept));
    expect_values(a);
    // a viewed as (outer, n, inner); the reduced axis is the middle one
    size_t outer = 1, n = a->size, inner = 1;
    if (axis != KERNEL_ALL_AXES) {
        outer = dims_product(&a->shape, 0, (size_t)axis);
        n = a->shape.dim[axis];
        inner = dims_product(&a->shape, (size_t)axis + 1, a->shape.rank);
    }
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++)
            out->data[o * inner + i] = reduce_line(a->data + o * n * inner + i, n, inner, op);
}

// ---------------------------------------------------------------- builders

// out (n, n): 0 where key j <= query i, -inf where the key lies in the future
void kernel_causal_mask(Tensor *out) {
    expect_values(out);
    ASSERT(out->shape.rank == 2 && out->shape.dim[0] == out->shape.dim[1]);
    size_t n = out->shape.dim[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            out->data[i * n + j] = j <= i ? 0.0 : -INFINITY;
}

// out (n, m) = i - j
void kernel_relative_positions(Tensor *out) {
    expect_values(out);
    ASSERT(out->shape.rank == 2);
    size_t n = out->shape.dim[0], m = out->shape.dim[1];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            out->data[i * m + j] = (double)i - (double)j;
}

// out (n) = 0, 1, ..., n - 1
void kernel_arange(Tensor *out) {
    expect_values(out);
    ASSERT(out->shape.rank == 1);
    for (size_t i = 0; i < out->size; i++)
        out->data[i] = (double)i;
}

// out (n, d): column 2i is sin(pos / base^(2i/d)), column 2i + 1 the cos of the same angle
void kernel_sinusoidal(Tensor *out, double base) {
    expect_values(out);
    ASSERT(out->shape.rank == 2);
    size_t n = out->shape.dim[0], d = out->shape.dim[1];
    for (size_t pos = 0; pos < n; pos++)
        for (size_t c = 0; c < d; c++) {
            double angle = (double)pos / pow(base, (double)(c - c % 2) / (double)d);
            out->data[pos * d + c] = c % 2 == 0 ? sin(angle) : cos(angle);
        }
}

// out (..., n, d) = x (..., n, d) with each pair (2i, 2i + 1) of row r turned by the angle
// positions (n) [r] * base^(-2i/d); leading axes (heads) share the positions
void kernel_rope(Tensor *out, const Tensor *x, const Tensor *positions, double base) {
    expect_shape(out, &x->shape);
    expect_values(x);
    kernel_fill(out, 0.0);
    rope_turn(out, x, positions, base, false);
}

// out (h) = 2^(-8k/h) for k = 1..h
void kernel_alibi_slopes(Tensor *out) {
    expect_values(out);
    ASSERT(out->shape.rank == 1);
    size_t h = out->size;
    for (size_t k = 1; k <= h; k++)
        out->data[k - 1] = pow(2.0, -8.0 * (double)k / (double)h);
}

// out (..., n, n) = I, repeated over the leading axes
void kernel_identity(Tensor *out) {
    expect_values(out);
    const Shape *s = &out->shape;
    ASSERT(s->rank >= 2 && s->dim[s->rank - 1] == s->dim[s->rank - 2]);
    size_t n = s->dim[s->rank - 1];
    for (size_t i = 0; i < out->size; i++) {
        size_t within = i % (n * n);
        out->data[i] = within / n == within % n ? 1.0 : 0.0;
    }
}

typedef struct FillJob {
    double *out;
    double value;
} FillJob;

static void fill_values(void *ctx, size_t begin, size_t end) {
    const FillJob *j = ctx;
    if (j->value == 0 && !signbit(j->value)) {  // +0.0 is the double whose bytes are all zero
        memset(j->out + begin, 0, (end - begin) * sizeof(double));
        return;
    }
    for (size_t i = begin; i < end; i++)
        j->out[i] = j->value;
}

void kernel_fill(Tensor *out, double value) {
    expect_values(out);
    FillJob j = {.out = out->data, .value = value};
    backend_for(out->size, min_items(1), fill_values, &j);
}

// splitmix64 (Steele, Lea, Flood 2014): one 64-bit step, then the top 53 bits as u in [0, 1).
static double splitmix64_unit(uint64_t *state) {
    *state += UINT64_C(0x9E3779B97F4A7C15);
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

typedef struct RandomJob {
    Tensor *out;
    KernelDistribution dist;
    double scale;
    uint64_t seed;
} RandomJob;

// Values begin..end-1 (uniform) or pairs begin..end-1 (normal). splitmix64's state after i
// draws is seed + i * 0x9E3779B97F4A7C15, so a chunk starts where it falls, and every value is
// the one a single pass would give.
static void random_chunk(void *ctx, size_t begin, size_t end) {
    const RandomJob *j = ctx;
    double *v = j->out->data;
    size_t draws = j->dist == KERNEL_NORMAL ? 2 * begin : begin;
    uint64_t state = j->seed + (uint64_t)draws * UINT64_C(0x9E3779B97F4A7C15);
    if (j->dist == KERNEL_UNIT) {
        for (size_t i = begin; i < end; i++)
            v[i] = splitmix64_unit(&state);
        return;
    }
    if (j->dist == KERNEL_UNIFORM) {
        for (size_t i = begin; i < end; i++)
            v[i] = j->scale * (2.0 * splitmix64_unit(&state) - 1.0);
        return;
    }
    for (size_t p = begin; p < end; p++) {
        // Box-Muller; 1 - u1 lies in (0, 1], so the log is finite
        double u1 = splitmix64_unit(&state), u2 = splitmix64_unit(&state);
        double r = sqrt(-2.0 * log(1.0 - u1));
        v[2 * p] = r * cos(2.0 * PI * u2) * j->scale;
        if (2 * p + 1 < j->out->size)
            v[2 * p + 1] = r * sin(2.0 * PI * u2) * j->scale;
    }
}

// out (any shape) = uniform on [-scale, scale) or [0, 1), or normal(0, scale), the same for
// every seed
void kernel_fill_random(Tensor *out, KernelDistribution dist, double scale, uint64_t seed) {
    expect_values(out);
    ASSERT(dist == KERNEL_UNIFORM || dist == KERNEL_NORMAL || dist == KERNEL_UNIT);
    RandomJob j = {.out = out, .dist = dist, .scale = scale, .seed = seed};
    size_t items = dist == KERNEL_NORMAL ? (out->size + 1) / 2 : out->size;
    backend_for(items, min_items(dist == KERNEL_NORMAL ? 2 : 1), random_chunk, &j);
}

// out (any shape) = whole numbers 0 .. vocab - 1, one draw each, in reading order
void kernel_fill_tokens(Tensor *out, uint64_t vocab, uint64_t seed) {
    expect_values(out);
    ASSERT(vocab > 0);
    uint64_t state = seed;
    for (size_t i = 0; i < out->size; i++) {
        double id = floor(splitmix64_unit(&state) * (double)vocab);
        out->data[i] = id < (double)vocab ? id : (double)(vocab - 1);  // u * vocab may round up to vocab
    }
}

// ---------------------------------------------------------------- loss

// out (...) = logsumexp(logits (..., V)) - logits[target], targets (...)
void kernel_cross_entropy(Tensor *out, const Tensor *logits, const Tensor *targets) {
    expect_shape(out, &targets->shape);
    expect_values(logits);
    expect_values(targets);
    const Shape *ls = &logits->shape;
    ASSERT(ls->rank == targets->shape.rank + 1);
    for (size_t i = 0; i < targets->shape.rank; i++)
        ASSERT(ls->dim[i] == targets->shape.dim[i]);
    size_t v = last_dim(ls);
    for (size_t r = 0; r < targets->size; r++) {
        const double *x = logits->data + r * v;
        size_t t = index_value(targets->data[r], v);
        // log(sum exp(x)) = max + log(sum exp(x - max)): no exp() can overflow
        double max, sum = row_exp_sum(x, v, &max);
        out->data[r] = max + log(sum) - x[t];
    }
}
