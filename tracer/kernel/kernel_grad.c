// kernel_grad: vector-Jacobian products of the kernel's operations (see kernel_grad.h).
//
// Each function adds into din and never writes it otherwise, so an input used several times
// gathers every use. Sums run in index order, as in kernel.c, so the digits never change.
// Loops whose items (values, rows, lines) write places of din no other item writes are split
// among threads through backend_for, as the forward kernels are; each item is computed as on
// one thread. A loop where several items add into one place (a broadcast input's gradient, a
// parameter of a normalisation) stays on the calling thread, so those sums keep their order;
// but a bias repeated over rows splits its values among threads, each summing its rows in order.
#include "kernel_grad.h"

#include <math.h>
#include <string.h>

#include "backend.h"
#include "kernel_private.h"
#include "util.h"

// What a derivative's loop reads, for backend_for: its items begin..end-1 add into din.
typedef struct GradJob {
    double *din;
    const double *dout, *x;  // x: the input (the output, for softmax)
    const Tensor *a, *b, *gamma;
    size_t input, d;         // d: values in a row
    size_t rows;             // a gradient repeated over rows: how many
    size_t param_step;       // 0: a parameter given as one number gathers every element
    double eps;
    KernelUnary unary;
    KernelBinary binary;
    Walk walk;
} GradJob;

// din and dout exist with values and din has the shape of the input it belongs to.
static void expect_grad(const Tensor *din, const Shape *input, const Tensor *dout) {
    expect_shape(din, input);
    expect_values(dout);
}

// ---------------------------------------------------------------- elementwise

// d(a op b)/d(input) at one element, times the upstream g.
static double binary_partial(KernelBinary op, size_t input, double g, double a, double b) {
    switch (op) {
    case KERNEL_ADD:
        return g;
    case KERNEL_SUB:
        return input == 0 ? g : -g;
    case KERNEL_MUL:
        return input == 0 ? g * b : g * a;
    case KERNEL_DIV:
        return input == 0 ? g / b : -g * a / (b * b);
    case KERNEL_POW:
        if (input == 0)  // b a^(b-1); a constant exponent 0 has the derivative 0 everywhere
            return b == 0 ? 0.0 : g * b * pow(a, b - 1.0);
        // a^b log(a): 0^b is 0 for b > 0 and 1 for b = 0, flat in b there as PyTorch takes it
        return a == 0 && b >= 0 ? 0.0 : g * pow(a, b) * log(a);
    case KERNEL_MOD:  // a % b = a - (a // b) * b, the quotient flat between its jumps (as PyTorch)
        return input == 0 ? g : -g * kernel_binary_apply(KERNEL_FLOOR_DIV, a, b);
    case KERNEL_EQ:
    case KERNEL_NE:
    case KERNEL_LT:
    case KERNEL_LE:
    case KERNEL_GT:
    case KERNEL_MAXIMUM:
    case KERNEL_MINIMUM: {
        // The input that is taken gets g; two equal inputs share it, g / 2 each (as PyTorch).
        double mine = input == 0 ? a : b, other = input == 0 ? b : a;
        if (mine == other)
            return g / 2;
        bool taken = op == KERNEL_MAXIMUM ? mine > other : mine < other;
        return taken || isnan(mine) ? g : 0.0;
    }
    case KERNEL_GE:
    case KERNEL_FLOOR_DIV:
    case KERNEL_AND:
    case KERNEL_OR:
        break;  // comparisons, // and the logical operators leave .grad NULL in their entries: grad() refuses to pass through them
    }
    ASSERT(!"no derivative for this KernelBinary");
    return NAN;
}

static void binary_grad_values(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    Walk w = j->walk;
    walk_seek(&w, begin);
    for (size_t i = begin; i < end; i++, walk_next(&w))
        j->din[w.off[j->input]] +=
            binary_partial(j->binary, j->input, j->dout[i], j->a->data[w.off[0]], j->b->data[w.off[1]]);
}

// din's values repeated along the leading axes of the broadcast shape s and whole along the
// others, as a bias added to every row is: (d,) or (1, d) against (n, d).
static bool repeated_over_rows(const Shape *in, const Shape *s) {
    size_t lead = 0;
    while (lead < in->rank && in->dim[lead] == 1)
        lead++;
    for (size_t k = lead; k < in->rank; k++)
        if (in->dim[k] != s->dim[s->rank - in->rank + k])
            return false;
    return true;
}

