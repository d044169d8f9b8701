// op_softmax: softmax over the last axis.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

static bool infer_softmax(OpCheck *c) {
    if (c->shapes[0]->rank == 0) {
        op_error(c->problem, OP_INPUT(0), "softmax needs at least one axis: the softmax of a single number is 1");
        return false;
    }
    if (c->shapes[0]->dim[c->shapes[0]->rank - 1] == 0)
        return op_refuse_empty_axis(c, "softmax", "a largest value to subtract, or a sum to divide by",
                                    c->shapes[0]->rank - 1);
    return op_infer_same(c);
}

static bool compute_softmax(OpRun *r) {
    kernel_softmax(r->out, r->in[0]);
    return true;
}

// Sums of each row (last axis) as a note, when there are few enough rows to read.
static void note_row_sums(OpNotes *n) {
    const Tensor *t = n->out;
    // the shape rule refuses a scalar and an empty last axis
    ASSERT(t->shape.rank >= 1 && t->shape.dim[t->shape.rank - 1] >= 1);
    size_t d = t->shape.dim[t->shape.rank - 1];
    size_t rows = t->size / d;
    if (rows == 0 || rows > 16)
        return;
    StrBuf line;
    strbuf_init(&line);
    bool nan_row = false;
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t j = 0; j < d; j++)
            s += t->data[r * d + j];
        nan_row = nan_row || isnan(s);
        char v[FORMAT_NUMBER_CAP];
        format_number(s, n->digits, v, sizeof(v));
        strbuf_printf(&line, "%s%s", r ? ", " : "", v);
    }
    // A row whose scores are all -inf (fully masked), or hold +inf, has no weights to give.
    if (line.failed)
        n->failed = true;
    else if (nan_row)
        op_note(n, "row sums %s; a nan row had no finite score to weigh (all -inf, or a +inf)", strbuf_str(&line));
    else
        op_note(n, "each row is a probability distribution: row sums %s", strbuf_str(&line));
    strbuf_finish(&line);
}

static void explain_softmax(OpExplain *e) {
    size_t d;
    const double *x = op_row_of(e->in[0], e->flat, &d);  // the output has the input's rank, 1 or more
    size_t j = e->index[e->out->shape.rank - 1];
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
        op_work_num(&sb, e, e->in[0], x[k]);
        if (shift) {
            strbuf_puts(&sb, max < 0 ? " - (" : " - ");
            op_work_num(&sb, e, e->in[0], max);
            if (max < 0)
                strbuf_putc(&sb, ')');
        }
        strbuf_puts(&sb, ") = ");
        op_work_num(&sb, e, e->out, ex);
        op_work_line(e, &sb);
        strbuf_init(&sb);
    }
    // Said here, not last: the work ends with the element's own division.
    if (!shift && max != 0) {
        strbuf_puts(&sb, "(the tracer subtracts the row max ");
        op_work_num(&sb, e, e->in[0], max);
        strbuf_puts(&sb, " before exp(): the weights are the same, and large scores cannot overflow)");
        op_work_line(e, &sb);
        strbuf_init(&sb);
    }
    strbuf_puts(&sb, "sum = ");
    op_work_num(&sb, e, e->out, sum);
    strbuf_printf(&sb, "   (over all %zu entries of the row)", d);
    op_work_line(e, &sb);
    size_t first = e->row ? 0 : j, last = e->row ? d : j + 1;
    size_t base = e->flat - j;
    for (size_t k = first; k < last; k++) {
        strbuf_init(&sb);
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        idx[e->out->shape.rank - 1] = k;
        op_work_ref(&sb, e->out_name, idx, e->out->shape.rank);
        strbuf_puts(&sb, " = ");
        op_work_num(&sb, e, e->out, exp(x[k] - m));
        strbuf_puts(&sb, " / ");
        op_work_num(&sb, e, e->out, sum);
        strbuf_puts(&sb, " = ");
        op_work_num(&sb, e, e->out, e->out->data[base + k]);
        op_work_line(e, &sb);
    }
}

// ---------------------------------------------------------------- the table

static bool grad_softmax(OpGrad *g) {
    kernel_grad_softmax(g->din, g->dout, g->out);
    return true;
}

// name[r..., i] with i written as the letter i: an element of the row being summed over.
static void grad_row_ref(StrBuf *sb, const char *name, const size_t *idx, size_t rank, const char *last) {
    strbuf_printf(sb, "%s[", name);
    for (size_t i = 0; i + 1 < rank; i++)
        strbuf_printf(sb, "%zu, ", idx[i]);
    strbuf_printf(sb, "%s]", last);
}

// Softmax's Jacobian at row r: dw_i/dx_j = w_i (δ_ij - w_j), so the share at j is
// sum_i dL/dw_i w_i (δ_ij - w_j).
static void explain_grad_softmax(OpGradWork *w) {
    size_t d;
    const double *y = op_row_of(w->out, w->flat, &d);
    const double *g = w->dout->data + (y - w->out->data);
    size_t rank = w->out->shape.rank, j = w->index[rank - 1];  // op_row_of checked rank >= 1
    StrBuf *sb = w->sb;
    char col[32];
    snprintf(col, sizeof(col), "%zu", j);
    strbuf_puts(sb, "sum over i of ");
    grad_row_ref(sb, w->dout_name, w->index, rank, "i");
    strbuf_puts(sb, " × ");
    grad_row_ref(sb, w->out_name, w->index, rank, "i");
    strbuf_printf(sb, " × (δ(i, %zu) - ", j);
    grad_row_ref(sb, w->out_name, w->index, rank, col);
    strbuf_puts(sb, ") = ");
    for (size_t i = 0; i < d; i++) {
        strbuf_puts(sb, i ? " + (" : "(");
        op_grad_num(w, g[i]);
        strbuf_puts(sb, "×");
        op_grad_num(w, y[i]);
        strbuf_printf(sb, "×(%d - ", i == j);
        op_grad_num(w, y[j]);
        strbuf_puts(sb, "))");
    }
    strbuf_puts(sb, " = ");
    op_grad_num(w, w->share->data[w->flat]);
}

static const OpDef ops[] = {
    {.name = "softmax", .about = "softmax over the last axis: exp(x - max) / sum of exp(x - max)",
     .params = {OP_X}, .infer = infer_softmax, .compute = compute_softmax, .notes = note_row_sums,
     .explain = explain_softmax, .row_form = true, .distribution = true, .grad = grad_softmax,
     .grad_formula = {"%y * (%g - sum(%g * %y, axis=-1))"}, .explain_grad = explain_grad_softmax},
};

const OpFamily op_family_softmax = OP_FAMILY(ops);
