// op_matmul: the matrix product and the transposes (x.T, and transpose(x, axes) as numpy's).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

static bool infer_matmul(OpCheck *c) {
    const Shape *a = c->shapes[0], *b = c->shapes[1];
    char sa[64], sb[64];
    shape_format(a, sa, sizeof(sa));
    shape_format(b, sb, sizeof(sb));
    if (a->rank == 0 || b->rank == 0) {
        op_error(c->problem, OP_INPUT(a->rank == 0 ? 0 : 1), "'@' needs vectors or matrices, but this is a scalar");
        op_hint(c->problem, "to scale by a number, write x * s");
        return false;
    }
    if (!kernel_matmul_shape(a, b, &c->shape)) {
        size_t ka = a->dim[a->rank - 1];
        size_t kb = b->rank >= 2 ? b->dim[b->rank - 2] : b->dim[0];
        if (ka != kb) {
            op_error(c->problem, OP_CALL, "cannot multiply %s @ %s: the inner dimensions %zu and %zu differ", sa,
                     sb, ka, kb);
            if (shape_equal(a, b) && a->rank >= 2)
                op_hint(c->problem, "the inner dimensions must agree: the left operand is %s and the right "
                                    "is %s; did you mean to transpose the right one (.T)?",
                        sa, sb);
            else
                op_hint(c->problem, "in A @ B the last axis of A must match the %s axis of B",
                        b->rank >= 2 ? "second-to-last" : "only");
        } else {
            op_error(c->problem, OP_CALL, "cannot multiply %s @ %s: the leading (batch) axes do not match", sa, sb);
            op_hint(c->problem, "batch axes must be equal or 1");
        }
        return false;
    }
    // Rows come from A, columns from B, batch axes broadcast.
    size_t rank = c->shape.rank;
    if (a->rank >= 2 && b->rank >= 2) {
        c->out_labels[rank - 2] = c->labels[0][a->rank - 2];
        c->out_labels[rank - 1] = c->labels[1][b->rank - 1];
        for (size_t k = 2; k < rank; k++) {
            size_t out_axis = rank - 1 - k;
            if (k < a->rank && a->dim[a->rank - 1 - k] == c->shape.dim[out_axis])
                c->out_labels[out_axis] = c->labels[0][a->rank - 1 - k];
            else if (k < b->rank && b->dim[b->rank - 1 - k] == c->shape.dim[out_axis])
                c->out_labels[out_axis] = c->labels[1][b->rank - 1 - k];
        }
    } else if (a->rank >= 2) {  // a matrix and a vector give a vector (rank 1 or more)
        c->out_labels[rank - 1] = c->labels[0][a->rank - 2];
    } else if (b->rank >= 2) {
        c->out_labels[rank - 1] = c->labels[1][b->rank - 1];
    }
    return true;
}

// Each value of the result costs one multiply-add per entry of the left operand's last axis.
static bool cost_matmul(const Shape *const *in, const Shape *out, size_t *multiply_adds) {
    size_t size;
    const Shape *left = in[0];
    ASSERT(left->rank >= 1);  // the shape rule refuses a scalar operand
    size_t k = left->dim[left->rank - 1];
    return shape_size(out, &size) && util_mul_size(size, k, multiply_adds);
}

static bool compute_matmul(OpRun *r) {
    kernel_matmul(r->out, r->in[0], r->in[1]);
    return true;
}

// Row and column views of a matmul operand at the output element's batch position.
typedef struct MatView {
    const double *base;
    size_t rows, cols;  // as a matrix; a vector on the left is [1, k], on the right [k, 1]
} MatView;

// How many leading axes of a matmul's output are batch axes: all but the two matrix axes, or
// all but one when an operand is a vector (Q [h, n, d] @ v [d] -> [h, n]).
static size_t out_batch_axes(const Tensor *a, const Tensor *b, const Tensor *out) {
    size_t matrix_axes = a->shape.rank >= 2 && b->shape.rank >= 2 ? 2 : 1;
    return out->shape.rank >= matrix_axes ? out->shape.rank - matrix_axes : 0;
}

// The index on batch axis i of an operand of rank r at the output element: its batch axes
// align with the output's last batch axes, and a size-1 axis broadcasts.
static size_t batch_at(const Tensor *t, size_t i, size_t out_batch, const size_t *out_idx) {
    return t->shape.dim[i] == 1 ? 0 : out_idx[out_batch - (t->shape.rank - 2) + i];
}