// Values begin..end-1 of a din repeated over rows (j->d values a row): each gathers its rows
// in their order, as the walk over every element adds them on one thread.
static void binary_grad_columns(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    for (size_t q = 0; q < j->rows; q++) {
        Walk w = j->walk;
        walk_seek(&w, q * j->d + begin);
        for (size_t c = begin; c < end; c++, walk_next(&w))
            j->din[c] += binary_partial(j->binary, j->input, j->dout[q * j->d + c], j->a->data[w.off[0]],
                                        j->b->data[w.off[1]]);
    }
}

// din (a's or b's shape) += dout (broadcast shape) * d(a op b)/d(input), summed over the
// copies broadcasting made of each element
void kernel_grad_binary(Tensor *din, size_t input, const Tensor *dout, const Tensor *a,
                        const Tensor *b, KernelBinary op) {
    ASSERT(input < 2);
    Shape s;
    ASSERT(kernel_broadcast_shape(&a->shape, &b->shape, &s));
    expect_grad(din, input == 0 ? &a->shape : &b->shape, dout);
    ASSERT(shape_equal(&dout->shape, &s));
    expect_values(a);
    expect_values(b);
    if (dout->size == 0)
        return;
    GradJob j = {.din = din->data, .dout = dout->data, .a = a, .b = b, .input = input, .binary = op};
    walk_init(&j.walk, &s, &a->shape, &b->shape);
    if (shape_equal(&din->shape, &s)) {  // one element of dout to each of din
        backend_for(dout->size, min_items(1), binary_grad_values, &j);
    } else if (din->size > 0 && repeated_over_rows(&din->shape, &s)) {
        // a bias's gradient: its values split among threads, each summed over the rows in order
        j.d = din->size;
        j.rows = dout->size / din->size;
        backend_for(j.d, min_items(j.rows), binary_grad_columns, &j);
    } else {
        binary_grad_values(&j, 0, dout->size);
    }
}

typedef struct TernaryGrad {
    double *din;
    size_t input;
    const double *dout, *t0, *t1, *t2;
} TernaryGrad;

// where(cond, a, b): a's share is g where cond holds, b's where it does not; cond has none.
static void grad_where_one(void *ctx, size_t i, size_t o0, size_t o1, size_t o2) {
    TernaryGrad *t = ctx;
    bool holds = t->t0[o0] != 0;
    if (t->input == 1 && holds)
        t->din[o1] += t->dout[i];
    else if (t->input == 2 && !holds)
        t->din[o2] += t->dout[i];
}

// clip(x, lo, hi), as PyTorch's clamp: x's share is g where lo <= x <= hi, lo's where x < lo
// < hi, hi's where x > hi or hi < lo (hi wins when the bounds cross).
static void grad_clip_one(void *ctx, size_t i, size_t o0, size_t o1, size_t o2) {
    TernaryGrad *t = ctx;
    double x = t->t0[o0], lo = t->t1[o1], hi = t->t2[o2];
    if (t->input == 0 && x >= lo && x <= hi)
        t->din[o0] += t->dout[i];
    else if (t->input == 1 && x < lo && lo < hi)
        t->din[o1] += t->dout[i];
    else if (t->input == 2 && (x > hi || hi < lo))
        t->din[o2] += t->dout[i];
}

static void grad_ternary(Tensor *din, size_t input, const Tensor *dout, const Tensor *t0, const Tensor *t1,
                         const Tensor *t2, void (*one)(void *, size_t, size_t, size_t, size_t)) {
    ASSERT(input < 3);
    Shape s;
    ASSERT(kernel_broadcast_shape3(&t0->shape, &t1->shape, &t2->shape, &s));
    const Tensor *in[3] = {t0, t1, t2};
    expect_grad(din, &in[input]->shape, dout);
    ASSERT(shape_equal(&dout->shape, &s));
    TernaryGrad t = {din->data, input, dout->data, t0->data, t1->data, t2->data};
    walk3(&s, &t0->shape, &t1->shape, &t2->shape, one, &t);
}

// da or db (its shape) += dout where cond picks it, summed over broadcast copies
void kernel_grad_where(Tensor *din, size_t input, const Tensor *dout, const Tensor *cond, const Tensor *a,
                       const Tensor *b) {
    ASSERT(input == 1 || input == 2);
    grad_ternary(din, input, dout, cond, a, b, grad_where_one);
}

// dx, dlo or dhi (its shape) += dout where that input is the result, summed over broadcast copies
void kernel_grad_clip(Tensor *din, size_t input, const Tensor *dout, const Tensor *x, const Tensor *lo,
                      const Tensor *hi) {
    grad_ternary(din, input, dout, x, lo, hi, grad_clip_one);
}

static void unary_grad_values(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    for (size_t i = begin; i < end; i++)
        j->din[i] += j->dout[i] * kernel_unary_derivative(j->unary, j->x[i]);
}

