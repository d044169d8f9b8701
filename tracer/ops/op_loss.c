// op_loss: the loss: cross-entropy of logits against target positions.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

static bool infer_cross_entropy(OpCheck *c) {
    const Shape *l = c->shapes[0], *t = c->shapes[1];
    char sl[64], st[64];
    shape_format(l, sl, sizeof(sl));
    shape_format(t, st, sizeof(st));
    bool ok = l->rank >= 1 && t->rank + 1 == l->rank;
    for (size_t i = 0; ok && i < t->rank; i++)
        ok = t->dim[i] == l->dim[i];
    if (!ok) {
        op_error(c->problem, OP_INPUT(1), "targets of shape %s do not fit logits of shape %s", st, sl);
        op_hint(c->problem, "give one target per row of logits: logits [n, vocab] take targets [n], and one "
                            "row [vocab] takes a single number");
        return false;
    }
    if (l->dim[l->rank - 1] == 0)
        return op_refuse_empty_axis(c, "cross_entropy", "a probability for the target", l->rank - 1);
    c->shape = *t;
    op_copy_labels(c->out_labels, c->labels[0], t->rank);
    return true;
}

static bool compute_cross_entropy(OpRun *r) {
    size_t v = r->in[0]->shape.dim[r->in[0]->shape.rank - 1];
    if (!op_check_whole_indices(r, 1, r->in[1], v, "target",
                                "a target is the position of the right answer in a row of logits, from 0"))
        return false;
    kernel_cross_entropy(r->out, r->in[0], r->in[1]);
    return true;
}

static void notes_cross_entropy(OpNotes *n) {
    if (n->out->size != 1)
        return;
    char p[FORMAT_NUMBER_CAP];
    format_number(exp(-n->out->data[0]), n->digits, p, sizeof(p));
    op_note(n, "the model gave the target a probability of %s; a perfect prediction would give loss 0", p);
}

static void explain_cross_entropy(OpExplain *e) {
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
    op_work_num(&sb, e, logits, max);
    strbuf_puts(&sb, " + log(");
    op_work_num(&sb, e, logits, sum);
    strbuf_puts(&sb, ") = ");
    op_work_num(&sb, e, logits, max + log(sum));
    strbuf_puts(&sb, "   (the row max taken out first)");
    op_work_line(e, &sb);
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_num(&sb, e, logits, max + log(sum));
    strbuf_printf(&sb, " - logit[%zu] = ", t);
    op_work_num(&sb, e, logits, max + log(sum));
    strbuf_puts(&sb, " - ");
    op_work_num(&sb, e, logits, row[t]);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

static bool grad_cross_entropy(OpGrad *g) {
    kernel_grad_cross_entropy(g->din, g->dout, g->in[0], g->in[1]);
    return true;
}

// probs - onehot, scaled by the gradient of the loss: g × (softmax(logits)[j] - [j = target]).
static void explain_grad_cross_entropy(OpGradWork *w) {
    size_t d;
    const double *z = op_row_of(w->in[0], w->flat, &d);
    size_t row = w->flat / d, j = w->flat % d;
    double max = -INFINITY, sum = 0;
    for (size_t k = 0; k < d; k++)
        max = z[k] > max ? z[k] : max;
    for (size_t k = 0; k < d; k++)
        sum += exp(z[k] - max);
    bool hit = (size_t)w->in[1]->data[row] == j;
    StrBuf *sb = w->sb;
    strbuf_printf(sb, "%s × (softmax(%s)[%zu] - onehot[%zu]) = ", w->dout_name, w->in_names[0], j, j);
    op_grad_num(w, w->dout->data[row]);
    strbuf_puts(sb, " × (");
    op_grad_num(w, exp(z[j] - max) / sum);
    strbuf_printf(sb, " - %d) = ", hit);
    op_grad_num(w, w->share->data[w->flat]);
}

static const OpDef ops[] = {
    {.name = "cross_entropy", .about = "cross-entropy: -log softmax(logits)[target]",
     .params = {OP_TENSOR("logits"), OP_TENSOR("target")}, .infer = infer_cross_entropy,
     .compute = compute_cross_entropy, .notes = notes_cross_entropy, .explain = explain_cross_entropy,
     .grad = grad_cross_entropy, .no_grad = OP_NO_GRAD(1), .grad_formula = {"%g * (softmax(%0) - onehot(%1))"},
     .explain_grad = explain_grad_cross_entropy},
};

const OpFamily op_family_loss = OP_FAMILY(ops);