static MatView mat_view(const Tensor *t, size_t out_batch, const size_t *out_idx, bool left) {
    MatView v = {0};
    size_t r = t->shape.rank;
    if (r == 1) {
        v.base = t->data;
        v.rows = left ? 1 : t->shape.dim[0];
        v.cols = left ? t->shape.dim[0] : 1;
        return v;
    }
    v.rows = t->shape.dim[r - 2];
    v.cols = t->shape.dim[r - 1];
    size_t batch = 0;
    for (size_t i = 0; i + 2 < r; i++)
        batch = batch * t->shape.dim[i] + batch_at(t, i, out_batch, out_idx);
    v.base = t->data + batch * v.rows * v.cols;
    return v;
}

// The batch indices of a matmul operand at the output element, as "1, " (one head of
// Q [h, n, d]); nothing for a matrix or a vector.
static void batch_prefix(StrBuf *sb, const Tensor *t, size_t out_batch, const size_t *out_idx) {
    for (size_t i = 0; i + 2 < t->shape.rank; i++)
        strbuf_printf(sb, "%zu, ", batch_at(t, i, out_batch, out_idx));
}

static void explain_matmul(OpExplain *e) {
    const Tensor *a = e->in[0], *b = e->in[1], *out = e->out;
    if (e->row && (e->all || b->shape.rank < 2)) {
        // No weighted sum of rows to show: one dot product for each element of the row.
        size_t d = out->shape.dim[out->shape.rank - 1], first = e->flat;
        e->row = false;
        for (size_t j = 0; j < d; j++) {
            e->flat = first + j;
            shape_unflatten(&out->shape, e->flat, e->index);
            explain_matmul(e);
        }
        e->row = true;
        return;
    }
    size_t nb = out_batch_axes(a, b, out);
    MatView A = mat_view(a, nb, e->index, true), B = mat_view(b, nb, e->index, false);
    size_t orank = out->shape.rank;
    // Which row of A and column of B this output element joins.
    size_t i = 0, j = 0;
    if (a->shape.rank >= 2 && b->shape.rank >= 2) {
        i = e->index[orank - 2];
        j = e->index[orank - 1];
    } else if (a->shape.rank >= 2) {
        i = e->index[orank - 1];
    } else if (b->shape.rank >= 2) {
        j = e->index[orank - 1];  // a vector @ a matrix is a vector or more
    }
    size_t k = A.cols;
    StrBuf sb;
    strbuf_init(&sb);
    // A row asked for by itself reads best as a weighted sum of b's rows (the document's
    // output_0); every element at once reads best as one dot product each (its score(0, j)).
    if (e->row) {
        // The row as a weighted sum of B's rows: output_0 = 0.33×[0.1, 0.2] + 0.40×[...] + ...
        size_t row_idx[TENSOR_MAX_RANK];
        memcpy(row_idx, e->index, sizeof(row_idx));
        op_work_ref(&sb, e->out_name, row_idx, orank >= 1 ? orank - 1 : 0);
        strbuf_puts(&sb, " = ");
        for (size_t t = 0; t < k; t++) {
            if (t)
                strbuf_puts(&sb, " + ");
            op_work_num(&sb, e, a, A.base[i * A.cols + t]);
            strbuf_puts(&sb, "×[");
            for (size_t c = 0; c < B.cols; c++) {
                if (c)
                    strbuf_puts(&sb, ", ");
                op_work_num(&sb, e, b, B.base[t * B.cols + c]);
            }
            strbuf_putc(&sb, ']');
        }
        op_work_line(e, &sb);
        strbuf_init(&sb);
        op_work_ref(&sb, e->out_name, row_idx, orank >= 1 ? orank - 1 : 0);
        strbuf_puts(&sb, " = [");
        size_t first = e->flat - (orank ? e->index[orank - 1] : 0);
        for (size_t c = 0; c < B.cols; c++) {
            if (c)
                strbuf_puts(&sb, ", ");
            op_work_num(&sb, e, out, out->data[first + c]);
        }
        strbuf_putc(&sb, ']');
        op_work_line(e, &sb);
        return;
    }
    op_work_lhs(&sb, e);
    // Name the row and column being joined, as Q[0, :] · K.T[:, 1].
    strbuf_puts(&sb, e->in_names[0]);
    if (a->shape.rank >= 2) {
        strbuf_putc(&sb, '[');
        batch_prefix(&sb, a, nb, e->index);
        strbuf_printf(&sb, "%zu, :]", i);
    }
    strbuf_puts(&sb, " · ");
    strbuf_puts(&sb, e->in_names[1]);
    if (b->shape.rank >= 2) {
        strbuf_putc(&sb, '[');
        batch_prefix(&sb, b, nb, e->index);
        strbuf_printf(&sb, ":, %zu]", j);
    }
    strbuf_puts(&sb, " = ");
    for (size_t t = 0; t < k; t++) {
        if (t)
            strbuf_puts(&sb, " + ");
        strbuf_putc(&sb, '(');
        op_work_num(&sb, e, a, A.base[i * A.cols + t]);
        strbuf_puts(&sb, "×");
        op_work_num(&sb, e, b, B.base[t * B.cols + j]);
        strbuf_putc(&sb, ')');
    }
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_transpose(OpCheck *c) {
    c->shape = *c->shapes[0];
    size_t rank = c->shape.rank;
    op_copy_labels(c->out_labels, c->labels[0], rank);
    if (rank >= 2) {
        c->shape.dim[rank - 2] = c->shapes[0]->dim[rank - 1];
        c->shape.dim[rank - 1] = c->shapes[0]->dim[rank - 2];
        c->out_labels[rank - 2] = c->labels[0][rank - 1];
        c->out_labels[rank - 1] = c->labels[0][rank - 2];
    }
    return true;
}

static bool compute_transpose(OpRun *r) {
    kernel_transpose(r->out, r->in[0]);
    return true;
}

static void explain_transpose(OpExplain *e) {
    const Tensor *x = e->in[0];
    size_t idx[TENSOR_MAX_RANK];
    size_t r = x->shape.rank;
    memcpy(idx, e->index, sizeof(idx));
    if (r >= 2) {
        idx[r - 2] = e->index[r - 1];
        idx[r - 1] = e->index[r - 2];
    }
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], idx, r);
    // As in numpy, a vector (or a number) is its own transpose.
    strbuf_puts(&sb, r >= 2 ? " (rows and columns swap)" : " (a vector is its own transpose)");
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// transpose(x, axes): axis k of the result is axis axes[k] of x, as numpy's transpose; without
// axes, every axis in reverse order (numpy's too), where x.T swaps only the last two.
// The axes as written (the shape rule wrote them reversed where none were), negative ones counted
// from the end.
static void permutation(const OpAttrs *attrs, size_t rank, size_t *axes) {
    for (size_t k = 0; k < rank; k++)
        axes[k] = (size_t)(attrs->dims[k] < 0 ? attrs->dims[k] + (long long)rank : attrs->dims[k]);
}