// dx (same shape) += dout * op'(x)
void kernel_grad_unary(Tensor *din, const Tensor *dout, const Tensor *x, KernelUnary op) {
    expect_grad(din, &x->shape, dout);
    expect_values(x);
    ASSERT(shape_equal(&dout->shape, &x->shape));
    GradJob j = {.din = din->data, .dout = dout->data, .x = x->data, .unary = op};
    backend_for(x->size, min_items(1), unary_grad_values, &j);
}

// ---------------------------------------------------------------- matrix product

// Multiply-adds of one entry below which a gradient's product runs in the loop below.
#define KERNEL_GRAD_PRODUCT_MIN_WORK ((size_t)1 << 11)

// The reference: one batch entry's gradient, each element summed in index order and then
// added to din. input 0: da (n, k) += dc (n, m) @ b^T (m, k), summed over m;
// input 1: db (k, m) += a^T (k, n) @ dc (n, m), summed over n.
static void grad_product_loop(double *din, size_t input, const double *dc, const double *a, const double *b,
                              size_t n, size_t k, size_t m) {
    if (input == 0) {
        for (size_t i = 0; i < n; i++)
            for (size_t kk = 0; kk < k; kk++) {
                double sum = 0.0;
                for (size_t j = 0; j < m; j++)
                    sum += dc[i * m + j] * b[kk * m + j];
                din[i * k + kk] += sum;
            }
        return;
    }
    for (size_t kk = 0; kk < k; kk++)
        for (size_t j = 0; j < m; j++) {
            double sum = 0.0;
            for (size_t i = 0; i < n; i++)
                sum += a[i * k + kk] * dc[i * m + j];
            din[kk * m + j] += sum;
        }
}

// Blocks of a gradient read (whether each holds only +0.0) or added to (din += c), on threads.
typedef struct SumJob {
    double *din;
    const double *c;
    bool fresh;
    BackendBlocks blocks;
    bool plus_zero[BACKEND_MAX_BLOCKS];
} SumJob;

static void plus_zero_blocks(void *ctx, size_t begin, size_t end) {
    SumJob *j = ctx;
    for (size_t b = begin; b < end; b++) {
        const double *x = j->din + b * j->blocks.size;
        size_t n = backend_block_length(&j->blocks, b);
        bool zero = true;
        for (size_t i = 0; i < n && zero; i++)
            zero = x[i] == 0.0 && !signbit(x[i]);
        j->plus_zero[b] = zero;
    }
}

// True when every value is +0.0 (bits, not ==: -0.0 + s is not always s).
static bool all_plus_zero(double *x, size_t count) {
    SumJob j = {.din = x, .blocks = backend_blocks(count)};
    backend_for(j.blocks.count, 1, plus_zero_blocks, &j);
    for (size_t b = 0; b < j.blocks.count; b++)
        if (!j.plus_zero[b])
            return false;
    return true;
}

static void add_values(void *ctx, size_t begin, size_t end) {
    const SumJob *j = ctx;
    for (size_t i = begin; i < end; i++)
        j->din[i] = (j->fresh ? 0.0 : j->din[i]) + j->c[i];
}

// The same entry through the installed product (backend.h), with the same bits: the operands
// are read in place, b^T and a^T as b and a with their steps swapped, and each element is the
// backend's sum 0.0 + x[r][0] y[0][c] + x[r][1] y[1][c] + ..., the loop's sum term for term
// (a product of two doubles is the same in either order). It is then added to din as the loop
// adds it: through *scratch (one entry's values, allocated on first need), or, when din holds
// only +0.0, written into din and added to +0.0 there, which changes only a -0.0 (to +0.0).
// Without memory for the scratch, the loop.
static void grad_product_fast(double *din, double **scratch, size_t input, const double *dc, const double *a,
                              const double *b, size_t n, size_t k, size_t m) {
    size_t rows = input == 0 ? n : k, inner = input == 0 ? m : n, cols = input == 0 ? k : m;
    size_t count = rows * cols;
    if (count == 0)
        return;
    BackendMatrix x = input == 0 ? (BackendMatrix){.data = dc, .row_step = m, .col_step = 1}   // dc (n, m)
                                 : (BackendMatrix){.data = a, .row_step = 1, .col_step = k};   // a^T (k, n)
    BackendMatrix y = input == 0 ? (BackendMatrix){.data = b, .row_step = 1, .col_step = m}    // b^T (m, k)
                                 : (BackendMatrix){.data = dc, .row_step = m, .col_step = 1};  // dc (n, m)
    bool fresh = all_plus_zero(din, count);
    if (!fresh && !*scratch)
        *scratch = util_malloc(count * sizeof(double));
    if (!fresh && !*scratch) {
        grad_product_loop(din, input, dc, a, b, n, k, m);
        return;
    }
    double *c = fresh ? din : *scratch;
    BackendOutput out = {.data = c, .row_step = cols};
    backend_product(&out, &x, &y, (const size_t[2]){1, 1}, rows, inner, cols);
    SumJob j = {.din = din, .c = c, .fresh = fresh};
    backend_for(count, min_items(1), add_values, &j);
}

