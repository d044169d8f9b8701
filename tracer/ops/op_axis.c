// op_axis: operations along one chosen axis: the running sum (cumsum) and each slice repeated in
// place (repeat_interleave, for grouped-query attention).
#include <math.h>
#include <string.h>

#include "kernel_axis.h"
#include "op.h"

// cumsum(x, axis=): the axis may be left out only when x has one axis. numpy would add up the
// flattened values, which is seldom what a lesson means by a running sum of a matrix.
static bool infer_cumsum(OpCheck *c) {
    size_t rank = c->shapes[0]->rank, axis = 0;
    if (rank == 0) {
        op_error(c->problem, OP_INPUT(0), "cumsum needs at least one axis: a single number has no running sum");
        op_hint(c->problem, "give it a list, as in cumsum([1, 2, 3]), which is [1, 3, 6]");
        return false;
    }
    if (!c->present[1] && rank > 1) {
        char s[64];
        shape_format(c->shapes[0], s, sizeof(s));
        op_error(c->problem, OP_CALL, "cumsum of a %s tensor needs an axis to run along", s);
        op_hint(c->problem, "write cumsum(x, axis=-1) for a running sum along each row, axis=0 down each column");
        return false;
    }
    if (c->present[1] && !op_resolve_axis(c, 1, c->constants[1], rank, &axis))
        return false;
    c->attrs.axis = (int)axis;
    return op_infer_same(c);
}

static bool compute_cumsum(OpRun *r) {
    kernel_cumsum(r->out, r->in[0], (size_t)r->attrs->axis);
    return true;
}

// out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...]; past eight terms, the running sum
// before it plus x[..., i, ...].
static void explain_cumsum(OpExplain *e) {
    const Tensor *x = e->in[0];
    size_t axis = (size_t)e->attrs->axis, rank = x->shape.rank, i = e->index[axis];
    size_t step = 1;
    for (size_t k = axis + 1; k < rank; k++)
        step *= x->shape.dim[k];
    const double *line = x->data + e->flat - i * step;
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    if (i == 0) {
        // the running sum starts with the first value itself
        op_work_ref(&sb, e->in_names[0], e->index, rank);
        op_work_result(&sb, e);
        op_work_line(e, &sb);
        return;
    }
    if (i >= 8) {
        size_t idx[TENSOR_MAX_RANK];
        memcpy(idx, e->index, sizeof(idx));
        idx[axis] = i - 1;
        op_work_ref(&sb, e->out_name, idx, rank);
        strbuf_puts(&sb, " + ");
        op_work_ref(&sb, e->in_names[0], e->index, rank);
        strbuf_puts(&sb, " = ");
        op_work_num(&sb, e, e->out, e->out->data[e->flat - step]);
        strbuf_puts(&sb, " + ");
        op_work_num(&sb, e, x, line[i * step]);
    } else {
        for (size_t k = 0; k <= i; k++) {
            strbuf_puts(&sb, k ? " + " : "");
            op_work_num(&sb, e, x, line[k * step]);
        }
    }
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool grad_cumsum(OpGrad *g) {
    kernel_grad_cumsum(g->din, g->dout, (size_t)g->attrs->axis);
    return true;
}

// repeat_interleave(x, repeats, axis=): the axis may be left out only when x has one axis
// (PyTorch would repeat the flattened values).
static bool infer_repeat(OpCheck *c) {
    const Shape *x = c->shapes[0];
    size_t rank = x->rank, axis = 0, r = (size_t)c->constants[1];
    if (rank == 0) {
        op_error(c->problem, OP_INPUT(0), "repeat_interleave needs at least one axis to repeat along");
        op_hint(c->problem, "give it a list, as in repeat_interleave([1, 2], 2), which is [1, 1, 2, 2]");
        return false;
    }
    if (!c->present[2] && rank > 1) {
        char s[64];
        shape_format(x, s, sizeof(s));
        op_error(c->problem, OP_CALL, "repeat_interleave of a %s tensor needs an axis to repeat along", s);
        op_hint(c->problem, "write repeat_interleave(K, 4, axis=0) to give each of K's heads 4 copies side by side");
        return false;
    }
    if (c->present[2] && !op_resolve_axis(c, 2, c->constants[2], rank, &axis))
        return false;
    if (x->dim[axis] > TENSOR_MAX_VALUES / r) {
        op_error(c->problem, OP_PARAM(1), "%zu copies of each of %zu slices are more than a tensor can hold", r,
                 x->dim[axis]);
        return false;
    }
    c->attrs.axis = (int)axis;
    c->attrs.count = r;
    c->shape = *x;
    c->shape.dim[axis] *= r;
    for (size_t i = 0; i < rank; i++)
        c->out_labels[i] = i == axis ? (Labels){0} : c->labels[0][i];
    return true;
}

static bool compute_repeat(OpRun *r) {
    kernel_repeat_interleave(r->out, r->in[0], (size_t)r->attrs->axis, r->attrs->count);
    return true;
}

// out[..., i, ...] = x[..., i / r, ...]: which copy of which slice the element is.
static void explain_repeat(OpExplain *e) {
    size_t axis = (size_t)e->attrs->axis, r = e->attrs->count, rank = e->out->shape.rank, i = e->index[axis];
    size_t idx[TENSOR_MAX_RANK];
    memcpy(idx, e->index, sizeof(idx));
    idx[axis] = i / r;
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], idx, rank);
    strbuf_printf(&sb, " (copy %zu of %zu of slice %zu)", i % r + 1, r, i / r);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool grad_repeat(OpGrad *g) {
    kernel_grad_repeat_interleave(g->din, g->dout, (size_t)g->attrs->axis, g->attrs->count);
    return true;
}

static const OpDef ops[] = {
    {.name = "cumsum", .about = "running sum along an axis: x[0], x[0] + x[1], x[0] + x[1] + x[2], ...",
     .params = {OP_X, {"axis", PARAM_AXIS, true, 0}}, .infer = infer_cumsum, .compute = compute_cumsum,
     .explain = explain_cumsum, .integers = INTEGERS_IF_INPUTS, .grad = grad_cumsum,
     .grad_formula = {"%g summed from the end along axis=%a"}},
    {.name = "repeat_interleave", .keeps_ids = true, .about = "each slice repeated, the copies side by side: [a, b] -> [a, a, b, b]",
     .params = {OP_X, OP_COUNT("repeats"), {"axis", PARAM_AXIS, true, 0}}, .infer = infer_repeat,
     .compute = compute_repeat, .explain = explain_repeat, .integers = INTEGERS_IF_FIRST, .grad = grad_repeat,
     .grad_formula = {"%g's copies of each slice added, along axis=%a"}},
};

const OpFamily op_family_axis = OP_FAMILY(ops);
