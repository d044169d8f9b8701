// op_norm: normalisation: LayerNorm and RMSNorm over each row, BatchNorm over each feature.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

// Row means and variances after normalising, to show the norm did its job.
static void note_row_moments(OpNotes *n, const Tensor *t) {
    // a norm's shape rule refuses a scalar and an empty last axis
    ASSERT(t->shape.rank >= 1 && t->shape.dim[t->shape.rank - 1] >= 1);
    size_t d = t->shape.dim[t->shape.rank - 1];
    size_t rows = t->size / d;
    if (rows == 0 || rows > 16)
        return;
    StrBuf means, vars;
    strbuf_init(&means);
    strbuf_init(&vars);
    for (size_t r = 0; r < rows; r++) {
        double mean = 0, var = 0;
        for (size_t j = 0; j < d; j++)
            mean += t->data[r * d + j];
        mean /= (double)d;
        for (size_t j = 0; j < d; j++)
            var += (t->data[r * d + j] - mean) * (t->data[r * d + j] - mean);
        var /= (double)d;
        char a[FORMAT_NUMBER_CAP], b[FORMAT_NUMBER_CAP];
        format_number(mean, n->digits, a, sizeof(a));
        format_number(var, n->digits, b, sizeof(b));
        strbuf_printf(&means, "%s%s", r ? ", " : "", a);
        strbuf_printf(&vars, "%s%s", r ? ", " : "", b);
    }
    if (means.failed || vars.failed)
        n->failed = true;
    else
        op_note(n, "row means %s; row variances %s", strbuf_str(&means), strbuf_str(&vars));
    strbuf_finish(&means);
    strbuf_finish(&vars);
}

// Inputs 1 .. n (gamma, and beta when there is one) hold one number per feature, or one for all.
static bool check_affine(OpCheck *c, size_t d, size_t n) {
    for (size_t i = 1; i <= n; i++) {
        const Shape *s = c->shapes[i];
        if (s->rank == 0 || (s->rank == 1 && s->dim[0] == d))
            continue;
        char sh[64];
        shape_format(s, sh, sizeof(sh));
        op_error(c->problem, OP_INPUT(i), "%s must be a number or have shape [%zu] (one per feature), but it is %s",
                 i == 1 ? "gamma" : "beta", d, sh);
        return false;
    }
    return true;
}

// The norms: x of at least min_rank axes, then the per-feature inputs (gamma, beta), then
// eps >= 0 as parameter eps_param.
static bool infer_norm(OpCheck *c, size_t min_rank, size_t eps_param) {
    if (!op_needs_rank(c, 0, min_rank))
        return false;
    const Shape *x = c->shapes[0];
    // LayerNorm and RMSNorm normalise each row (the last axis), BatchNorm each feature over the
    // batch (every other axis): an empty one has no mean.
    if (min_rank == 1 && x->dim[x->rank - 1] == 0)
        return op_refuse_empty_axis(c, c->op->name, "a mean or a variance", x->rank - 1);
    for (size_t i = 0; min_rank > 1 && i + 1 < x->rank; i++)
        if (x->dim[i] == 0)
            return op_refuse_empty_axis(c, c->op->name, "a mean or a variance", i);
    if (!check_affine(c, x->dim[x->rank - 1], eps_param - 1))
        return false;
    c->attrs.number = c->constants[eps_param];
    if (!(c->attrs.number >= 0))
        return op_error(c->problem, OP_PARAM(eps_param), "eps must be zero or positive");
    return op_infer_same(c);
}

static bool infer_layernorm(OpCheck *c) {
    return infer_norm(c, 1, 3);
}

static bool compute_layernorm(OpRun *r) {
    kernel_layernorm(r->out, r->in[0], r->in[1], r->in[2], r->attrs->number);
    return true;
}