// din (a's or b's shape) += the gradient of out (..., n, m) = a (..., n, k) @ b (..., k, m).
// Batch entries run in order, so an input broadcast along the batch gathers its entries'
// sums one after the other, in the order of the batch.
void kernel_grad_matmul(Tensor *din, size_t input, const Tensor *dout, const Tensor *a, const Tensor *b) {
    ASSERT(input < 2);
    Shape s;
    ASSERT(kernel_matmul_shape(&a->shape, &b->shape, &s));
    expect_grad(din, input == 0 ? &a->shape : &b->shape, dout);
    ASSERT(shape_equal(&dout->shape, &s));
    expect_values(a);
    expect_values(b);
    MatView va = mat_view(&a->shape, true), vb = mat_view(&b->shape, false);
    size_t n = va.rows, k = va.cols, m = vb.cols;
    Shape batch;
    ASSERT(kernel_broadcast_shape(&va.batch, &vb.batch, &batch));
    size_t blocks = dims_product(&batch, 0, batch.rank);
    size_t block_in = input == 0 ? n * k : k * m;
    // a product too small to be packed (backend.h's fast product runs those in the loop's
    // order anyway) is not worth the scratch and the second pass: the loop adds it in place
    bool fast = backend_installed() != NULL && n * k * m >= KERNEL_GRAD_PRODUCT_MIN_WORK;
    double *scratch = NULL;
    Walk w;
    walk_init(&w, &batch, &va.batch, &vb.batch);
    for (size_t i = 0; i < blocks; i++, walk_next(&w)) {
        double *d = din->data + w.off[input] * block_in;
        const double *dc = dout->data + i * n * m, *ae = a->data + w.off[0] * n * k, *be = b->data + w.off[1] * k * m;
        if (fast)
            grad_product_fast(d, &scratch, input, dc, ae, be, n, k, m);
        else
            grad_product_loop(d, input, dc, ae, be, n, k, m);
    }
    util_free(scratch);
}

// Rows q = bl * n + i of din (blocks of n rows of d = m values); j->input holds n.
static void transpose_grad_rows(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    size_t n = j->input, m = j->d;
    for (size_t q = begin; q < end; q++) {
        size_t bl = q / n, i = q % n;
        for (size_t c = 0; c < m; c++)
            j->din[q * m + c] += j->dout[bl * n * m + c * n + i];
    }
}

// din (..., n, m) += dout (..., m, n) with its last two axes swapped back
void kernel_grad_transpose(Tensor *din, const Tensor *dout) {
    expect_values(din);
    expect_values(dout);
    ASSERT(din->size == dout->size && din->shape.rank == dout->shape.rank);
    const Shape *s = &din->shape;
    if (s->rank < 2) {
        kernel_grad_identity(din, dout);
        return;
    }
    size_t n = s->dim[s->rank - 2], m = s->dim[s->rank - 1];
    ASSERT(dout->shape.dim[s->rank - 2] == m && dout->shape.dim[s->rank - 1] == n);
    size_t blocks = dims_product(s, 0, s->rank - 2);
    GradJob j = {.din = din->data, .dout = dout->data, .d = m, .input = n};
    backend_for(blocks * n, min_items(m), transpose_grad_rows, &j);
}

// da [..] += dout [a.dim[axes[0]], ...]: each value of dout added where kernel_permute read it
void kernel_grad_permute(Tensor *din, const Tensor *dout, const size_t *axes) {
    expect_values(din);
    expect_values(dout);
    ASSERT(din->size == dout->size && din->shape.rank == dout->shape.rank);
    size_t idx[TENSOR_MAX_RANK];
    for (size_t i = 0; i < dout->size; i++) {
        shape_unflatten(&dout->shape, i, idx);
        din->data[permuted_offset(&din->shape, axes, idx)] += dout->data[i];
    }
}

// ---------------------------------------------------------------- rows

static void softmax_grad_rows(void *ctx, size_t begin, size_t end) {
    const GradJob *job = ctx;
    size_t d = job->d;
    for (size_t r = begin; r < end; r++) {
        const double *w = job->x + r * d, *g = job->dout + r * d;
        double dot = 0.0;
        for (size_t j = 0; j < d; j++)
            dot += g[j] * w[j];
        for (size_t j = 0; j < d; j++)
            job->din[r * d + j] += w[j] * (g[j] - dot);
    }
}

