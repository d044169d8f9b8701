// op_sample: what a sampler does to a next-token distribution: top_p (nucleus filtering) and
// sample (the id drawn for a given uniform number, by the inverse of the cumulative sum), each
// over the last axis. The seeded uniform numbers a lesson draws come from uniform (op_fill.c).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_sample.h"
#include "kernel_sort.h"
#include "op.h"

// Both read rows of probabilities: at least one axis, and (sample) at least one value a row.
static bool infer_rows(OpCheck *c) {
    const Shape *x = c->shapes[0];
    if (x->rank == 0) {
        op_error(c->problem, OP_INPUT(0), "%s reads a row of probabilities, but this is a single number", c->op->name);
        op_hint(c->problem, "give it a distribution over the last axis, as in %s(softmax(logits), %s)", c->op->name,
                c->op->params[1].kind == PARAM_NUMBER ? "0.9" : "u");
        return false;
    }
    return true;
}

// top_p(x, p): x's shape; p in (0, 1].
static bool infer_top_p(OpCheck *c) {
    if (!infer_rows(c))
        return false;
    double p = c->constants[1];
    if (!(p > 0.0 && p <= 1.0)) {
        char s[64];
        format_short(p, s, sizeof(s));
        op_error(c->problem, OP_PARAM(1), "p = %s, but top-p keeps a share of the probability, from above 0 to 1", s);
        op_hint(c->problem, "p = 0.9 keeps the fewest most likely tokens that together hold 90%% of it; p = 1 keeps "
                            "every token that can be drawn");
        return false;
    }
    c->attrs.number = p;
    return op_infer_same(c);
}

// Run time: every value of the rows a probability (finite, 0 or more), and each row's sum
// finite and above 0, so that it can be divided by.
static bool check_probabilities(OpRun *r) {
    const Tensor *x = r->in[0];
    size_t n = x->shape.dim[x->shape.rank - 1];
    for (size_t k = 0; k < x->size; k++) {
        double v = x->data[k];
        if (!(isfinite(v) && v >= 0.0)) {
            char s[64], at[160];
            size_t idx[TENSOR_MAX_RANK];
            shape_unflatten(&x->shape, k, idx);
            StrBuf sb;
            strbuf_init(&sb);
            op_work_ref(&sb, r->in_names[0], idx, x->shape.rank);
            snprintf(at, sizeof(at), "%s", sb.failed ? r->in_names[0] : strbuf_str(&sb));
            strbuf_finish(&sb);
            format_short(v, s, sizeof(s));
            op_error(r->problem, OP_INPUT(0), "%s reads probabilities, but %s is %s", r->op->name, at, s);
            op_hint(r->problem, "a probability is a finite number, 0 or more: give it softmax(logits), not the logits");
            return false;
        }
    }
    for (size_t row = 0; n && row < x->size / n; row++) {
        double sum = 0.0;
        for (size_t j = 0; j < n; j++)
            sum += x->data[row * n + j];
        if (!(sum > 0.0 && isfinite(sum))) {
            char s[64];
            format_short(sum, s, sizeof(s));
            op_error(r->problem, OP_INPUT(0), "row %zu of %s sums to %s: %s", row, r->in_names[0], s,
                     sum > 0.0 ? "past the largest number, so it cannot be divided by" : "there is nothing to draw from");
            op_hint(r->problem, "each row needs some probability above 0, and a sum that is a finite number: "
                                "softmax(logits) gives both");
            return false;
        }
    }
    return true;
}

static bool compute_top_p(OpRun *r) {
    if (!check_probabilities(r))
        return false;
    if (!kernel_top_p(r->out, r->in[0], r->attrs->number))
        return op_out_of_memory(r->problem);
    return true;
}

// The kept set of one row, as the kernel makes it: each value's rank, the sum of those ranked
// above it, and the kept sum. False when memory runs out.
typedef struct RowRanks {
    size_t rank;       // of the element asked about, from 0
    double before;     // for a kept value, the sum of the values ranked above it
    double kept_sum;   // the sum of the kept values, in rank order
    size_t kept;       // how many are kept
} RowRanks;

static bool rank_in_row(const Tensor *x, size_t row, size_t at, double p, RowRanks *out) {
    size_t n = x->shape.dim[x->shape.rank - 1];
    Tensor *order = tensor_create(&x->shape);
    if (!order || !kernel_sort(order, x, KERNEL_ARGTOPK, n)) {
        tensor_destroy(order);
        return false;
    }
    double before = 0.0;
    *out = (RowRanks){0};
    for (size_t j = 0; j < n; j++) {
        size_t pos = (size_t)order->data[row * n + j];
        if (pos == at) {
            out->rank = j;
            out->before = before;
        }
        if (before < p) {
            before += x->data[row * n + pos];
            out->kept++;
        }
    }
    out->kept_sum = before;
    tensor_destroy(order);
    return true;
}