static void notes_layernorm(OpNotes *n) {
    // Moments of the normalised values, before gamma and beta: recompute from the output is
    // not possible in general, so report them only when gamma is 1 and beta is 0.
    const Tensor *g = n->in[1], *b = n->in[2];
    for (size_t i = 0; i < g->size; i++)
        if (g->data[i] != 1)
            return;
    for (size_t i = 0; i < b->size; i++)
        if (b->data[i] != 0)
            return;
    note_row_moments(n, n->out);
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
    op_work_num(&sb, e, e->in[0], x);
    strbuf_puts(&sb, " - ");
    op_work_num(&sb, e, e->in[0], mean);
    strbuf_puts(&sb, ") / sqrt(");
    op_work_num(&sb, e, e->in[0], var);
    char epsbuf[64];
    format_short(eps, epsbuf, sizeof(epsbuf));
    strbuf_printf(&sb, " + %s) = ", epsbuf);
    op_work_num(&sb, e, e->out, xn);
    strbuf_puts(&sb, ";  ");
    op_work_ref(&sb, e->out_name, idx, e->out->shape.rank);
    strbuf_puts(&sb, " = ");
    op_work_num(&sb, e, g, affine_at(g, j));
    strbuf_puts(&sb, " × ");
    op_work_num(&sb, e, e->out, xn);
    strbuf_puts(&sb, " + ");
    op_work_num(&sb, e, b, affine_at(b, j));
    strbuf_puts(&sb, " = ");
    op_work_num(&sb, e, e->out, e->out->data[flat]);
    op_work_line(e, &sb);
}

static void explain_layernorm(OpExplain *e) {
    size_t d;
    const double *x = op_row_of(e->in[0], e->flat, &d);
    size_t rank = e->out->shape.rank;
    size_t j = e->index[rank - 1];
    double mean, var;
    op_work_moments(e, e->in[0], x, d, 1, "variance", &mean, &var);
    size_t first = e->row ? 0 : j, last = e->row ? d : j + 1;
    for (size_t k = first; k < last; k++) {
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        idx[rank - 1] = k;
        norm_line(e, idx, x[k], mean, var, k, e->flat - j + k);
    }
}

// ---------------------------------------------------------------- rmsnorm

static bool infer_rmsnorm(OpCheck *c) {
    return infer_norm(c, 1, 2);
}

static bool compute_rmsnorm(OpRun *r) {
    kernel_rmsnorm(r->out, r->in[0], r->in[1], r->attrs->number);
    return true;
}

// With gamma 1, each row comes out with a mean square of about 1 (a little less: eps).
static void notes_rmsnorm(OpNotes *n) {
    const Tensor *g = n->in[1], *t = n->out;
    for (size_t i = 0; i < g->size; i++)
        if (g->data[i] != 1)
            return;
    ASSERT(t->shape.rank >= 1 && t->shape.dim[t->shape.rank - 1] >= 1);  // as for layernorm
    size_t d = t->shape.dim[t->shape.rank - 1];
    size_t rows = t->size / d;
    if (rows == 0 || rows > 16)
        return;
    StrBuf line;
    strbuf_init(&line);
    for (size_t r = 0; r < rows; r++) {
        double ms = 0;
        for (size_t j = 0; j < d; j++)
            ms += t->data[r * d + j] * t->data[r * d + j];
        char v[FORMAT_NUMBER_CAP];
        format_number(ms / (double)d, n->digits, v, sizeof(v));
        strbuf_printf(&line, "%s%s", r ? ", " : "", v);
    }
    if (line.failed)
        n->failed = true;
    else
        op_note(n, "row means of squares %s: 1 for a row whose own mean square is much larger than eps",
                strbuf_str(&line));
    strbuf_finish(&line);
}