// dx (..., d) += w * (dout - sum(dout * w)) per row, w = softmax(x) (..., d)
void kernel_grad_softmax(Tensor *din, const Tensor *dout, const Tensor *out) {
    expect_grad(din, &out->shape, dout);
    expect_values(out);
    ASSERT(shape_equal(&dout->shape, &out->shape));
    GradJob j = {.din = din->data, .dout = dout->data, .x = out->data, .d = last_dim(&out->shape)};
    backend_for(row_count(out), min_items(j.d), softmax_grad_rows, &j);
}

// One line a normalisation runs over: a row of layernorm, a feature (column) of batchnorm.
typedef struct NormLine {
    const double *x, *g;  // the line of x and of dout
    size_t count, step;
    double eps;
} NormLine;

// gamma at element j of a line: layernorm's gamma varies along the line (feature SIZE_MAX),
// batchnorm has one gamma per line (its feature).
static double line_gamma(const Tensor *gamma, size_t feature, size_t j) {
    return param_at(gamma, feature == SIZE_MAX ? j : feature);
}

// Adds the line's gradient into dx (input 0), dgamma (1) or dbeta (2), din_step apart (0: a
// scalar parameter gathers every element).
static void norm_line_grad(const NormLine *l, size_t input, const Tensor *gamma, size_t feature,
                           double *din, size_t din_step) {
    // As the forward pass reads the line; the true sd is sd / scale.
    LineStats st = line_stats(l->x, l->count, l->step, true, l->eps);
    double mean = st.mean, sd = st.sd, scale = st.scale;
    if (input == 0) {
        double mg = 0.0, mgx = 0.0;
        for (size_t j = 0; j < l->count; j++) {
            double gj = l->g[j * l->step] * line_gamma(gamma, feature, j);
            mg += gj;
            mgx += gj * (l->x[j * l->step] * scale - mean) / sd;
        }
        mg /= (double)l->count;
        mgx /= (double)l->count;
        for (size_t j = 0; j < l->count; j++) {
            double xhat = (l->x[j * l->step] * scale - mean) / sd;
            din[j * din_step] += (l->g[j * l->step] * line_gamma(gamma, feature, j) - mg - xhat * mgx) / sd * scale;
        }
        return;
    }
    for (size_t j = 0; j < l->count; j++) {
        double xhat = (l->x[j * l->step] * scale - mean) / sd;
        din[j * din_step] += input == 1 ? l->g[j * l->step] * xhat : l->g[j * l->step];
    }
}

// What both normalisations check: features d, rows, and where a parameter input writes.
static void expect_norm_grad(const Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                             const Tensor *gamma, size_t *d, size_t *rows) {
    ASSERT(input < 3);
    expect_values(x);
    expect_values(dout);
    ASSERT(shape_equal(&dout->shape, &x->shape));
    *d = last_dim(&x->shape);
    *rows = row_count(x);
    expect_param(gamma, *d);
    if (input == 0)
        expect_shape(din, &x->shape);
    else
        expect_param(din, *d);
}

// The rows of a normalisation's gradient through rows_fn: x's rows on threads, each its own
// row of dx; a parameter's on the calling thread, every row adding into it in row order.
static void norm_grad(Tensor *din, size_t input, const Tensor *dout, const Tensor *x, const Tensor *gamma,
                      double eps, BackendLoopFn *rows_fn) {
    size_t d, rows;
    expect_norm_grad(din, input, dout, x, gamma, &d, &rows);
    GradJob j = {.din = din->data, .dout = dout->data, .x = x->data, .gamma = gamma, .input = input, .d = d,
                 .param_step = din->shape.rank == 0 ? 0 : 1, .eps = eps};
    if (input == 0)
        backend_for(rows, min_items(d), rows_fn, &j);
    else
        rows_fn(&j, 0, rows);
}

static void layernorm_grad_rows(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    size_t d = j->d;
    for (size_t r = begin; r < end; r++) {
        NormLine l = {.x = j->x + r * d, .g = j->dout + r * d, .count = d, .step = 1, .eps = j->eps};
        norm_line_grad(&l, j->input, j->gamma, SIZE_MAX, j->input == 0 ? j->din + r * d : j->din,
                       j->input == 0 ? 1 : j->param_step);
    }
}

// din += the gradient of layernorm(x (..., d), gamma, beta, eps) for input 0 (x), 1 or 2
void kernel_grad_layernorm(Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                           const Tensor *gamma, double eps) {
    norm_grad(din, input, dout, x, gamma, eps, layernorm_grad_rows);
}