static void explain_top_p(OpExplain *e) {
    const Tensor *x = e->in[0];
    size_t rank = x->shape.rank, n = x->shape.dim[rank - 1], j = e->index[rank - 1];
    double p = e->attrs->number;
    RowRanks rr;
    if (!rank_in_row(x, e->flat / n, j, p, &rr)) {
        e->failed = true;
        return;
    }
    bool kept = rr.rank < rr.kept;
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    if (kept) {  // the value over the kept sum
        op_work_num(&sb, e, x, x->data[e->flat]);
        strbuf_puts(&sb, " / ");
        op_work_num(&sb, e, e->out, rr.kept_sum);
        if (rr.rank == 0) {
            strbuf_puts(&sb, " (kept: the largest");
        } else {
            strbuf_puts(&sb, " (kept: the values ranked above it sum to ");
            op_work_num(&sb, e, e->out, rr.before);
            strbuf_printf(&sb, ", below p (%g)", p);
        }
        strbuf_printf(&sb, "; the %zu kept sum to ", rr.kept);
        op_work_num(&sb, e, e->out, rr.kept_sum);
    } else {
        strbuf_printf(&sb, "0 (dropped: the %zu kept above it already sum to ", rr.kept);
        op_work_num(&sb, e, e->out, rr.kept_sum);
        strbuf_printf(&sb, ", reaching p (%g)", p);
    }
    strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool grad_top_p(OpGrad *g) {
    return kernel_grad_top_p(g->din, g->dout, g->in[0], g->out, g->attrs->number);
}

// sample(x, u): x (..., n) with n >= 1, u a single number or one per row -> (...)
static bool infer_sample(OpCheck *c) {
    if (!infer_rows(c))
        return false;
    const Shape *x = c->shapes[0], *u = c->shapes[1];
    if (x->dim[x->rank - 1] == 0)
        return op_refuse_empty_axis(c, "sample", "a draw", x->rank - 1);
    Shape rows = *x;
    rows.rank--;
    if (u->rank != 0 && !shape_equal(u, &rows)) {
        char su[64], sr[64];
        shape_format(u, su, sizeof(su));
        shape_format(&rows, sr, sizeof(sr));
        op_error(c->problem, OP_INPUT(1), "u is %s, but each row of the probabilities takes one number: %s, or a "
                 "single number for every row", su, sr);
        if (rows.rank)
            op_hint(c->problem, "draw one for each row with uniform(%s, seed=7)", sr);
        else
            op_hint(c->problem, "draw one with uniform(seed=7)");
        return false;
    }
    c->shape = rows;
    op_copy_labels(c->out_labels, c->labels[0], rows.rank);
    return true;
}

static bool compute_sample(OpRun *r) {
    if (!check_probabilities(r))
        return false;
    const Tensor *u = r->in[1];
    for (size_t k = 0; k < u->size; k++)
        if (!(u->data[k] >= 0.0 && u->data[k] < 1.0)) {
            char s[64], at[80] = "";
            format_short(u->data[k], s, sizeof(s));
            if (u->shape.rank)
                snprintf(at, sizeof(at), " (entry %zu)", k);
            op_error(r->problem, OP_INPUT(1), "u = %s%s, but a uniform number lies in [0, 1): 0 or more, below 1", s,
                     at);
            op_hint(r->problem, "draw one with uniform(seed=7), or write a number such as 0.25");
            return false;
        }
    kernel_sample(r->out, r->in[0], u);
    return true;
}

// sample[r] = i: u against the cumulative sum of the row over its total.
static void explain_sample(OpExplain *e) {
    const Tensor *x = e->in[0], *u = e->in[1];
    size_t i = (size_t)e->out->data[e->flat];
    double ur = u->data[u->size == 1 ? 0 : e->flat];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_puts(&sb, "the id whose stretch [");
    op_work_num(&sb, e, x, i ? kernel_sample_cdf(x, e->flat, i - 1) : 0.0);
    strbuf_puts(&sb, ", ");
    op_work_num(&sb, e, x, kernel_sample_cdf(x, e->flat, i));
    strbuf_puts(&sb, ") of cumsum(row) / sum(row) holds u (");
    op_work_num(&sb, e, u, ur);
    strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static const OpDef ops[] = {
    {.name = "top_p", .about = "nucleus filtering: the fewest largest probabilities that reach p, renormalised",
     .params = {OP_X, {"p", PARAM_NUMBER, false, 0}}, .infer = infer_top_p, .compute = compute_top_p,
     .explain = explain_top_p, .distribution = true, .grad = grad_top_p,
     .grad_formula = {"(%g - sum of %g %y over the kept) / their sum, 0 where dropped"}},
    {.name = "sample", .ids_along_last = true, .about = "the id drawn for a uniform number u: where u falls in the running sum",
     .params = {OP_X, OP_TENSOR("u")}, .infer = infer_sample, .compute = compute_sample, .explain = explain_sample,
     .integers = INTEGERS_ALWAYS},
};

const OpFamily op_family_sample = OP_FAMILY(ops);
