// op_list: a list written in an expression whose items are tensors known only when the lesson
// runs ([a, mb] with mb a step): the items, of one shape, stacked along a new first axis, as
// numpy's stack. A list of numbers known before running is a constant instead (check_names.c).
#include <string.h>

#include "kernel_grad.h"
#include "op.h"

// [x0, x1, ...] of shape s each -> [n, *s]
static bool infer_list(OpCheck *c) {
    const Shape *first = c->shapes[0];
    for (size_t i = 1; i < c->n_inputs; i++) {
        if (shape_equal(c->shapes[i], first))
            continue;
        char a[64], b[64];
        shape_format(first, a, sizeof(a));
        shape_format(c->shapes[i], b, sizeof(b));
        op_error(c->problem, OP_INPUT(i), "item %zu of the list is %s, but item 0 is %s: the items of a list are "
                 "stacked, so they need one shape", i, b, a);
        op_hint(c->problem, "a list stacks its items along a new first axis, as numpy's stack: [a, b] of two [3] is "
                            "[2, 3]; to join tensors along an axis they have, write concat(a, b, axis=0)");
        return false;
    }
    if (first->rank + 1 > TENSOR_MAX_RANK) {
        op_error(c->problem, OP_CALL, "a list of tensors of %zu axes would have %zu, but a tensor has at most %d",
                 first->rank, first->rank + 1, TENSOR_MAX_RANK);
        op_hint(c->problem, "stack fewer axes: index the items first, or reshape them");
        return false;
    }
    c->shape.rank = first->rank + 1;
    c->shape.dim[0] = c->n_inputs;
    memcpy(c->shape.dim + 1, first->dim, first->rank * sizeof(size_t));
    c->out_labels[0] = (Labels){0};
    op_copy_labels(c->out_labels + 1, c->labels[0], first->rank);
    return true;
}

// Item k viewed with a first axis of 1: the list is then their concatenation along axis 0.
static Tensor as_part(const Tensor *t) {
    Tensor part = *t;
    part.shape.rank = t->shape.rank + 1;
    part.shape.dim[0] = 1;
    memcpy(part.shape.dim + 1, t->shape.dim, t->shape.rank * sizeof(size_t));
    return part;
}

static bool compute_list(OpRun *r) {
    Tensor parts[OP_MAX_ARGS];
    const Tensor *views[OP_MAX_ARGS];
    for (size_t i = 0; i < r->n_in; i++) {
        parts[i] = as_part(r->in[i]);
        views[i] = &parts[i];
    }
    kernel_concat(r->out, views, r->n_in, 0);
    return true;
}

// list[k, ...] is item k's element [...]
static void explain_list(OpExplain *e) {
    size_t k = e->index[0];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[k], e->index + 1, e->out->shape.rank - 1);
    strbuf_printf(&sb, " (item %zu of %zu)", k, e->n_in);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// Item k's share is the k-th slice of the gradient along the new axis.
static bool grad_list(OpGrad *g) {
    Tensor din = as_part(g->din);
    kernel_grad_concat(&din, g->input, g->dout, 0);
    return true;
}

static const OpDef ops[] = {
    {.name = "list", .syntax = OP_LIST, .token = '[', .symbol = "[...]",
     .about = "the items stacked along a new first axis, as numpy's stack", .params = {{"x", PARAM_TENSORS, false, 0}},
     .infer = infer_list, .compute = compute_list, .explain = explain_list, .integers = INTEGERS_IF_INPUTS,
     .grad = grad_list, .grad_formula = {"%g[0]", "%g[1]", "%g[2]"}},
};

const OpFamily op_family_list = OP_FAMILY(ops);