static void rmsnorm_grad_rows(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    size_t d = j->d;
    for (size_t r = begin; r < end; r++) {
        const double *xr = j->x + r * d, *gr = j->dout + r * d;
        // As the forward pass reads the row, and scaled too when rms^3 below would overflow;
        // the true rms is rms / scale.
        LineStats st = line_stats(xr, d, 1, false, j->eps);
        if (isinf(st.sd * st.sd * st.sd))
            st = line_stats_scaled(xr, d, 1, false, j->eps);
        double rms = st.sd, scale = st.scale;
        if (j->input == 1) {
            for (size_t c = 0; c < d; c++)
                j->din[c * j->param_step] += gr[c] * (xr[c] * scale) / rms;
            continue;
        }
        double mgx = 0;  // mean over the row of g x, with g = dout * gamma
        for (size_t c = 0; c < d; c++)
            mgx += gr[c] * param_at(j->gamma, c) * (xr[c] * scale);
        mgx /= (double)d;
        for (size_t c = 0; c < d; c++)
            j->din[r * d + c] +=
                (gr[c] * param_at(j->gamma, c) / rms - (xr[c] * scale) * mgx / (rms * rms * rms)) * scale;
    }
}

// din += the gradient of rmsnorm(x (..., d), gamma, eps) for input 0 (x) or 1 (gamma)
void kernel_grad_rmsnorm(Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                         const Tensor *gamma, double eps) {
    ASSERT(input < 2);
    norm_grad(din, input, dout, x, gamma, eps, rmsnorm_grad_rows);
}

// din += the gradient of batchnorm(x (..., d), gamma, beta, eps) for input 0 (x), 1 or 2
void kernel_grad_batchnorm(Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                           const Tensor *gamma, double eps) {
    size_t d, rows;
    expect_norm_grad(din, input, dout, x, gamma, &d, &rows);
    for (size_t f = 0; f < d; f++) {
        NormLine l = {.x = x->data + f, .g = dout->data + f, .count = rows, .step = d, .eps = eps};
        if (input == 0)
            norm_line_grad(&l, 0, gamma, f, din->data + f, d);
        else
            norm_line_grad(&l, input, gamma, f, din->data + (din->shape.rank == 0 ? 0 : f), 0);
    }
}

// ---------------------------------------------------------------- reductions

// Lines q = o * inner + i of reduce's gradient (n values, inner apart), each its own places
// of din.
typedef struct ReduceGrad {
    double *din;
    const double *dout, *x;
    size_t n, inner;
    KernelReduce op;
} ReduceGrad;

static void reduce_grad_lines(void *ctx, size_t begin, size_t end) {
    const ReduceGrad *j = ctx;
    size_t n = j->n, inner = j->inner;
    for (size_t q = begin; q < end; q++) {
        size_t o = q / inner, i = q % inner;
        const double *line = j->x + o * n * inner + i;
        double *dline = j->din + o * n * inner + i;
        double g = j->dout[q];
        if (j->op == KERNEL_MAX || j->op == KERNEL_MIN) {
            dline[line_extreme(line, n, inner, j->op == KERNEL_MIN) * inner] += g;
            continue;
        }
        if (j->op == KERNEL_NORM) {
            // d|x|/dx = x / |x|; at |x| = 0 (every value 0) it is taken as 0, as PyTorch's. A
            // norm below 2^-1022 has lost digits (the norm of [5e-324, 5e-324] is 5e-324), so
            // the quotient is taken of the scaled values: 0.7071 each, not 1.
            LineNorm l = line_norm_parts(line, n, inner);
            double norm = l.root / l.scale / l.more;
            for (size_t t = 0; t < n; t++) {
                double share = norm >= DBL_MIN ? line[t * inner] / norm : line[t * inner] * l.scale * l.more / l.root;
                dline[t * inner] += norm == 0.0 ? 0.0 : g * share;
            }
            continue;
        }
        double mean = line_sum(line, n, inner, 1.0) / (double)n;
        for (size_t t = 0; t < n; t++) {
            double v = line[t * inner];
            dline[t * inner] += j->op == KERNEL_SUM    ? g
                                : j->op == KERNEL_MEAN ? g / (double)n
                                                       : g * 2.0 * (v - mean) / (double)n;
        }
    }
}