// mean(x²) = (1.0000² + 2.0000²) / 2 = 2.5000, then for each element
// x_norm = 1.0000 / sqrt(2.5000 + 1e-05) = 0.6325;  y[0] = 1.0000 × 0.6325 = 0.6325
static void explain_rmsnorm(OpExplain *e) {
    size_t d;
    const Tensor *in = e->in[0], *g = e->in[1];
    const double *x = op_row_of(in, e->flat, &d);
    size_t rank = e->out->shape.rank;
    size_t j = e->index[rank - 1];
    double ms = 0;
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "mean(x²) = (");
    for (size_t k = 0; k < d; k++) {
        ms += x[k] * x[k];
        if (k)
            strbuf_puts(&sb, " + ");
        op_work_num(&sb, e, in, x[k]);
        strbuf_puts(&sb, "²");
    }
    ms /= (double)d;
    strbuf_printf(&sb, ") / %zu = ", d);
    op_work_num(&sb, e, in, ms);
    op_work_line(e, &sb);
    char epsbuf[64];
    format_short(e->attrs->number, epsbuf, sizeof(epsbuf));
    size_t first = e->row ? 0 : j, last = e->row ? d : j + 1;
    for (size_t k = first; k < last; k++) {
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        idx[rank - 1] = k;
        double xn = x[k] / sqrt(ms + e->attrs->number);
        strbuf_init(&sb);
        strbuf_puts(&sb, "x_norm = ");
        op_work_num(&sb, e, in, x[k]);
        strbuf_puts(&sb, " / sqrt(");
        op_work_num(&sb, e, in, ms);
        strbuf_printf(&sb, " + %s) = ", epsbuf);
        op_work_num(&sb, e, e->out, xn);
        strbuf_puts(&sb, ";  ");
        op_work_ref(&sb, e->out_name, idx, rank);
        strbuf_puts(&sb, " = ");
        op_work_num(&sb, e, g, affine_at(g, k));
        strbuf_puts(&sb, " × ");
        op_work_num(&sb, e, e->out, xn);
        strbuf_puts(&sb, " = ");
        op_work_num(&sb, e, e->out, e->out->data[e->flat - j + k]);
        op_work_line(e, &sb);
    }
}

// ---------------------------------------------------------------- batchnorm

static bool infer_batchnorm(OpCheck *c) {
    return infer_norm(c, 2, 3);  // a batch axis (or a sequence axis) besides the features
}

static bool compute_batchnorm(OpRun *r) {
    kernel_batchnorm(r->out, r->in[0], r->in[1], r->in[2], r->attrs->number);
    return true;
}

static void explain_batchnorm(OpExplain *e) {
    const Tensor *x = e->in[0];
    size_t d = x->shape.dim[x->shape.rank - 1];
    size_t j = e->index[x->shape.rank - 1];
    double mean, var;
    op_work(e, "feature %zu, over every token of every sequence:", j);
    op_work_moments(e, x, x->data + j, x->size / d, d, "variance", &mean, &var);
    norm_line(e, e->index, x->data[e->flat], mean, var, j, e->flat);
}

// ---------------------------------------------------------------- the table

#define NORM_PARAMS {OP_X, OP_TENSOR("gamma"), OP_TENSOR("beta"), OP_NUMBER("eps", 1e-5)}

static bool grad_layernorm(OpGrad *g) {
    kernel_grad_layernorm(g->din, g->input, g->dout, g->in[0], g->in[1], g->attrs->number);
    return true;
}

static bool grad_batchnorm(OpGrad *g) {
    kernel_grad_batchnorm(g->din, g->input, g->dout, g->in[0], g->in[1], g->attrs->number);
    return true;
}

static bool grad_rmsnorm(OpGrad *g) {
    kernel_grad_rmsnorm(g->din, g->input, g->dout, g->in[0], g->in[1], g->attrs->number);
    return true;
}

// With rms = sqrt(mean(x^2) + eps): RMSNorm's two terms, and gamma's share.
#define RMSNORM_FORMULAS {"%g*%1 / rms - x * mean(%g*%1 * x) / rms**3", "sum of %g * x / rms over rows"}

