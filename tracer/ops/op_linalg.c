// op_linalg: what a matrix's values say of it as a whole: its eigenvalues (eigvals) and its
// singular values (svdvals).
#include <assert.h>
#include <math.h>
#include <string.h>

#include "kernel_linalg.h"
#include "op.h"

static const char *const re_im[] = {"re", "im"};

// The matrices are the last two axes; the axes before them are a batch. what: why they must be
// square, NULL when they need not be.
static bool needs_matrices(OpCheck *c, const char *what) {
    const Shape *a = c->shapes[0];
    char s[64];
    shape_format(a, s, sizeof(s));
    if (a->rank < 2) {
        op_error(c->problem, OP_INPUT(0), "%s needs a matrix (its last two axes), but this is of shape %s", c->op->name,
                 s);
        op_hint(c->problem, "give it a matrix of shape %s, or a batch of them %s", what ? "[n, n]" : "[m, n]",
                what ? "[..., n, n]" : "[..., m, n]");
        return false;
    }
    size_t rows = a->dim[a->rank - 2], cols = a->dim[a->rank - 1];
    if (what && rows != cols) {
        op_error(c->problem, OP_INPUT(0), "%s needs square matrices, but this is of shape %s: %zu rows, %zu columns",
                 c->op->name, s, rows, cols);
        op_hint(c->problem, "%s", what);
        return false;
    }
    return true;
}

// [..., n, n] -> [..., n, 2]: the batch keeps its labels, the pair is labelled re and im.
static bool infer_eigvals(OpCheck *c) {
    if (!needs_matrices(c, "only a square matrix maps a vector to a multiple of itself; for a rectangular one, "
                           "its singular values say how much it stretches"))
        return false;
    size_t rank = c->shapes[0]->rank;
    c->shape = *c->shapes[0];
    c->shape.dim[rank - 1] = 2;
    op_copy_labels(c->out_labels, c->labels[0], rank - 2);
    c->out_labels[rank - 2] = (Labels){0};
    c->out_labels[rank - 1] = (Labels){re_im, 2};
    return true;
}

// About 10 n³ multiply-adds for each matrix (Hessenberg form, then two or three QR steps per
// eigenvalue).
static bool cost_eigvals(const Shape *const *in, const Shape *out, size_t *multiply_adds) {
    (void)out;
    const Shape *a = in[0];
    size_t n = a->dim[a->rank - 1], matrices = 1, work;
    for (size_t i = 0; i + 2 < a->rank; i++)
        if (!util_mul_size(matrices, a->dim[i], &matrices))
            return false;
    return util_mul_size(n, n, &work) && util_mul_size(work, n, &work) && util_mul_size(work, 10, &work) &&
           util_mul_size(work, matrices, multiply_adds);
}

// name[b...] of the matrix at flat number `matrix` of a's batch, written into sb.
static void matrix_ref(StrBuf *sb, const char *name, const Shape *a, size_t matrix) {
    size_t idx[TENSOR_MAX_RANK] = {0};
    Shape batch = *a;
    batch.rank = a->rank - 2;
    shape_unflatten(&batch, matrix, idx);
    op_work_ref(sb, name, idx, batch.rank);
}

// A non-finite value refused at its place: numpy refuses it too ("Array must not contain infs
// or NaNs"), as no eigenvalue is defined by it.
static bool finite_values(OpRun *r, const char *what) {
    const Tensor *a = r->in[0];
    for (size_t i = 0; i < a->size; i++) {
        if (isfinite(a->data[i]))
            continue;
        size_t idx[TENSOR_MAX_RANK];
        shape_unflatten(&a->shape, i, idx);
        StrBuf sb;
        strbuf_init(&sb);
        op_work_ref(&sb, r->in_names[0], idx, a->shape.rank);
        op_error(r->problem, OP_INPUT(0), "%s needs finite numbers, but %s is %s", r->op->name,
                 sb.failed ? r->in_names[0] : strbuf_str(&sb), isnan(a->data[i]) ? "nan" : a->data[i] > 0 ? "inf" : "-inf");
        op_hint(r->problem, "a matrix that holds an inf or a nan has no %s to compute "
                            "(numpy refuses it too): find the step that made it", what);
        strbuf_finish(&sb);
        return false;
    }
    return true;
}