static bool infer_permute(OpCheck *c) {
    size_t rank = c->shapes[0]->rank;
    if (!c->present[1]) {
        for (size_t k = 0; k < rank; k++)
            c->attrs.dims[k] = (long long)(rank - 1 - k);
        c->attrs.n_dims = rank;
    }
    if (c->attrs.n_dims != rank) {
        op_error(c->problem, OP_PARAM(1), "'axes' names %zu axes, but the tensor has %zu", c->attrs.n_dims, rank);
        op_hint(c->problem, "name every axis of the tensor once, in its new order: [1, 0] for a matrix, [0, 2, 1] to swap "
                            "the last two of three");
        return false;
    }
    bool seen[TENSOR_MAX_RANK] = {false};
    for (size_t k = 0; k < rank; k++) {
        long long a = c->attrs.dims[k];
        if (a < -(long long)rank || a >= (long long)rank) {
            op_error(c->problem, OP_PARAM(1), "axis %lld is out of range: the tensor has %zu axes, 0 to %zu (or -%zu to -1)",
                     a, rank, rank - 1, rank);
            op_hint(c->problem, "'axes' lists the tensor's axes in their new order, each once");
            return false;
        }
        size_t at = (size_t)(a < 0 ? a + (long long)rank : a);
        if (seen[at]) {
            op_error(c->problem, OP_PARAM(1), "axis %zu is named twice in 'axes'", at);
            op_hint(c->problem, "each axis of the tensor goes somewhere once: 'axes' is an order of 0 to %zu (negative ones count from the end)", rank - 1);
            return false;
        }
        seen[at] = true;
    }
    size_t axes[TENSOR_MAX_RANK];
    permutation(&c->attrs, rank, axes);
    c->shape.rank = rank;
    for (size_t k = 0; k < rank; k++) {
        c->shape.dim[k] = c->shapes[0]->dim[axes[k]];
        c->out_labels[k] = c->labels[0][axes[k]];
    }
    return true;
}

static bool compute_permute(OpRun *r) {
    size_t axes[TENSOR_MAX_RANK];
    permutation(r->attrs, r->in[0]->shape.rank, axes);
    kernel_permute(r->out, r->in[0], axes);
    return true;
}

static void explain_permute(OpExplain *e) {
    const Tensor *x = e->in[0];
    size_t r = x->shape.rank, axes[TENSOR_MAX_RANK], idx[TENSOR_MAX_RANK];
    permutation(e->attrs, r, axes);
    for (size_t k = 0; k < r; k++)
        idx[axes[k]] = e->index[k];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], idx, r);
    strbuf_puts(&sb, " (its axes in the order ");
    for (size_t k = 0; k < r; k++)
        strbuf_printf(&sb, "%s%zu", k ? ", " : "", axes[k]);
    strbuf_puts(&sb, ")");
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