// dx (x's shape) += the gradient of reduce(x, axis) with dout of the reduced shape
void kernel_grad_reduce(Tensor *din, const Tensor *dout, const Tensor *x, int axis, KernelReduce op) {
    ASSERT(op != KERNEL_ARGMAX);
    expect_grad(din, &x->shape, dout);
    expect_values(x);
    size_t outer = 1, n = x->size, inner = 1;
    if (axis != KERNEL_ALL_AXES) {
        ASSERT(axis >= 0 && (size_t)axis < x->shape.rank);
        outer = dims_product(&x->shape, 0, (size_t)axis);
        n = x->shape.dim[axis];
        inner = dims_product(&x->shape, (size_t)axis + 1, x->shape.rank);
    }
    ASSERT(dout->size == outer * inner);
    ReduceGrad j = {.din = din->data, .dout = dout->data, .x = x->data, .n = n, .inner = inner, .op = op};
    backend_for(outer * inner, min_items(n), reduce_grad_lines, &j);
}

// ---------------------------------------------------------------- indexing and reshaping

// Adds the part of dout that index_copy took from axes axis.. of dst; returns the end read.
static const double *index_scatter(double *dst, const double *src, const Shape *s, const size_t *tail,
                                   const KernelAxisIndex *index, size_t n_index, size_t axis) {
    if (axis == n_index) {
        for (size_t t = 0; t < tail[axis]; t++)
            dst[t] += src[t];
        return src + tail[axis];
    }
    AxisPick pick = axis_pick(&index[axis], s->dim[axis]);
    for (size_t k = 0; k < pick.count; k++)
        src = index_scatter(dst + axis_pick_at(&pick, k) * tail[axis + 1], src, s, tail, index, n_index,
                            axis + 1);
    return src;
}

// dx (x's shape) += dout (the indexed shape) scattered back to the places it was picked from,
// in the order kernel_index read them (new axes read nothing; numpy's rule may put a gathered
// axis first)
void kernel_grad_index(Tensor *din, const Tensor *dout, const KernelAxisIndex *index, size_t n_index) {
    Shape s;
    ASSERT(kernel_index_shape(&din->shape, index, n_index, &s));
    expect_grad(din, &din->shape, dout);
    ASSERT(shape_equal(&dout->shape, &s));
    size_t tail[TENSOR_MAX_RANK + 1];
    KernelAxisIndex own[TENSOR_MAX_RANK];
    size_t n_own, list = index_own_axes(&din->shape, index, n_index, tail, own, &n_own);
    const double *end = dout->data;
    if (list != KERNEL_NO_AXIS && list_moves_first(index, n_index)) {
        const KernelAxisIndex gather = own[list];
        for (size_t k = 0; k < gather.n_list; k++) {
            own[list] = (KernelAxisIndex){.kind = KERNEL_INDEX_AT, .start = gather.list[k]};
            end = index_scatter(din->data, end, &din->shape, tail, own, n_own, 0);
        }
    } else {
        end = index_scatter(din->data, end, &din->shape, tail, own, n_own, 0);
    }
    ASSERT(end == dout->data + dout->size);
}

// dtable.flat[idx[i]] += dout[i], dout (idx's shape)
void kernel_grad_take(Tensor *din, const Tensor *dout, const Tensor *idx) {
    expect_values(din);
    expect_values(dout);
    expect_values(idx);
    ASSERT(shape_equal(&dout->shape, &idx->shape));
    for (size_t i = 0; i < idx->size; i++)
        din->data[index_value(idx->data[i], din->size)] += dout->data[i];
}

// dx (x's shape) += dout (the result's shape), each value added where the forward pass read it
void kernel_grad_take_along_axis(Tensor *din, const Tensor *dout, const Tensor *idx, size_t axis) {
    expect_values(din);
    expect_values(dout);
    expect_values(idx);
    for (size_t i = 0; i < dout->size; i++)
        din->data[along_axis_offset(&din->shape, idx, &dout->shape, axis, i)] += dout->data[i];
}

// dpart (..., d_p, ...) += its block of dout (..., d_0 + d_1 + ..., ...), which starts at
// position `offset` of the axis (the sizes of the parts before it)
void kernel_grad_concat(Tensor *din, size_t offset, const Tensor *dout, size_t axis) {
    expect_values(din);
    expect_values(dout);
    const Shape *s = &din->shape, *o = &dout->shape;
    ASSERT(axis < s->rank && s->rank == o->rank && offset + s->dim[axis] <= o->dim[axis]);
    size_t outer = dims_product(s, 0, axis);
    size_t block = dims_product(s, axis, s->rank), out_block = dims_product(o, axis, o->rank);
    size_t start = offset * dims_product(o, axis + 1, o->rank);
    for (size_t r = 0; r < outer; r++)
        for (size_t t = 0; t < block; t++)
            din->data[r * block + t] += dout->data[r * out_block + start + t];
}

