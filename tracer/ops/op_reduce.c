// op_reduce: reductions: sum, mean, var, norm, max, min, argmax, all and any over an axis or everything,
// and numel.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

static bool infer_reduce(OpCheck *c) {
    const Shape *x = c->shapes[0];
    c->attrs.keepdims = c->present[2] && c->constants[2] != 0;
    if (!c->present[1]) {
        c->attrs.axis = KERNEL_ALL_AXES;
    } else {
        size_t axis;
        if (!op_resolve_axis(c, 1, c->constants[1], x->rank, &axis))
            return false;
        c->attrs.axis = (int)axis;
    }
    bool fits = kernel_reduce_shape(x, c->attrs.axis, c->attrs.keepdims, &c->shape);
    ASSERT(fits);  // the axis was resolved against this shape
    if (c->attrs.axis != KERNEL_ALL_AXES) {
        size_t out = 0;
        for (size_t i = 0; i < x->rank; i++)
            if ((int)i != c->attrs.axis || c->attrs.keepdims)
                c->out_labels[out++] = (int)i == c->attrs.axis ? (Labels){0} : c->labels[0][i];
    }
    // numpy: the sum of nothing is 0 and its mean and variance nan (0 / 0); a maximum,
    // minimum or its position does not exist.
    KernelReduce op = (KernelReduce)c->op->variant;
    if (op == KERNEL_MAX || op == KERNEL_MIN || op == KERNEL_ARGMAX) {
        const char *nothing = op == KERNEL_MIN ? "a minimum" : "a maximum";
        if (c->attrs.axis != KERNEL_ALL_AXES && x->dim[c->attrs.axis] == 0)
            return op_refuse_empty_axis(c, c->op->name, nothing, (size_t)c->attrs.axis);
        for (size_t i = 0; c->attrs.axis == KERNEL_ALL_AXES && i < x->rank; i++)
            if (x->dim[i] == 0)
                return op_refuse_empty_axis(c, c->op->name, nothing, i);
    }
    return true;
}

// Over an empty axis numpy's sum is 0 and its mean and variance nan: say where they came from.
static void notes_reduce(OpNotes *n) {
    const Tensor *x = n->in[0];
    size_t count = x->size;
    if (n->attrs->axis != KERNEL_ALL_AXES)
        count = x->shape.dim[n->attrs->axis];
    if (count != 0 || n->out->size == 0)
        return;
    KernelReduce op = (KernelReduce)n->op->variant;
    // max and min refuse an empty axis (infer_reduce): what is left is a sum, a mean or a variance
    ASSERT(op == KERNEL_SUM || op == KERNEL_MEAN || op == KERNEL_VAR || op == KERNEL_NORM);
    if (op == KERNEL_SUM)
        op_note(n, "the sum of no numbers is 0 (as numpy gives it): the axis summed over is empty");
    else if (op == KERNEL_NORM)
        op_note(n, "the norm of no numbers is 0 (as numpy gives it): the axis is empty");
    else
        op_note(n, "the %s of no numbers is nan, 0 / 0 (as numpy gives it): the axis is empty",
                op == KERNEL_MEAN ? "mean" : "variance");
}

static bool compute_reduce(OpRun *r) {
    if (r->attrs->keepdims) {
        // The kernel drops the axis; keepdims only changes the shape, not the values.
        Tensor view = *r->out;
        kernel_reduce(&view, r->in[0], r->attrs->axis, (KernelReduce)r->op->variant);
        return true;
    }
    kernel_reduce(r->out, r->in[0], r->attrs->axis, (KernelReduce)r->op->variant);
    return true;
}

static void explain_reduce(OpExplain *e) {
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
        start = shape_flatten(&x->shape, src);
    }
    const double *v = x->data + start;
    StrBuf sb;
    strbuf_init(&sb);
    if (op == KERNEL_VAR) {
        double mean, var;
        op_work_ref(&sb, e->out_name, e->index, e->out->shape.rank);
        if (sb.failed)
            e->failed = true;
        else
            op_work_moments(e, x, v, n, stride, strbuf_str(&sb), &mean, &var);
        strbuf_finish(&sb);
        return;
    }
    op_work_lhs(&sb, e);
    const char *open = op == KERNEL_MEAN ? "(" : op == KERNEL_NORM ? "sqrt(" : op == KERNEL_MAX ? "max(" : op == KERNEL_MIN ? "min(" :
                       op == KERNEL_ARGMAX ? "argmax(" : op == KERNEL_ALL ? "all(" : op == KERNEL_ANY ? "any(" : "";
    const char *sep = op == KERNEL_SUM || op == KERNEL_MEAN || op == KERNEL_NORM ? " + " : ", ";
    strbuf_puts(&sb, open);
    for (size_t k = 0; k < n; k++) {
        if (k)
            strbuf_puts(&sb, sep);
        op_work_num(&sb, e, x, v[k * stride]);
        if (op == KERNEL_NORM)
            strbuf_puts(&sb, "²");
    }
    if (op == KERNEL_MEAN)
        strbuf_printf(&sb, ") / %zu", n);
    else if (op != KERNEL_SUM)
        strbuf_putc(&sb, ')');
    if (op == KERNEL_ARGMAX) {
        op_work_result(&sb, e);
        strbuf_puts(&sb, " (a position, counting from 0)");
        op_work_line(e, &sb);
        return;
    }
    op_work_result(&sb, e);
    if (e->op->truth)
        strbuf_puts(&sb, e->out->data[e->flat] != 0 ? " (true)" : " (false)");
    op_work_line(e, &sb);
}

