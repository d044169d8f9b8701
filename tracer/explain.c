// explain: element-by-element arithmetic for every operation, written as the document
// writes it: score(0,1) = (1.0000×0.8000) + (0.0000×0.1000) + ... = 1.0000.
#include "explain.h"

#include <math.h>
#include <string.h>

#include "format.h"

// ---------------------------------------------------------------- helpers

static void num(StrBuf *sb, const OpExplain *e, const Tensor *t, double v) {
    char buf[64];
    if (t && t->is_count)
        format_count(v, buf, sizeof(buf));
    else
        format_fixed(v, e->digits, buf, sizeof(buf));
    strbuf_puts(sb, buf);
}

static void index_text(StrBuf *sb, const size_t *idx, size_t rank) {
    if (rank == 0)
        return;
    strbuf_putc(sb, '[');
    for (size_t i = 0; i < rank; i++)
        strbuf_printf(sb, "%s%zu", i ? ", " : "", idx[i]);
    strbuf_putc(sb, ']');
}

// name[i, j], or the bare name for a scalar.
static void ref(StrBuf *sb, const char *name, const size_t *idx, size_t rank) {
    strbuf_puts(sb, name);
    index_text(sb, idx, rank);
}

static size_t flat_of(const Tensor *t, const size_t *idx) {
    size_t f = 0;
    for (size_t i = 0; i < t->shape.rank; i++)
        f = f * t->shape.dim[i] + idx[i];
    return f;
}

static void unflatten(const Shape *s, size_t flat, size_t *idx) {
    for (size_t i = s->rank; i-- > 0;) {
        idx[i] = s->dim[i] ? flat % s->dim[i] : 0;
        flat = s->dim[i] ? flat / s->dim[i] : 0;
    }
}

// The element of a broadcast input that meets output element out_idx.
static void broadcast_index(const Tensor *in, const Tensor *out, const size_t *out_idx, size_t *idx) {
    size_t off = out->shape.rank - in->shape.rank;
    for (size_t i = 0; i < in->shape.rank; i++)
        idx[i] = in->shape.dim[i] == 1 ? 0 : out_idx[off + i];
}

static void finish(OpExplain *e, StrBuf *sb) {
    if (sb->failed)
        op_work_failed(e);  // a line cut short would be wrong arithmetic on the learner's screen
    else
        op_work(e, "%s", strbuf_str(sb));
    strbuf_finish(sb);
}

// "out[i, j] = " at the start of a line.
static void lhs(StrBuf *sb, const OpExplain *e) {
    ref(sb, e->out_name, e->index, e->out->shape.rank);
    strbuf_puts(sb, " = ");
}

static void result(StrBuf *sb, const OpExplain *e) {
    strbuf_puts(sb, " = ");
    num(sb, e, e->out, e->out->data[e->flat]);
}

// ---------------------------------------------------------------- elementwise

