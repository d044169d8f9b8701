// op: the helpers every family of operations shares: problems, notes and shown work
// collected for the caller, shape rules used by several families, and the pieces of a line of
// shown work.
#include "op.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

// ---------------------------------------------------------------- problems

bool op_error(OpProblem *p, OpTarget at, const char *fmt, ...) {
    if (p->failed)
        return false;
    p->failed = true;
    p->at = at;
    p->hint[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof(p->message), fmt, ap);
    va_end(ap);
    return false;
}

void op_hint(OpProblem *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->hint, sizeof(p->hint), fmt, ap);
    va_end(ap);
}

bool op_out_of_memory(OpProblem *p) {
    if (!p->failed) {
        p->failed = true;
        p->out_of_memory = true;
        p->message[0] = p->hint[0] = '\0';
    }
    return false;
}

// ---------------------------------------------------------------- notes and work

void op_note(OpNotes *n, const char *fmt, ...) {
    if (n->n_lines == OP_MAX_NOTES)
        return;
    // Measured first, so a long note (sixteen row sums at twelve digits) is never cut.
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *copy = len < 0 ? NULL : arena_alloc(n->arena, (size_t)len + 1);
    if (!copy) {
        n->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(copy, (size_t)len + 1, fmt, ap);
    va_end(ap);
    n->lines[n->n_lines++] = copy;
}

static void add_work_line(OpExplain *e, const char *text) {
    if (e->n_lines == e->cap_lines) {
        size_t cap = e->cap_lines ? e->cap_lines * 2 : 16;
        const char **lines = arena_array(e->arena, cap, sizeof(char *));
        if (!lines) {
            e->failed = true;
            return;
        }
        if (e->n_lines)
            memcpy(lines, e->lines, e->n_lines * sizeof(char *));
        e->lines = lines;
        e->cap_lines = cap;
    }
    const char *line = arena_strdup(e->arena, text);
    if (!line) {
        e->failed = true;
        return;
    }
    e->lines[e->n_lines++] = line;
}

void op_work(OpExplain *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    op_work_line(e, &sb);
}

void op_grad_num(OpGradWork *w, double v) {
    char buf[FORMAT_NUMBER_CAP];
    format_number(v, w->digits, buf, sizeof(buf));
    strbuf_puts(w->sb, buf);
}

void op_work_line(OpExplain *e, StrBuf *sb) {
    if (sb->failed)
        e->failed = true;  // a line cut short would be wrong arithmetic on the learner's screen
    else
        add_work_line(e, strbuf_str(sb));
    strbuf_finish(sb);
}

const char *op_prefix_gap(const OpDef *op) {
    size_t n = strlen(op->symbol);
    return n && isalpha((unsigned char)op->symbol[n - 1]) ? " " : "";
}

void op_work_num(StrBuf *sb, const OpExplain *e, const Tensor *t, double v) {
    char buf[FORMAT_NUMBER_CAP];
    if (t && t->is_count)
        format_whole(v, e->digits, buf, sizeof(buf));
    else
        format_number(v, e->digits, buf, sizeof(buf));
    strbuf_puts(sb, buf);
}

// name[i, j], or the bare name for a scalar.
void op_work_ref(StrBuf *sb, const char *name, const size_t *idx, size_t rank) {
    strbuf_puts(sb, name);
    if (rank == 0)
        return;
    strbuf_putc(sb, '[');
    for (size_t i = 0; i < rank; i++)
        strbuf_printf(sb, "%s%zu", i ? ", " : "", idx[i]);
    strbuf_putc(sb, ']');
}

void op_work_lhs(StrBuf *sb, const OpExplain *e) {
    op_work_ref(sb, e->out_name, e->index, e->out->shape.rank);
    strbuf_puts(sb, " = ");
}

void op_work_result(StrBuf *sb, const OpExplain *e) {
    strbuf_puts(sb, " = ");
    op_work_num(sb, e, e->out, e->out->data[e->flat]);
}

void op_broadcast_index(const Tensor *in, const Tensor *out, const size_t *out_idx, size_t *idx) {
    shape_broadcast_index(&in->shape, &out->shape, out_idx, idx);
}

void op_work_moments(OpExplain *e, const Tensor *t, const double *x, size_t n, size_t stride, const char *var_label,
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
        op_work_num(&sb, e, t, x[k * stride]);
    }
    strbuf_printf(&sb, ") / %zu = ", n);
    op_work_num(&sb, e, t, *mean);
    op_work_line(e, &sb);
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
        op_work_num(&sb, e, t, x[k * stride]);
        strbuf_puts(&sb, " - ");
        op_work_num(&sb, e, t, *mean);
        strbuf_puts(&sb, ")²");
    }
    strbuf_printf(&sb, "] / %zu = ", n);
    op_work_num(&sb, e, t, *var);
    op_work_line(e, &sb);
}

const double *op_row_of(const Tensor *t, size_t flat, size_t *d) {
    ASSERT(t->shape.rank >= 1);  // only the row-wise ops (softmax, the norms, the loss) ask
    *d = t->shape.dim[t->shape.rank - 1];
    return t->data + (flat / *d) * *d;
}

// ---------------------------------------------------------------- shape rules

void op_copy_labels(Labels *dst, const Labels *src, size_t rank) {
    for (size_t i = 0; i < rank; i++)
        dst[i] = src[i];
}