// LayerNorm's three terms at [r, j], with g = dL/dy * gamma over the row, xhat the normalised
// row and sd = sqrt(var + eps): (g_j - mean(g) - xhat_j mean(g xhat)) / sd. gamma and beta's
// shares are sums over the rows, shown by their value.
static void explain_grad_layernorm(OpGradWork *w) {
    if (w->input != 0) {
        op_grad_num(w, w->share->data[w->flat]);
        return;
    }
    size_t d;
    const double *x = op_row_of(w->in[0], w->flat, &d);
    const double *dy = w->dout->data + (x - w->in[0]->data);
    const Tensor *gamma = w->in[1];
    size_t j = w->flat % d;
    double mean = 0, var = 0;
    for (size_t k = 0; k < d; k++)
        mean += x[k];
    mean /= (double)d;
    for (size_t k = 0; k < d; k++)
        var += (x[k] - mean) * (x[k] - mean);
    var /= (double)d;
    double sd = sqrt(var + w->attrs->number), mg = 0, mgx = 0;
    for (size_t k = 0; k < d; k++) {
        double gk = dy[k] * gamma->data[gamma->shape.rank ? k : 0];
        mg += gk;
        mgx += gk * (x[k] - mean) / sd;
    }
    mg /= (double)d;
    mgx /= (double)d;
    double gj = dy[j] * gamma->data[gamma->shape.rank ? j : 0], xhat = (x[j] - mean) / sd;
    StrBuf *sb = w->sb;
    strbuf_printf(sb, "(g[%zu] - mean(g) - xhat[%zu] × mean(g × xhat)) / sd with g = %s × %s, sd = sqrt(var + eps) = (",
                  j, j, w->dout_name, w->in_names[1]);
    op_grad_num(w, gj);
    strbuf_puts(sb, " - ");
    op_grad_num(w, mg);
    strbuf_puts(sb, " - ");
    op_grad_num(w, xhat);
    strbuf_puts(sb, "×");
    op_grad_num(w, mgx);
    strbuf_puts(sb, ") / ");
    op_grad_num(w, sd);
    strbuf_puts(sb, " = ");
    op_grad_num(w, w->share->data[w->flat]);
}

// With xhat the normalised x and sd = sqrt(var + eps): the three terms of LayerNorm's derivative.
#define NORM_FORMULAS                                                                                 \
    {"(%g*%1 - mean(%g*%1) - xhat * mean(%g*%1 * xhat)) / sd", "sum of %g * xhat over rows", \
     "sum of %g over rows"}

static const OpDef ops[] = {
    {.name = "layernorm", .about = "LayerNorm over the last axis: (x - mean) / sqrt(var + eps) * gamma + beta",
     .params = NORM_PARAMS, .infer = infer_layernorm, .compute = compute_layernorm, .notes = notes_layernorm,
     .explain = explain_layernorm, .row_form = true, .grad = grad_layernorm,
     .grad_formula = NORM_FORMULAS,
     .explain_grad = explain_grad_layernorm},
    {.name = "rmsnorm", .about = "RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) * gamma",
     .params = {OP_X, OP_TENSOR("gamma"), OP_NUMBER("eps", 1e-5)}, .infer = infer_rmsnorm,
     .compute = compute_rmsnorm, .notes = notes_rmsnorm, .explain = explain_rmsnorm, .row_form = true,
     .grad = grad_rmsnorm, .grad_formula = RMSNORM_FORMULAS},
    {.name = "batchnorm", .about = "BatchNorm: each feature normalised over the batch and sequence axes",
     .params = NORM_PARAMS, .infer = infer_batchnorm, .compute = compute_batchnorm, .explain = explain_batchnorm,
     .grad = grad_batchnorm, .grad_formula = NORM_FORMULAS},
};

const OpFamily op_family_norm = OP_FAMILY(ops);