static bool infer_numel(OpCheck *c) {
    c->attrs.axis = KERNEL_ALL_AXES;  // every element: the shown work multiplies every size
    c->shape = (Shape){0};
    return true;
}

static bool compute_numel(OpRun *r) {
    size_t n = 1;
    for (size_t i = 0; i < r->in[0]->shape.rank; i++)
        n *= r->in[0]->shape.dim[i];
    r->out->data[0] = (double)n;
    return true;
}

// size(x, axis=None): the size of one axis, or numel when axis is left out, as numpy's size.
static bool infer_size(OpCheck *c) {
    c->attrs.axis = KERNEL_ALL_AXES;
    if (c->present[1]) {
        size_t axis;
        if (!op_resolve_axis(c, 1, c->constants[1], c->shapes[0]->rank, &axis))
            return false;
        c->attrs.axis = (int)axis;
    }
    c->shape = (Shape){0};
    return true;
}

static bool compute_size(OpRun *r) {
    if (r->attrs->axis == KERNEL_ALL_AXES)
        return compute_numel(r);
    r->out->data[0] = (double)r->in[0]->shape.dim[r->attrs->axis];
    return true;
}

static void explain_numel(OpExplain *e) {
    const Tensor *x = e->in[0];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    if (e->attrs->axis != KERNEL_ALL_AXES) {  // size(x, axis)
        strbuf_printf(&sb, "the size of axis %d of %s", e->attrs->axis, e->in_names[0]);
        op_work_result(&sb, e);
        op_work_line(e, &sb);
        return;
    }
    for (size_t i = 0; i < x->shape.rank; i++) {
        if (i)
            strbuf_puts(&sb, " × ");
        char buf[64];
        format_count((double)x->shape.dim[i], buf, sizeof(buf));
        strbuf_puts(&sb, buf);
    }
    if (x->shape.rank == 0)
        strbuf_puts(&sb, "1 (a scalar)");
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

static bool grad_reduce(OpGrad *g) {
    kernel_grad_reduce(g->din, g->dout, g->in[0], g->attrs->axis, (KernelReduce)g->op->variant);
    return true;
}

#define REDUCE(op_name, what, kind, whole, formula)                                                                \
    {.name = op_name, .about = what, .variant = kind,                                                     \
     .params = {OP_X, {"axis", PARAM_AXIS, true, 0}, {"keepdims", PARAM_FLAG, true, 0}},                \
     .infer = infer_reduce, .compute = compute_reduce, .notes = notes_reduce, .explain = explain_reduce,     \
     .integers = whole, .grad = grad_reduce, .grad_formula = {formula}}

static const OpDef ops[] = {
    REDUCE("sum", "sum", KERNEL_SUM, INTEGERS_IF_INPUTS, "%g, copied to every summed entry"),
    REDUCE("mean", "mean", KERNEL_MEAN, INTEGERS_NEVER, "%g / n, copied to every averaged entry"),
    REDUCE("var", "variance (divide by the count)", KERNEL_VAR, INTEGERS_NEVER, "%g * 2 (%0 - mean) / n"),
    REDUCE("norm", "the L2 norm: sqrt of the sum of squares", KERNEL_NORM, INTEGERS_NEVER,
           "%g * %0 / %y (0 where %y is 0)"),
    REDUCE("max", "maximum", KERNEL_MAX, INTEGERS_IF_INPUTS, "%g at the first largest entry, 0 elsewhere"),
    REDUCE("min", "minimum", KERNEL_MIN, INTEGERS_IF_INPUTS, "%g at the first smallest entry, 0 elsewhere"),
    // A position is a whole number: it prints as "3", not "3.0000".
    {.name = "argmax", .ids_along_last = true, .about = "position of the largest value", .variant = KERNEL_ARGMAX,
     .params = {OP_X, {"axis", PARAM_AXIS, true, 0}}, .infer = infer_reduce, .compute = compute_reduce,
     .explain = explain_reduce, .integers = INTEGERS_ALWAYS},
    // Truth values: 1 when every (some) value is nonzero, as numpy's all and any.
    {.name = "all", .about = "1 when every value is nonzero (true), else 0", .variant = KERNEL_ALL,
     .params = {OP_X, {"axis", PARAM_AXIS, true, 0}, {"keepdims", PARAM_FLAG, true, 0}}, .infer = infer_reduce,
     .compute = compute_reduce, .explain = explain_reduce, .integers = INTEGERS_ALWAYS, .truth = TRUTH_ALL},
    {.name = "any", .about = "1 when some value is nonzero (true), else 0", .variant = KERNEL_ANY,
     .params = {OP_X, {"axis", PARAM_AXIS, true, 0}, {"keepdims", PARAM_FLAG, true, 0}}, .infer = infer_reduce,
     .compute = compute_reduce, .explain = explain_reduce, .integers = INTEGERS_ALWAYS, .truth = TRUTH_ANY},
    {.name = "numel", .about = "number of elements: the product of the shape", .params = {OP_X},
     .infer = infer_numel, .compute = compute_numel, .explain = explain_numel, .from_shapes_only = true,
     .integers = INTEGERS_ALWAYS, .no_grad = OP_NO_GRAD(0)},  // no value of x moves a count of its shape
    {.name = "size", .about = "the size of an axis (every element when axis is left out)",
     .params = {OP_X, {"axis", PARAM_AXIS, true, 0}}, .infer = infer_size, .compute = compute_size,
     .explain = explain_numel, .from_shapes_only = true, .integers = INTEGERS_ALWAYS, .no_grad = OP_NO_GRAD(0)},
};

const OpFamily op_family_reduce = OP_FAMILY(ops);