// Where a gradient moves between the split layout (..., heads, n, d_head) and the merged one
// (..., n, heads * d_head): into merged from split_src, or into split_dst from merged_src.
typedef struct HeadsGrad {
    double *merged, *split_dst;
    const double *split_src, *merged_src;
    size_t heads, n, dh;
} HeadsGrad;

// Rows q = (b * heads + h) * n + i of the split layout, d_head values each.
static void heads_grad_rows(void *ctx, size_t begin, size_t end) {
    const HeadsGrad *t = ctx;
    size_t heads = t->heads, n = t->n, dh = t->dh;
    for (size_t q = begin; q < end; q++) {
        size_t b = q / (heads * n), h = q / n % heads, i = q % n;
        for (size_t j = 0; j < dh; j++) {
            size_t m = (b * n + i) * heads * dh + h * dh + j, s = q * dh + j;
            if (t->merged)
                t->merged[m] += t->split_src[s];
            else
                t->split_dst[s] += t->merged_src[m];
        }
    }
}

// merged (..., n, heads * d_head) += split (..., heads, n, d_head), or the other way round
static void heads_add(double *merged, const double *split_src, double *split_dst, const double *merged_src,
                      const Shape *split) {
    size_t r = split->rank;
    HeadsGrad t = {merged, split_dst, split_src, merged_src, split->dim[r - 3], split->dim[r - 2], split->dim[r - 1]};
    size_t rows = dims_product(split, 0, r - 3) * t.heads * t.n;
    backend_for(rows, min_items(t.dh), heads_grad_rows, &t);
}

// dx (..., n, d) += merge_heads(dout (..., heads, n, d / heads))
void kernel_grad_split_heads(Tensor *din, const Tensor *dout) {
    expect_values(din);
    expect_values(dout);
    Shape merged;
    ASSERT(kernel_merge_heads_shape(&dout->shape, &merged) && shape_equal(&merged, &din->shape));
    heads_add(din->data, dout->data, NULL, NULL, &dout->shape);
}

// dx (..., heads, n, d_head) += split_heads(dout (..., n, heads * d_head))
void kernel_grad_merge_heads(Tensor *din, const Tensor *dout) {
    expect_values(din);
    expect_values(dout);
    Shape merged;
    ASSERT(kernel_merge_heads_shape(&din->shape, &merged) && shape_equal(&merged, &dout->shape));
    heads_add(NULL, NULL, din->data, dout->data, &din->shape);
}

// dx (..., n, d) += dout (..., n, d) turned back: (g0, g1) -> (g0 c + g1 s, -g0 s + g1 c)
void kernel_grad_rope(Tensor *din, const Tensor *dout, const Tensor *positions, double base) {
    expect_grad(din, &dout->shape, dout);
    rope_turn(din, dout, positions, base, true);
}

// ---------------------------------------------------------------- loss

static void cross_entropy_grad_rows(void *ctx, size_t begin, size_t end) {
    const GradJob *job = ctx;
    size_t v = job->d;
    for (size_t r = begin; r < end; r++) {
        const double *x = job->x + r * v;
        size_t t = index_value(job->b->data[r], v);
        // the softmax of the row, max subtracted first as in kernel_cross_entropy
        double max, sum = row_exp_sum(x, v, &max);
        for (size_t j = 0; j < v; j++)
            job->din[r * v + j] += job->dout[r] * (exp(x[j] - max) / sum - (j == t ? 1.0 : 0.0));
    }
}

// dlogits (..., V) += dout (...) * (softmax(logits) - onehot(targets (...)))
void kernel_grad_cross_entropy(Tensor *din, const Tensor *dout, const Tensor *logits, const Tensor *targets) {
    expect_grad(din, &logits->shape, dout);
    expect_values(logits);
    expect_values(targets);
    ASSERT(shape_equal(&dout->shape, &targets->shape));
    GradJob j = {.din = din->data, .dout = dout->data, .x = logits->data, .b = targets, .d = last_dim(&logits->shape)};
    backend_for(targets->size, min_items(j.d), cross_entropy_grad_rows, &j);
}

// ---------------------------------------------------------------- plain copies

static void identity_grad_values(void *ctx, size_t begin, size_t end) {
    const GradJob *j = ctx;
    for (size_t i = begin; i < end; i++)
        j->din[i] += j->dout[i];
}

void kernel_grad_identity(Tensor *din, const Tensor *dout) {
    expect_values(din);
    expect_values(dout);
    ASSERT(din->size == dout->size);
    GradJob j = {.din = din->data, .dout = dout->data};
    backend_for(din->size, min_items(1), identity_grad_values, &j);
}