// matrix: its flat number in the batch; method: what the method did not reach, and in how long.
static bool refuse_no_convergence(OpRun *r, size_t matrix, const char *method) {
    StrBuf sb;
    strbuf_init(&sb);
    matrix_ref(&sb, r->in_names[0], &r->in[0]->shape, matrix);
    op_error(r->problem, OP_INPUT(0), "%s did not converge on %s: %s", r->op->name,
             sb.failed ? r->in_names[0] : strbuf_str(&sb), method);
    op_hint(r->problem, "this is rare and depends on the matrix's exact values; numpy's LAPACK may still find "
                        "them: compare with np.linalg.%s",
            r->op->name);
    strbuf_finish(&sb);
    return false;
}

// The kernel's answer: done, out of memory, or refused at the matrix that did not converge.
static bool kernel_answer(OpRun *r, KernelLinalg status, size_t failed, const char *method) {
    switch (status) {
    case KERNEL_LINALG_OK:
        return true;
    case KERNEL_LINALG_NO_MEMORY:
        return op_out_of_memory(r->problem);
    case KERNEL_LINALG_NO_CONVERGENCE:
        break;
    }
    return refuse_no_convergence(r, failed, method);
}

// The limits are written in the messages: a static assertion keeps each in step.
static_assert(KERNEL_EIG_ITERATIONS == 30, "the message says 30 steps");
static_assert(KERNEL_SVD_SWEEPS == 60, "the message says 60 sweeps");

static bool compute_eigvals(OpRun *r) {
    size_t failed = 0;
    return finite_values(r, "eigenvalues") &&
           kernel_answer(r, kernel_eigvals(r->out, r->in[0], KERNEL_EIG_ITERATIONS, &failed), failed,
                         "the QR iteration found no further eigenvalue in 30 steps");
}

static bool compute_svdvals(OpRun *r) {
    size_t failed = 0;
    return finite_values(r, "singular values") &&
           kernel_answer(r, kernel_svdvals(r->out, r->in[0], KERNEL_SVD_SWEEPS, &failed), failed,
                         "the rotations left two columns not yet orthogonal after 60 sweeps");
}

// 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st.
static const char *ordinal_suffix(size_t k) {
    return k % 100 / 10 == 1 ? "th" : k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
}

// re + im i, or re - |im| i; a real eigenvalue alone.
static void work_complex(StrBuf *sb, const OpExplain *e, double re, double im) {
    op_work_num(sb, e, e->out, re);
    if (im == 0.0)
        return;
    strbuf_puts(sb, im > 0 ? " + " : " - ");
    op_work_num(sb, e, e->out, fabs(im));
    strbuf_putc(sb, 'i');
}

// "v0 + v1 + ... = sum" of count values at stride, squared ("v0² + ...") when asked, added in
// order, in t's digits.
static void work_sum(StrBuf *sb, const OpExplain *e, const Tensor *t, const double *v, size_t count, size_t stride,
                     bool squared) {
    double sum = 0.0;
    for (size_t i = 0; i < count; i++) {
        double x = v[i * stride];
        strbuf_puts(sb, i ? " + " : "");
        bool bracket = squared && signbit(x);  // (-0.5)², not -0.5², which reads as -(0.5²)
        strbuf_puts(sb, bracket ? "(" : "");
        op_work_num(sb, e, t, x);
        strbuf_puts(sb, bracket ? ")²" : squared ? "²" : "");
        sum += squared ? x * x : x;
    }
    strbuf_puts(sb, " = ");
    op_work_num(sb, e, t, sum);
}

// The eigenvalues of one matrix add up to its trace: both sums, each in order.
static void work_trace(OpExplain *e, const Tensor *a, size_t matrix, const double *ev, size_t n) {
    StrBuf sb;
    strbuf_init(&sb);
    matrix_ref(&sb, e->in_names[0], &a->shape, matrix);
    strbuf_puts(&sb, "'s eigenvalues add up to its trace, the sum of its diagonal");
    bool complex = false;
    for (size_t i = 0; i < n; i++)
        complex = complex || ev[2 * i + 1] != 0.0;
    if (complex)
        strbuf_puts(&sb, " (their real parts: the imaginary parts of a conjugate pair cancel)");
    strbuf_puts(&sb, ": eigenvalues ");
    work_sum(&sb, e, e->out, ev, n, 2, false);
    strbuf_puts(&sb, "; diagonal ");
    work_sum(&sb, e, a, a->data + matrix * n * n, n, n + 1, false);
    op_work_line(e, &sb);
}