bool op_infer_same(OpCheck *c) {
    c->shape = *c->shapes[0];
    op_copy_labels(c->out_labels, c->labels[0], c->shape.rank);
    return true;
}

bool op_resolve_axis(OpCheck *c, size_t param, double value, size_t rank, size_t *axis) {
    long a = (long)value;
    long r = (long)rank;
    if (a < -r || a >= r) {
        if (rank == 0) {
            op_error(c->problem, OP_PARAM(param), "a scalar has no axis %ld", a);
            op_hint(c->problem, "leave out axis=: a scalar has no axes to choose from");
        } else {
            op_error(c->problem, OP_PARAM(param), "axis %ld does not exist: this tensor has %zu %s", a, rank,
                     rank == 1 ? "axis" : "axes");
            if (rank == 1)
                op_hint(c->problem, "its only axis is 0, or -1 for the last");
            else
                op_hint(c->problem, "axes are 0..%ld, or -1 for the last", r - 1);
        }
        return false;
    }
    *axis = (size_t)(a < 0 ? a + r : a);
    return true;
}

bool op_needs_rank(OpCheck *c, size_t input, size_t min_rank) {
    if (c->shapes[input]->rank >= min_rank)
        return true;
    char s[64];
    shape_format(c->shapes[input], s, sizeof(s));
    return op_error(c->problem, OP_INPUT(input), "%s needs a tensor with at least %zu %s, but this one is %s",
                    c->op->name, min_rank, min_rank == 1 ? "axis" : "axes", s);
}

bool op_multiply_adds(const OpDef *op, const Shape *const *in, const Shape *out, size_t *work) {
    *work = 0;
    return !op->cost || op->cost(in, out, work);
}

// "axis 1 of [2, 0]" or "the last axis of [2, 0]": an axis a learner can find.
static void axis_text(const Shape *s, size_t axis, char *buf, size_t cap) {
    char sh[64];
    shape_format(s, sh, sizeof(sh));
    if (axis + 1 == s->rank)
        snprintf(buf, cap, "the last axis of %s", sh);
    else
        snprintf(buf, cap, "axis %zu of %s", axis, sh);
}

bool op_refuse_empty_axis(OpCheck *c, const char *what, const char *nothing, size_t axis) {
    char ax[96];
    axis_text(c->shapes[0], axis, ax, sizeof(ax));
    op_error(c->problem, OP_INPUT(0), "%s over an empty axis: %s has no entries", what, ax);
    op_hint(c->problem, "no entries have %s (numpy refuses it too); slice at least one entry, as in X[:, 0:1] "
                        "rather than X[:, 0:0]", nothing);
    return false;
}

bool op_check_whole_indices(OpRun *r, size_t input, const Tensor *idx, size_t limit, const char *what,
                            const char *hint) {
    for (size_t k = 0; k < idx->size; k++) {
        double v = idx->data[k];
        if (v != floor(v) || v < 0 || v >= (double)limit) {
            char s[64];
            format_short(v, s, sizeof(s));
            char at[160] = "";
            if (idx->shape.rank > 0)
                snprintf(at, sizeof(at), " (entry %zu of %s)", k, r->in_names[input]);
            if (limit == 0)
                return op_error(r->problem, OP_INPUT(input), "%s %s%s points into nothing: there are no entries to pick",
                                what, s, at);
            op_error(r->problem, OP_INPUT(input), "%s %s%s must be a whole number from 0 to %zu", what, s, at, limit - 1);
            op_hint(r->problem, "%s", hint);
            return false;
        }
    }
    return true;
}

// How far a may be from its reference b and still be close to it (numpy's isclose).
double op_close_tolerance(const OpAttrs *at, double b) {
    return at->atol + at->rtol * fabs(b);
}

void op_allclose_worst(const Tensor *a, const Tensor *b, const OpAttrs *at, OpCloseWorst *w) {
    Shape s;
    *w = (OpCloseWorst){0};
    if (!kernel_broadcast_shape(&a->shape, &b->shape, &s))
        return;
    size_t n;
    shape_size(&s, &n);
    w->rank = s.rank;
    double worst = -1;  // how far the worst element is past its tolerance (inf for nan)
    for (size_t i = 0; i < n; i++) {
        size_t out_idx[TENSOR_MAX_RANK], ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK];
        shape_unflatten(&s, i, out_idx);
        shape_broadcast_index(&a->shape, &s, out_idx, ia);
        shape_broadcast_index(&b->shape, &s, out_idx, ib);
        double x = a->data[shape_flatten(&a->shape, ia)], y = b->data[shape_flatten(&b->shape, ib)];
        // Equal infinities are 0 apart (inf - inf would be nan); a nan makes the largest nan.
        double diff = x == y ? 0.0 : fabs(x - y);
        if (isnan(diff) || isnan(w->largest_difference))
            w->largest_difference = NAN;
        else if (diff > w->largest_difference)
            w->largest_difference = diff;
        if (kernel_isclose(x, y, at->rtol, at->atol))
            continue;
        w->n_far++;
        double past = isnan(diff) || isinf(x) || isinf(y) ? INFINITY : diff - op_close_tolerance(at, y);
        if (past > worst) {
            worst = past;
            memcpy(w->at, out_idx, sizeof(w->at));
            w->a = x;
            w->b = y;
        }
    }
}
