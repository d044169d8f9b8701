// op_softmax: softmax and log-softmax, over the last axis or the one axis= names.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_axis.h"
#include "kernel_grad.h"
#include "op.h"

#define SOFTMAX_LABELS_SHOWN 4  // labels of the axis named in its description; more end in "..."

// What a softmax over an axis other than the last does, in the words of the entry's .about
// ("softmax over the last axis: exp(...)"): "softmax down each column, over axis 0 (the rows
// The, cat, sat): exp(...)". An axis's labels name it when it has them.
static bool describe_axis(OpCheck *c, size_t axis) {
    const char *about = c->op->about, *formula = strstr(about, ": ");
    const char *what = c->op->variant == KERNEL_LOG_SOFTMAX ? "log of the softmax" : "softmax";
    ASSERT(formula);
    StrBuf sb;
    strbuf_init(&sb);
    bool rows = axis + 2 == c->shapes[0]->rank;
    strbuf_printf(&sb, "%s %s axis %zu", what, rows ? "down each column, over" : "over", axis);
    const Labels *labels = &c->labels[0][axis];
    size_t n = labels->items ? labels->n : 0;
    if (rows || n)
        strbuf_puts(&sb, rows ? " (the rows" : " (");
    for (size_t k = 0; k < n && k < SOFTMAX_LABELS_SHOWN; k++)
        strbuf_printf(&sb, "%s%s", k ? ", " : rows ? " " : "", k + 1 == SOFTMAX_LABELS_SHOWN && n > k + 1 ? "..." : labels->items[k]);
    if (rows || n)
        strbuf_putc(&sb, ')');
    strbuf_puts(&sb, formula);
    c->about = sb.failed ? NULL : arena_strdup(c->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    return c->about || op_out_of_memory(c->problem);
}

// The axis a softmax runs along: axis= (parameter 1), the last when it is left out.
static bool infer_softmax(OpCheck *c) {
    const char *name = c->op->name;
    size_t rank = c->shapes[0]->rank;
    if (rank == 0) {
        op_error(c->problem, OP_INPUT(0), "%s needs at least one axis: the softmax of a single number is 1", name);
        return false;
    }
    size_t axis = rank - 1;
    if (c->present[1] && !op_resolve_axis(c, 1, c->constants[1], rank, &axis))
        return false;
    c->attrs.axis = (int)axis;
    if (c->shapes[0]->dim[axis] == 0)
        return op_refuse_empty_axis(c, name, "a largest value to subtract, or a sum to divide by", axis);
    if (axis + 1 < rank && !describe_axis(c, axis))
        return false;
    return op_infer_same(c);
}

static bool axis_is_last(const Tensor *t, const OpAttrs *attrs) {
    return (size_t)attrs->axis + 1 == t->shape.rank;
}

static bool compute_softmax(OpRun *r) {
    KernelSoftmax kind = (KernelSoftmax)r->op->variant;
    // the last axis has the rows kernel, which the fast layer spreads over threads
    if (kind == KERNEL_SOFTMAX && axis_is_last(r->in[0], r->attrs))
        kernel_softmax(r->out, r->in[0]);
    else
        kernel_softmax_axis(r->out, r->in[0], (size_t)r->attrs->axis, kind);
    return true;
}

// The values of t between two neighbours along axis.
static size_t axis_step(const Tensor *t, size_t axis) {
    size_t step = 1;
    for (size_t i = axis + 1; i < t->shape.rank; i++)
        step *= t->shape.dim[i];
    return step;
}

// Sums of each line along the softmax's axis as a note: each when there are few enough to read,
// or once when they all print alike.
static void note_row_sums(OpNotes *n) {
    const Tensor *t = n->out;
    size_t axis = (size_t)n->attrs->axis;
    // the shape rule refuses a scalar and an empty axis
    ASSERT(axis < t->shape.rank && t->shape.dim[axis] >= 1);
    size_t d = t->shape.dim[axis], step = axis_step(t, axis);
    size_t rows = t->size / d;
    if (rows == 0)
        return;
    StrBuf line;
    strbuf_init(&line);
    bool nan_row = false, all_same = true;
    char first[FORMAT_NUMBER_CAP];
    for (size_t r = 0; r < rows; r++) {
        const double *y = t->data + (r / step) * d * step + r % step;
        double s = 0;
        for (size_t j = 0; j < d; j++)
            s += y[j * step];
        nan_row = nan_row || isnan(s);
        char v[FORMAT_NUMBER_CAP];
        format_number(s, n->digits, v, sizeof(v));
        if (r == 0)
            memcpy(first, v, sizeof(first));
        all_same = all_same && strcmp(v, first) == 0;
        if (rows <= 16)
            strbuf_printf(&line, "%s%s", r ? ", " : "", v);
    }
    // Sixteen sums that print alike are one fact, said once; more than sixteen that do not are
    // too many to read.
    bool once = rows > 1 && all_same && !nan_row;
    if (rows > 16 && !once) {
        strbuf_finish(&line);
        return;
    }
    if (line.failed)
        n->failed = true;
    else if (!axis_is_last(t, n->attrs) && once)
        op_note(n, "each line along axis %zu is a probability distribution: all %zu sums are %s", axis, rows, first);
    else if (!axis_is_last(t, n->attrs))
        op_note(n, "each line along axis %zu is a probability distribution: sums %s%s", axis, strbuf_str(&line),
                nan_row ? "; a nan line had no finite score to weigh (all -inf, or a +inf)" : "");
    else if (nan_row)
        op_note(n, "row sums %s; a nan row had no finite score to weigh (all -inf, or a +inf)", strbuf_str(&line));
    else if (once)
        op_note(n, "each row is a probability distribution: all %zu row sums are %s", rows, first);
    else
        op_note(n, "each row is a probability distribution: row sums %s", strbuf_str(&line));
    strbuf_finish(&line);
}

// The work of the element at e->index, along the softmax's axis; whole: of every element of its
// line (a row, when the axis is the last), as --explain's row form writes it.
static void explain_line(OpExplain *e, bool whole) {
    size_t axis = (size_t)e->attrs->axis, rank = e->out->shape.rank;
    size_t d = e->in[0]->shape.dim[axis], step = axis_step(e->in[0], axis), j = e->index[axis];
    size_t base = e->flat - j * step;  // the line's first element, in the input and in the result
    const double *x = e->in[0]->data + base;
    bool log_form = e->op->variant == KERNEL_LOG_SOFTMAX;
    double max = -INFINITY;
    for (size_t k = 0; k < d; k++)
        if (x[k * step] > max)
            max = x[k * step];
    // Small scores read best as the document writes them, exp(x) / sum; large ones need the
    // max subtracted, as the kernel always does, or exp() overflows, and very negative ones
    // too, or every exp prints as 0 and the divisions read 0 / 0. A log-softmax always
    // subtracts it, as its result does.
    bool shift = isfinite(max) && (log_form || max > 700 || exp(max) < pow(10.0, -e->digits));
    double m = shift ? max : 0;
    StrBuf sb;
    strbuf_init(&sb);
    double sum = 0;
    for (size_t k = 0; k < d; k++) {
        double xk = x[k * step], ex = exp(xk - m);
        sum += ex;
        if (!whole && k != j && d > 8)
            continue;
        strbuf_puts(&sb, "exp(");
        op_work_num(&sb, e, e->in[0], xk);
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
        strbuf_puts(&sb, axis + 1 == rank ? "(the tracer subtracts the row max " : "(the tracer subtracts the max ");
        op_work_num(&sb, e, e->in[0], max);
        strbuf_puts(&sb, " before exp(): the weights are the same, and large scores cannot overflow)");
        op_work_line(e, &sb);
        strbuf_init(&sb);
    }
    strbuf_puts(&sb, "sum = ");
    op_work_num(&sb, e, e->out, sum);
    if (axis + 1 == rank)
        strbuf_printf(&sb, "   (over all %zu entries of the row)", d);
    else
        strbuf_printf(&sb, "   (over all %zu entries along axis %zu)", d, axis);
    if (log_form) {
        strbuf_puts(&sb, ", log(sum) = ");
        op_work_num(&sb, e, e->out, log(sum));
    }
    op_work_line(e, &sb);
    size_t first = whole ? 0 : j, last = whole ? d : j + 1;
    for (size_t k = first; k < last; k++) {
        strbuf_init(&sb);
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        idx[axis] = k;
        op_work_ref(&sb, e->out_name, idx, rank);
        strbuf_puts(&sb, " = ");
        if (log_form) {
            // x - max - log(sum): the log of the weight, never rounded through the weight itself
            op_work_num(&sb, e, e->in[0], x[k * step]);
            strbuf_puts(&sb, max < 0 ? " - (" : " - ");
            op_work_num(&sb, e, e->in[0], max);
            strbuf_puts(&sb, max < 0 ? ") - " : " - ");
            op_work_num(&sb, e, e->out, log(sum));
        } else {
            op_work_num(&sb, e, e->out, exp(x[k * step] - m));
            strbuf_puts(&sb, " / ");
            op_work_num(&sb, e, e->out, sum);
        }
        strbuf_puts(&sb, " = ");
        op_work_num(&sb, e, e->out, e->out->data[base + k * step]);
        op_work_line(e, &sb);
    }
}

// The row form writes a whole last-axis row: one line of work when the softmax runs along it,
// else the work of each of its elements along the axis.
static void explain_softmax(OpExplain *e) {
    if (!e->row || axis_is_last(e->out, e->attrs)) {
        explain_line(e, e->row);
        return;
    }
    size_t rank = e->out->shape.rank, d = e->out->shape.dim[rank - 1], first = e->flat;
    for (size_t k = 0; k < d; k++) {
        e->flat = first + k;
        e->index[rank - 1] = k;
        explain_line(e, false);
    }
}

// ---------------------------------------------------------------- the table

static bool grad_softmax(OpGrad *g) {
    KernelSoftmax kind = (KernelSoftmax)g->op->variant;
    if (kind == KERNEL_SOFTMAX && axis_is_last(g->out, g->attrs))
        kernel_grad_softmax(g->din, g->dout, g->out);
    else
        kernel_grad_softmax_axis(g->din, g->dout, g->out, (size_t)g->attrs->axis, kind);
    return true;
}

// name[..., i, ...] with i written as the letter i at the axis: an element of the line summed over.
static void grad_line_ref(StrBuf *sb, const char *name, const size_t *idx, size_t rank, size_t axis,
                          const char *at_axis) {
    strbuf_printf(sb, "%s[", name);
    for (size_t i = 0; i < rank; i++) {
        if (i == axis)
            strbuf_printf(sb, "%s%s", at_axis, i + 1 < rank ? ", " : "");
        else
            strbuf_printf(sb, "%zu%s", idx[i], i + 1 < rank ? ", " : "");
    }
    strbuf_putc(sb, ']');
}

// Softmax's Jacobian along a line: dw_i/dx_j = w_i (δ_ij - w_j), so the share at j is
// sum_i dL/dw_i w_i (δ_ij - w_j). Log-softmax's: dy_i/dx_j = δ_ij - exp(y_j), so the share at j
// is dL/dy_j - exp(y_j) sum_i dL/dy_i.
static void explain_grad_softmax(OpGradWork *w) {
    size_t axis = (size_t)w->attrs->axis, rank = w->out->shape.rank;  // the shape rule gave rank >= 1
    size_t d = w->out->shape.dim[axis], step = axis_step(w->out, axis), j = w->index[axis];
    size_t base = w->flat - j * step;
    const double *y = w->out->data + base, *g = w->dout->data + base;
    StrBuf *sb = w->sb;
    char col[32];
    snprintf(col, sizeof(col), "%zu", j);
    if (w->op->variant == KERNEL_LOG_SOFTMAX) {
        grad_line_ref(sb, w->dout_name, w->index, rank, axis, col);
        strbuf_puts(sb, " - exp(");
        grad_line_ref(sb, w->out_name, w->index, rank, axis, col);
        strbuf_puts(sb, ") × sum over i of ");
        grad_line_ref(sb, w->dout_name, w->index, rank, axis, "i");
        strbuf_puts(sb, " = ");
        op_grad_num(w, g[j * step]);
        strbuf_puts(sb, " - ");
        op_grad_num(w, exp(y[j * step]));
        strbuf_puts(sb, "×(");
        for (size_t i = 0; i < d; i++) {
            strbuf_puts(sb, i ? " + " : "");
            op_grad_num(w, g[i * step]);
        }
        strbuf_puts(sb, ") = ");
        op_grad_num(w, w->share->data[w->flat]);
        return;
    }
    strbuf_puts(sb, "sum over i of ");
    grad_line_ref(sb, w->dout_name, w->index, rank, axis, "i");
    strbuf_puts(sb, " × ");
    grad_line_ref(sb, w->out_name, w->index, rank, axis, "i");
    strbuf_printf(sb, " × (δ(i, %zu) - ", j);
    grad_line_ref(sb, w->out_name, w->index, rank, axis, col);
    strbuf_puts(sb, ") = ");
    for (size_t i = 0; i < d; i++) {
        strbuf_puts(sb, i ? " + (" : "(");
        op_grad_num(w, g[i * step]);
        strbuf_puts(sb, "×");
        op_grad_num(w, y[i * step]);
        strbuf_printf(sb, "×(%d - ", i == j);
        op_grad_num(w, y[j * step]);
        strbuf_puts(sb, "))");
    }
    strbuf_puts(sb, " = ");
    op_grad_num(w, w->share->data[w->flat]);
}

#define SOFTMAX_AXIS {"axis", PARAM_AXIS, true, -1}

static const OpDef ops[] = {
    {.name = "softmax", .about = "softmax over the last axis: exp(x - max) / sum of exp(x - max)",
     .variant = KERNEL_SOFTMAX, .params = {OP_X, SOFTMAX_AXIS}, .infer = infer_softmax, .compute = compute_softmax,
     .notes = note_row_sums, .explain = explain_softmax, .row_form = true, .distribution = true,
     .grad = grad_softmax, .grad_formula = {"%y * (%g - sum(%g * %y, axis=%a))"},
     .explain_grad = explain_grad_softmax},
    // The log of the softmax, as x - max - log(sum of exp(x - max)): a weight of 1e-320 is a
    // log-probability of -736.8, where log(softmax(x)) gives log of a rounded number, or -inf.
    {.name = "log_softmax", .about = "log of the softmax over the last axis: x - max - log(sum of exp(x - max))",
     .variant = KERNEL_LOG_SOFTMAX, .params = {OP_X, SOFTMAX_AXIS}, .infer = infer_softmax,
     .compute = compute_softmax, .explain = explain_softmax, .row_form = true, .grad = grad_softmax,
     .grad_formula = {"%g - exp(%y) * sum(%g, axis=%a)"}, .explain_grad = explain_grad_softmax},
};

const OpFamily op_family_softmax = OP_FAMILY(ops);