static bool grad_matmul(OpGrad *g) {
    kernel_grad_matmul(g->din, g->input, g->dout, g->in[0], g->in[1]);
    return true;
}

static bool grad_permute(OpGrad *g) {
    size_t axes[TENSOR_MAX_RANK];
    permutation(g->attrs, g->din->shape.rank, axes);
    kernel_grad_permute(g->din, g->dout, axes);
    return true;
}

static bool grad_transpose(OpGrad *g) {
    kernel_grad_transpose(g->din, g->dout);
    return true;
}

// name[b..., i, :] or name[b..., :, j]: a row or a column of one batch entry.
static void grad_line_ref(StrBuf *sb, const char *name, const size_t *batch, size_t n_batch, size_t at, bool row) {
    strbuf_printf(sb, "%s[", name);
    for (size_t i = 0; i < n_batch; i++)
        strbuf_printf(sb, "%zu, ", batch[i]);
    if (row)
        strbuf_printf(sb, "%zu, :]", at);
    else
        strbuf_printf(sb, ":, %zu]", at);
}

// The left share at [i, k] is row i of the gradient against row k of the right operand
// (dC @ B.T); the right share at [k, j] is column k of the left against column j of the
// gradient (A.T @ dC). Written out for matrices and equal batches; vectors show the value.
static void explain_grad_matmul(OpGradWork *w) {
    const Tensor *a = w->in[0], *b = w->in[1], *g = w->dout;
    size_t r = a->shape.rank;
    bool plain = r >= 2 && b->shape.rank == r;
    for (size_t i = 0; plain && i + 2 < r; i++)
        plain = a->shape.dim[i] == b->shape.dim[i];
    if (!plain) {
        op_grad_num(w, w->share->data[w->flat]);
        return;
    }
    size_t n = a->shape.dim[r - 2], k = a->shape.dim[r - 1], m = b->shape.dim[r - 1];
    size_t block = w->flat / (w->input == 0 ? n * k : k * m);
    const double *A = a->data + block * n * k, *B = b->data + block * k * m, *G = g->data + block * n * m;
    size_t p = w->index[r - 2], q = w->index[r - 1];
    StrBuf *sb = w->sb;
    size_t terms = w->input == 0 ? m : n;
    if (w->input == 0) {
        grad_line_ref(sb, w->dout_name, w->index, r - 2, p, true);
        strbuf_puts(sb, " · ");
        grad_line_ref(sb, w->in_names[1], w->index, r - 2, q, true);
    } else {
        grad_line_ref(sb, w->in_names[0], w->index, r - 2, p, false);
        strbuf_puts(sb, " · ");
        grad_line_ref(sb, w->dout_name, w->index, r - 2, q, false);
    }
    strbuf_puts(sb, " = ");
    for (size_t t = 0; t < terms; t++) {
        strbuf_puts(sb, t ? " + (" : "(");
        op_grad_num(w, w->input == 0 ? G[p * m + t] : A[t * k + p]);
        strbuf_puts(sb, "×");
        op_grad_num(w, w->input == 0 ? B[q * m + t] : G[t * m + q]);
        strbuf_puts(sb, ")");
    }
    strbuf_puts(sb, " = ");
    op_grad_num(w, w->share->data[w->flat]);
}

static const OpDef ops[] = {
    {.name = "matmul", .syntax = OP_INFIX, .token = '@', .symbol = "@",
     .about = "matrix product: each row of the left against each column of the right", .params = {OP_X, OP_X},
     .infer = infer_matmul, .compute = compute_matmul, .explain = explain_matmul, .row_form = true,
     .cost = cost_matmul, .integers = INTEGERS_IF_INPUTS, .grad = grad_matmul,
     .grad_formula = {"%g @ %1.T", "%0.T @ %g"}, .explain_grad = explain_grad_matmul},
    {.name = "transpose", .keeps_ids = true, .syntax = OP_POSTFIX, .token = 'T', .symbol = ".T",
     .about = "transpose: rows become columns (last two axes swap)", .params = {OP_X}, .infer = infer_transpose,
     .compute = compute_transpose, .explain = explain_transpose, .integers = INTEGERS_IF_FIRST,
     .grad = grad_transpose, .grad_formula = {"%g.T"}},
    {.name = "transpose", .keeps_ids = true,
     .about = "the axes in a new order, as numpy's transpose(x, axes): axis k of the result is axis axes[k] of x",
     .params = {OP_X, {"axes", PARAM_AXES, true, 0}}, .infer = infer_permute, .compute = compute_permute,
     .explain = explain_permute, .integers = INTEGERS_IF_FIRST, .grad = grad_permute,
     .grad_formula = {"%g with its axes put back in the order of %0's"}},
};

const OpFamily op_family_matmul = OP_FAMILY(ops);