// out[..., i, 0 or 1]: a part of the matrix's (i+1)-th eigenvalue in the order; before it (or,
// when every element is asked for, once after the matrix's last), the trace it adds up to.
static void explain_eigvals(OpExplain *e) {
    const Tensor *a = e->in[0];
    size_t rank = e->out->shape.rank, n = a->shape.dim[rank - 1], i = e->index[rank - 2], part = e->index[rank - 1];
    size_t matrix = e->flat / (2 * n);
    const double *ev = e->out->data + matrix * 2 * n;
    if (!e->all)
        work_trace(e, a, matrix, ev, n);
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_puts(&sb, part == 0 ? "the real part of " : "the imaginary part of ");
    work_complex(&sb, e, ev[2 * i], ev[2 * i + 1]);
    strbuf_printf(&sb, ", the %zu%s of ", i + 1, ordinal_suffix(i + 1));
    matrix_ref(&sb, e->in_names[0], &a->shape, matrix);
    strbuf_printf(&sb, "'s %zu eigenvalues (largest |λ| first)", n);
    op_work_result(&sb, e);
    if (e->all && i + 1 == n && part == 1)
        work_trace(e, a, matrix, ev, n);  // its line before this one: the work ends in the value
    op_work_line(e, &sb);
}

// [..., m, n] -> [..., min(m, n)]: the batch keeps its labels.
static bool infer_svdvals(OpCheck *c) {
    if (!needs_matrices(c, NULL))
        return false;
    const Shape *a = c->shapes[0];
    size_t rank = a->rank, m = a->dim[rank - 2], n = a->dim[rank - 1];
    c->shape = *a;
    c->shape.rank = rank - 1;
    c->shape.dim[rank - 2] = m < n ? m : n;
    op_copy_labels(c->out_labels, c->labels[0], rank - 2);
    c->out_labels[rank - 2] = (Labels){0};
    return true;
}

// About 20 m n min(m, n) multiply-adds for each matrix: each sweep takes three dot products
// and a rotation for each of min(m, n)²/2 pairs of columns, and a few sweeps are needed.
static bool cost_svdvals(const Shape *const *in, const Shape *out, size_t *multiply_adds) {
    const Shape *a = in[0];
    size_t values, work, q = out->rank ? out->dim[out->rank - 1] : 0;
    return shape_size(a, &values) && util_mul_size(values, q, &work) && util_mul_size(work, 20, multiply_adds);
}

// The squares of one matrix's singular values add up to the squares of its entries: both sums.
static void work_squares(OpExplain *e, const Tensor *a, size_t matrix, const double *sv, size_t q) {
    size_t rank = a->shape.rank, mn = a->shape.dim[rank - 2] * a->shape.dim[rank - 1];
    StrBuf sb;
    strbuf_init(&sb);
    matrix_ref(&sb, e->in_names[0], &a->shape, matrix);
    strbuf_puts(&sb, "'s singular values squared add up to its entries squared: singular values ");
    work_sum(&sb, e, e->out, sv, q, 1, true);
    strbuf_puts(&sb, "; entries ");
    work_sum(&sb, e, a, a->data + matrix * mn, mn, 1, true);
    op_work_line(e, &sb);
}

// out[..., j]: the matrix's (j+1)-th singular value; before it (or, when every element is
// asked for, once before the matrix's last), the sum of squares it is part of.
static void explain_svdvals(OpExplain *e) {
    const Tensor *a = e->in[0];
    size_t rank = e->out->shape.rank, q = e->out->shape.dim[rank - 1], j = e->index[rank - 1], matrix = e->flat / q;
    const double *sv = e->out->data + matrix * q;
    if (!e->all || j + 1 == q)
        work_squares(e, a, matrix, sv, q);
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "the %zu%s of ", j + 1, ordinal_suffix(j + 1));
    matrix_ref(&sb, e->in_names[0], &a->shape, matrix);
    strbuf_printf(&sb, "'s %zu singular values (largest first)", q);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static const OpDef ops[] = {
    {.name = "eigvals", .about = "eigenvalues of square matrices, as (real, imaginary) pairs, largest |λ| first",
     .params = {OP_X}, .infer = infer_eigvals, .compute = compute_eigvals, .explain = explain_eigvals,
     .cost = cost_eigvals,
     .no_derivative = "eigenvalues carry no gradient here: compute the loss from other steps, and eigvals "
                      "from the trained weights alone"},
    {.name = "svdvals", .about = "singular values of matrices, largest first: how far each stretches",
     .params = {OP_X}, .infer = infer_svdvals, .compute = compute_svdvals, .explain = explain_svdvals,
     .cost = cost_svdvals,
     .no_derivative = "singular values carry no gradient here: compute the loss from other steps, and svdvals "
                      "from the trained weights alone"},
};

const OpFamily op_family_linalg = OP_FAMILY(ops);