bool explain_binary(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    static const char *const symbols[] = {" + ", " - ", " × ", " / ", " ** "};
    const Tensor *a = e->in[0], *b = e->in[1];
    size_t ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK];
    broadcast_index(a, e->out, e->index, ia);
    broadcast_index(b, e->out, e->index, ib);
    const char *sym = symbols[e->op->variant];
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    ref(&sb, e->in_names[0], ia, a->shape.rank);
    strbuf_puts(&sb, sym);
    ref(&sb, e->in_names[1], ib, b->shape.rank);
    strbuf_puts(&sb, " = ");
    num(&sb, e, a, a->data[flat_of(a, ia)]);
    strbuf_puts(&sb, sym);
    num(&sb, e, b, b->data[flat_of(b, ib)]);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_unary(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *x = e->in[0];
    const char *fn = e->op->name;
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    bool neg = strcmp(fn, "negate") == 0;
    strbuf_printf(&sb, neg ? "-" : "%s(", fn);
    ref(&sb, e->in_names[0], e->index, x->shape.rank);
    // -(-1.0000), not --1.0000: a negative operand of negate keeps its brackets.
    bool bracket = !neg || x->data[e->flat] < 0;
    strbuf_printf(&sb, neg ? " = -%s" : ") = %s(", neg ? (bracket ? "(" : "") : fn);
    num(&sb, e, x, x->data[e->flat]);
    if (bracket)
        strbuf_putc(&sb, ')');
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_copy(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    ref(&sb, e->in_names[0], e->index, e->out->shape.rank);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

// ---------------------------------------------------------------- matrix product

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

bool explain_matmul(OpExplain *e) {
    const Tensor *a = e->in[0], *b = e->in[1], *out = e->out;
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
        j = orank ? e->index[orank - 1] : 0;
    }
    size_t k = A.cols;
    StrBuf sb;
    strbuf_init(&sb);
    // A row asked for by itself reads best as a weighted sum of b's rows (the document's
    // output_0); every element at once reads best as one dot product each (its score(0, j)).
    if (e->row && b->shape.rank >= 2 && !e->all) {
        // The row as a weighted sum of B's rows: output_0 = 0.33×[0.1, 0.2] + 0.40×[...] + ...
        size_t row_idx[TENSOR_MAX_RANK];
        memcpy(row_idx, e->index, sizeof(row_idx));
        ref(&sb, e->out_name, row_idx, orank >= 1 ? orank - 1 : 0);
        strbuf_puts(&sb, " = ");
        for (size_t t = 0; t < k; t++) {
            if (t)
                strbuf_puts(&sb, " + ");
            num(&sb, e, a, A.base[i * A.cols + t]);
            strbuf_puts(&sb, "×[");
            for (size_t c = 0; c < B.cols; c++) {
                if (c)
                    strbuf_puts(&sb, ", ");
                num(&sb, e, b, B.base[t * B.cols + c]);
            }
            strbuf_putc(&sb, ']');
        }
        finish(e, &sb);
        strbuf_init(&sb);
        ref(&sb, e->out_name, row_idx, orank >= 1 ? orank - 1 : 0);
        strbuf_puts(&sb, " = [");
        size_t first = e->flat - (orank ? e->index[orank - 1] : 0);
        for (size_t c = 0; c < B.cols; c++) {
            if (c)
                strbuf_puts(&sb, ", ");
            num(&sb, e, out, out->data[first + c]);
        }
        strbuf_putc(&sb, ']');
        finish(e, &sb);
        return true;
    }
    if (e->row)
        return false;
    lhs(&sb, e);
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
        num(&sb, e, a, A.base[i * A.cols + t]);
        strbuf_puts(&sb, "×");
        num(&sb, e, b, B.base[t * B.cols + j]);
        strbuf_putc(&sb, ')');
    }
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_transpose(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
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
    lhs(&sb, e);
    ref(&sb, e->in_names[0], idx, r);
    strbuf_puts(&sb, " (rows and columns swap)");
    result(&sb, e);
    finish(e, &sb);
    return true;
}

// ---------------------------------------------------------------- indexing

bool explain_index(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *x = e->in[0];
    const OpAttrs *at = e->attrs;
    // The result's index in the order of the items: numpy's rule may have moved the gathered
    // axis first, so put it back where its item stands.
    size_t out[KERNEL_MAX_INDEX + TENSOR_MAX_RANK];
    size_t out_rank = e->out->shape.rank;
    memcpy(out, e->index, out_rank * sizeof(size_t));
    size_t unmoved = 0;
    for (size_t i = 0; i < at->n_index && at->index[i].kind != KERNEL_INDEX_LIST; i++)
        unmoved += at->index[i].kind != KERNEL_INDEX_AT;
    if (kernel_index_list_axis(at->index, at->n_index) == 0 && unmoved > 0) {
        memmove(out, out + 1, unmoved * sizeof(size_t));
        out[unmoved] = e->index[0];
    }
    size_t src[TENSOR_MAX_RANK];
    size_t o = 0, axis = 0;
    for (size_t i = 0; axis < x->shape.rank; i++) {
        KernelAxisIndex ix = i < at->n_index ? at->index[i] : (KernelAxisIndex){.kind = KERNEL_INDEX_ALL};
        if (at->index_input >= 0 && i == (size_t)at->index_input) {
            // An index computed while running (x[ids]): its values are the second input,
            // already checked, negative ones counting from the end.
            const Tensor *ids = e->in[1];
            double v = ids->data[ids->shape.rank ? out[o++] : 0];
            src[axis] = (size_t)(v < 0 ? v + (double)x->shape.dim[axis] : v);
            axis++;
            continue;
        }
        switch (ix.kind) {
        case KERNEL_INDEX_NEW:
            o++;  // a new axis of size 1 reads nothing
            continue;
        case KERNEL_INDEX_AT:
            src[axis] = ix.start;
            break;
        case KERNEL_INDEX_ALL:
            src[axis] = out[o++];
            break;
        case KERNEL_INDEX_RANGE:
            src[axis] = ix.start + out[o++];
            break;
        case KERNEL_INDEX_LIST:
            src[axis] = ix.list ? ix.list[out[o]] : 0;
            o++;
            break;
        }
        axis++;
    }
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    ref(&sb, e->in_names[0], src, x->shape.rank);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_take(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *table = e->in[0], *idx = e->in[1];
    size_t k = (size_t)idx->data[e->flat];
    size_t tidx[TENSOR_MAX_RANK];
    unflatten(&table->shape, k, tidx);
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    strbuf_printf(&sb, "%s[", e->in_names[0]);
    ref(&sb, e->in_names[1], e->index, idx->shape.rank);
    strbuf_puts(&sb, "] = ");
    ref(&sb, e->in_names[0], tidx, table->shape.rank);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

// ---------------------------------------------------------------- rows

// The last-axis row of t that holds output element `flat`.
static const double *row_of(const Tensor *t, size_t flat, size_t *d) {
    *d = t->shape.rank ? t->shape.dim[t->shape.rank - 1] : 1;
    return t->data + (flat / *d) * *d;
}

bool explain_softmax(OpExplain *e) {
    size_t d;
    const double *x = row_of(e->in[0], e->flat, &d);
    const double *y = row_of(e->out, e->flat, &d);
    size_t j = e->out->shape.rank ? e->index[e->out->shape.rank - 1] : 0;
    double max = -INFINITY;
    for (size_t k = 0; k < d; k++)
        if (x[k] > max)
            max = x[k];
    // Small scores read best as the document writes them, exp(x) / sum; large ones need the
    // max subtracted, as the kernel always does, or exp() overflows, and very negative ones
    // too, or every exp prints as 0 and the divisions read 0 / 0.
    bool shift = isfinite(max) && (max > 700 || exp(max) < pow(10.0, -e->digits));
    double m = shift ? max : 0;
    StrBuf sb;
    strbuf_init(&sb);
    double sum = 0;
    for (size_t k = 0; k < d; k++) {
        double ex = exp(x[k] - m);
        sum += ex;
        if (!e->row && k != j && d > 8)
            continue;
        strbuf_puts(&sb, "exp(");
        num(&sb, e, e->in[0], x[k]);
        if (shift) {
            strbuf_puts(&sb, max < 0 ? " - (" : " - ");
            num(&sb, e, e->in[0], max);
            if (max < 0)
                strbuf_putc(&sb, ')');
        }
        strbuf_puts(&sb, ") = ");
        num(&sb, e, e->out, ex);
        finish(e, &sb);
        strbuf_init(&sb);
    }
    // Said here, not last: the work ends with the element's own division.
    if (!shift && max != 0) {
        strbuf_puts(&sb, "(the tracer subtracts the row max ");
        num(&sb, e, e->in[0], max);
        strbuf_puts(&sb, " before exp(): the weights are the same, and large scores cannot overflow)");
        finish(e, &sb);
        strbuf_init(&sb);
    }
    strbuf_puts(&sb, "sum = ");
    num(&sb, e, e->out, sum);
    strbuf_printf(&sb, "   (over all %zu entries of the row)", d);
    finish(e, &sb);
    size_t first = e->row ? 0 : j, last = e->row ? d : j + 1;
    size_t base = e->flat - j;
    for (size_t k = first; k < last; k++) {
        strbuf_init(&sb);
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        if (e->out->shape.rank)
            idx[e->out->shape.rank - 1] = k;
        ref(&sb, e->out_name, idx, e->out->shape.rank);
        strbuf_puts(&sb, " = ");
        num(&sb, e, e->out, exp(x[k] - m));
        strbuf_puts(&sb, " / ");
        num(&sb, e, e->out, sum);
        strbuf_puts(&sb, " = ");
        num(&sb, e, e->out, e->out->data[base + k]);
        finish(e, &sb);
    }
    (void)y;
    return true;
}

// mean and variance of n values at stride `stride`, written out.
// var_label names the variance line ("variance", or the stage element it is).
static void moments(OpExplain *e, const Tensor *t, const double *x, size_t n, size_t stride, const char *var_label,
                    double *mean, double *var) {
    StrBuf sb;
    strbuf_init(&sb);
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += x[k * stride];
    *mean = s / (double)n;
    strbuf_puts(&sb, "mean = (");
    for (size_t k = 0; k < n; k++) {
        if (k)
            strbuf_puts(&sb, " + ");
        num(&sb, e, t, x[k * stride]);
    }
    strbuf_printf(&sb, ") / %zu = ", n);
    num(&sb, e, t, *mean);
    finish(e, &sb);
    strbuf_init(&sb);
    double v = 0;
    for (size_t k = 0; k < n; k++)
        v += (x[k * stride] - *mean) * (x[k * stride] - *mean);
    *var = v / (double)n;
    strbuf_printf(&sb, "%s = [", var_label);
    for (size_t k = 0; k < n; k++) {
        if (k)
            strbuf_puts(&sb, " + ");
        strbuf_putc(&sb, '(');
        num(&sb, e, t, x[k * stride]);
        strbuf_puts(&sb, " - ");
        num(&sb, e, t, *mean);
        strbuf_puts(&sb, ")²");
    }
    strbuf_printf(&sb, "] / %zu = ", n);
    num(&sb, e, t, *var);
    finish(e, &sb);
}

static double affine_at(const Tensor *p, size_t j) {
    return p->shape.rank == 0 ? p->data[0] : p->data[j];
}

// One normalised element: (x - mean) / sqrt(var + eps), then gamma and beta.
static void norm_line(OpExplain *e, const size_t *idx, double x, double mean, double var, size_t j,
                      size_t flat) {
    const Tensor *g = e->in[1], *b = e->in[2];
    double eps = e->attrs->number;
    double xn = (x - mean) / sqrt(var + eps);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "x_norm = (");
    num(&sb, e, e->in[0], x);
    strbuf_puts(&sb, " - ");
    num(&sb, e, e->in[0], mean);
    strbuf_puts(&sb, ") / sqrt(");
    num(&sb, e, e->in[0], var);
    char epsbuf[64];
    format_short(eps, epsbuf, sizeof(epsbuf));
    strbuf_printf(&sb, " + %s) = ", epsbuf);
    num(&sb, e, e->out, xn);
    strbuf_puts(&sb, ";  ");
    ref(&sb, e->out_name, idx, e->out->shape.rank);
    strbuf_puts(&sb, " = ");
    num(&sb, e, g, affine_at(g, j));
    strbuf_puts(&sb, " × ");
    num(&sb, e, e->out, xn);
    strbuf_puts(&sb, " + ");
    num(&sb, e, b, affine_at(b, j));
    strbuf_puts(&sb, " = ");
    num(&sb, e, e->out, e->out->data[flat]);
    finish(e, &sb);
}

bool explain_layernorm(OpExplain *e) {
    size_t d;
    const double *x = row_of(e->in[0], e->flat, &d);
    size_t rank = e->out->shape.rank;
    size_t j = e->index[rank - 1];
    double mean, var;
    moments(e, e->in[0], x, d, 1, "variance", &mean, &var);
    size_t first = e->row ? 0 : j, last = e->row ? d : j + 1;
    for (size_t k = first; k < last; k++) {
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        idx[rank - 1] = k;
        norm_line(e, idx, x[k], mean, var, k, e->flat - j + k);
    }
    return true;
}

bool explain_batchnorm(OpExplain *e) {
    if (e->row)
        return false;
    const Tensor *x = e->in[0];
    size_t d = x->shape.dim[x->shape.rank - 1];
    size_t j = e->index[x->shape.rank - 1];
    double mean, var;
    op_work(e, "feature %zu, over every token of every sequence:", j);
    moments(e, x, x->data + j, x->size / d, d, "variance", &mean, &var);
    norm_line(e, e->index, x->data[e->flat], mean, var, j, e->flat);
    return true;
}

// ---------------------------------------------------------------- reductions

bool explain_reduce(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *x = e->in[0];
    const OpAttrs *at = e->attrs;
    KernelReduce op = (KernelReduce)e->op->variant;
    // The values reduced into this element: all of x, or one line along `axis`.
    size_t n, stride, start;
    if (at->axis == KERNEL_ALL_AXES) {
        n = x->size;
        stride = 1;
        start = 0;
    } else {
        size_t axis = (size_t)at->axis;
        n = x->shape.dim[axis];
        stride = 1;
        for (size_t i = axis + 1; i < x->shape.rank; i++)
            stride *= x->shape.dim[i];
        // The output index without the reduced axis (or with it at 0 under keepdims).
        size_t src[TENSOR_MAX_RANK] = {0};
        size_t o = 0;
        for (size_t i = 0; i < x->shape.rank; i++) {
            if (i == axis) {
                src[i] = 0;
                if (at->keepdims)
                    o++;
            } else {
                src[i] = e->index[o++];
            }
        }
        start = flat_of(x, src);
    }
    const double *v = x->data + start;
    StrBuf sb;
    strbuf_init(&sb);
    if (op == KERNEL_VAR) {
        double mean, var;
        ref(&sb, e->out_name, e->index, e->out->shape.rank);
        if (sb.failed)
            op_work_failed(e);
        else
            moments(e, x, v, n, stride, strbuf_str(&sb), &mean, &var);
        strbuf_finish(&sb);
        return true;
    }
    lhs(&sb, e);
    const char *open = op == KERNEL_MEAN ? "(" : op == KERNEL_MAX ? "max(" : op == KERNEL_MIN ? "min(" :
                       op == KERNEL_ARGMAX ? "argmax(" : "";
    const char *sep = op == KERNEL_SUM || op == KERNEL_MEAN ? " + " : ", ";
    strbuf_puts(&sb, open);
    for (size_t k = 0; k < n; k++) {
        if (k)
            strbuf_puts(&sb, sep);
        num(&sb, e, x, v[k * stride]);
    }
    if (op == KERNEL_MEAN)
        strbuf_printf(&sb, ") / %zu", n);
    else if (op != KERNEL_SUM)
        strbuf_putc(&sb, ')');
    if (op == KERNEL_ARGMAX) {
        result(&sb, e);
        strbuf_puts(&sb, " (a position, counting from 0)");
        finish(e, &sb);
        return true;
    }
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_numel(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *x = e->in[0];
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    for (size_t i = 0; i < x->shape.rank; i++) {
        if (i)
            strbuf_puts(&sb, " × ");
        char buf[64];
        format_count((double)x->shape.dim[i], buf, sizeof(buf));
        strbuf_puts(&sb, buf);
    }
    if (x->shape.rank == 0)
        strbuf_puts(&sb, "1 (a scalar)");
    result(&sb, e);
    finish(e, &sb);
    return true;
}

// ---------------------------------------------------------------- joining and heads

bool explain_concat(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    size_t axis = (size_t)e->attrs->axis;
    size_t pos = e->index[axis], part = 0;
    while (part + 1 < e->n_in && pos >= e->in[part]->shape.dim[axis])
        pos -= e->in[part++]->shape.dim[axis];
    size_t idx[TENSOR_MAX_RANK];
    memcpy(idx, e->index, sizeof(idx));
    idx[axis] = pos;
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    ref(&sb, e->in_names[part], idx, e->out->shape.rank);
    strbuf_printf(&sb, " (part %zu of %zu)", part + 1, e->n_in);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_split_heads(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    // out [..., h, n, dh] <- x [..., n, h*dh]
    size_t r = e->out->shape.rank;
    size_t h = e->index[r - 3], i = e->index[r - 2], k = e->index[r - 1];
    size_t dh = e->out->shape.dim[r - 1];
    size_t src[TENSOR_MAX_RANK];
    for (size_t a = 0; a + 3 < r; a++)
        src[a] = e->index[a];
    src[r - 3] = i;
    src[r - 2] = h * dh + k;
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    ref(&sb, e->in_names[0], src, r - 1);
    strbuf_printf(&sb, " (head %zu takes columns %zu to %zu)", h, h * dh, (h + 1) * dh - 1);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_merge_heads(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    // out [..., n, h*dh] <- x [..., h, n, dh]
    const Tensor *x = e->in[0];
    size_t r = x->shape.rank;
    size_t dh = x->shape.dim[r - 1];
    size_t n_idx = e->index[e->out->shape.rank - 2], col = e->index[e->out->shape.rank - 1];
    size_t src[TENSOR_MAX_RANK];
    for (size_t a = 0; a + 3 < r; a++)
        src[a] = e->index[a];
    src[r - 3] = col / dh;
    src[r - 2] = n_idx;
    src[r - 1] = col % dh;
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    ref(&sb, e->in_names[0], src, r);
    strbuf_printf(&sb, " (column %zu is column %zu of head %zu)", col, col % dh, col / dh);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

// ---------------------------------------------------------------- builders

bool explain_causal_mask(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    size_t i = e->index[0], j = e->index[1];
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    num(&sb, e, e->out, e->out->data[e->flat]);
    if (j > i)
        strbuf_printf(&sb, ": key %zu comes after query %zu, so it must stay hidden", j, i);
    else
        strbuf_printf(&sb, ": key %zu is %s query %zu, so it may be seen", j, j == i ? "the same token as" : "before", i);
    finish(e, &sb);
    return true;
}

bool explain_relative_positions(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    size_t i = e->index[0], j = e->index[1];
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    strbuf_printf(&sb, "i - j = %zu - %zu", i, j);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_arange(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%s[%zu] = position %zu", e->out_name, e->index[0], e->index[0]);
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_alibi_slopes(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    size_t k = e->index[0] + 1, h = e->out->shape.dim[0];
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    strbuf_printf(&sb, "2^(-8 × %zu / %zu) = 2^(", k, h);
    num(&sb, e, e->out, -8.0 * (double)k / (double)h);
    strbuf_putc(&sb, ')');
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_sinusoidal(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    size_t pos = e->index[0], dim = e->index[1], d = e->out->shape.dim[1];
    size_t i2 = dim - dim % 2;
    double base = e->attrs->number;
    double denom = pow(base, (double)i2 / (double)d);
    char basebuf[64];
    format_short(base, basebuf, sizeof(basebuf));
    StrBuf sb;
    strbuf_init(&sb);
    lhs(&sb, e);
    strbuf_printf(&sb, "%s(%zu / %s^(%zu/%zu)) = %s(%zu / ", dim % 2 ? "cos" : "sin", pos, basebuf, i2, d,
                  dim % 2 ? "cos" : "sin", pos);
    num(&sb, e, e->out, denom);
    strbuf_printf(&sb, ") = %s(", dim % 2 ? "cos" : "sin");
    num(&sb, e, e->out, (double)pos / denom);
    strbuf_putc(&sb, ')');
    result(&sb, e);
    finish(e, &sb);
    return true;
}

bool explain_rope(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *x = e->in[0], *p = e->in[1];
    size_t r = x->shape.rank;
    size_t row = e->index[r - 2], col = e->index[r - 1], d = x->shape.dim[r - 1];
    size_t i = col / 2;
    double pos = p->data[p->shape.rank ? row : 0];
    double base = e->attrs->number;
    double theta = pow(base, -2.0 * (double)i / (double)d), angle = pos * theta;
    const double *xr = x->data + (e->flat - col);
    double a = xr[2 * i], b = xr[2 * i + 1];
    char basebuf[64];
    format_short(base, basebuf, sizeof(basebuf));
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "pair %zu (columns %zu and %zu): theta = %s^(-2×%zu/%zu) = ", i, 2 * i, 2 * i + 1, basebuf, i,
                  d);
    num(&sb, e, e->out, theta);
    strbuf_puts(&sb, ", angle = ");
    num(&sb, e, p, pos);
    strbuf_puts(&sb, " × ");
    num(&sb, e, e->out, theta);
    strbuf_puts(&sb, " = ");
    num(&sb, e, e->out, angle);
    finish(e, &sb);
    strbuf_init(&sb);
    lhs(&sb, e);
    num(&sb, e, x, col % 2 ? b : a);
    strbuf_puts(&sb, "×cos(");
    num(&sb, e, e->out, angle);
    strbuf_puts(&sb, col % 2 ? ") + " : ") - ");
    num(&sb, e, x, col % 2 ? a : b);
    strbuf_puts(&sb, "×sin(");
    num(&sb, e, e->out, angle);
    strbuf_putc(&sb, ')');
    result(&sb, e);
    finish(e, &sb);
    return true;
}

// ---------------------------------------------------------------- loss

bool explain_cross_entropy(OpExplain *e) {
    if (e->row)
        return false;  // no row form: each element is explained alone
    const Tensor *logits = e->in[0], *targets = e->in[1];
    size_t v = logits->shape.dim[logits->shape.rank - 1];
    const double *row = logits->data + e->flat * v;
    size_t t = (size_t)targets->data[e->flat];
    double max = -INFINITY;
    for (size_t k = 0; k < v; k++)
        if (row[k] > max)
            max = row[k];
    double sum = 0;
    for (size_t k = 0; k < v; k++)
        sum += exp(row[k] - max);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "log(sum of exp(logits)) = ");
    num(&sb, e, logits, max);
    strbuf_puts(&sb, " + log(");
    num(&sb, e, logits, sum);
    strbuf_puts(&sb, ") = ");
    num(&sb, e, logits, max + log(sum));
    strbuf_puts(&sb, "   (the row max taken out first)");
    finish(e, &sb);
    strbuf_init(&sb);
    lhs(&sb, e);
    num(&sb, e, logits, max + log(sum));
    strbuf_printf(&sb, " - logit[%zu] = ", t);
    num(&sb, e, logits, max + log(sum));
    strbuf_puts(&sb, " - ");
    num(&sb, e, logits, row[t]);
    result(&sb, e);
    finish(e, &sb);
    return true;
}
