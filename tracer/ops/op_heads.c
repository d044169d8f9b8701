// op_heads: the same values in other axes: split_heads, merge_heads and reshape.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

static bool infer_split_heads(OpCheck *c) {
    if (!op_needs_rank(c, 0, 2))
        return false;
    const Shape *x = c->shapes[0];
    if (x->rank >= TENSOR_MAX_RANK)
        return op_error(c->problem, OP_INPUT(0), "split_heads would need more than %d axes", TENSOR_MAX_RANK);
    size_t h = (size_t)c->constants[1], d = x->dim[x->rank - 1];
    if (d % h != 0) {
        op_error(c->problem, OP_PARAM(1), "%zu columns cannot be split evenly into %zu heads", d, h);
        op_hint(c->problem, "d_model must be a multiple of the number of heads");
        return false;
    }
    c->attrs.count = h;
    bool fits = kernel_split_heads_shape(x, h, &c->shape);
    ASSERT(fits);  // rank and divisibility checked above
    size_t r = x->rank;
    for (size_t i = 0; i + 2 < r; i++)
        c->out_labels[i] = c->labels[0][i];
    c->out_labels[r - 1] = c->labels[0][r - 2];  // the token axis keeps its labels
    // The new axis is the heads: label them "head 0", "head 1", ... so slices say which.
    const char **names = arena_array(c->arena, h, sizeof(char *));
    if (!names)
        return op_out_of_memory(c->problem);
    for (size_t k = 0; k < h; k++)
        if (!(names[k] = arena_printf(c->arena, "head %zu", k)))
            return op_out_of_memory(c->problem);
    c->out_labels[r - 2] = (Labels){names, h};
    return true;
}

static bool compute_split_heads(OpRun *r) {
    kernel_split_heads(r->out, r->in[0], r->attrs->count);
    return true;
}

static void explain_split_heads(OpExplain *e) {
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
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], src, r - 1);
    strbuf_printf(&sb, " (head %zu takes columns %zu to %zu)", h, h * dh, (h + 1) * dh - 1);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_merge_heads(OpCheck *c) {
    if (!op_needs_rank(c, 0, 3))
        return false;
    const Shape *x = c->shapes[0];
    bool fits = kernel_merge_heads_shape(x, &c->shape);
    ASSERT(fits);  // at least three axes, checked above
    size_t r = x->rank;
    for (size_t i = 0; i + 3 < r; i++)
        c->out_labels[i] = c->labels[0][i];
    c->out_labels[r - 3] = c->labels[0][r - 2];
    return true;
}

static bool compute_merge_heads(OpRun *r) {
    kernel_merge_heads(r->out, r->in[0]);
    return true;
}

static void explain_merge_heads(OpExplain *e) {
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
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], src, r);
    strbuf_printf(&sb, " (column %zu is column %zu of head %zu)", col, col % dh, col / dh);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// reshape(x, [a, b, ...]): the values in reading order (row by row), under a new shape with the
// same number of values; one size may be -1, worked out from the others, as in numpy.
static bool infer_reshape(OpCheck *c) {
    const Shape *x = c->shapes[0];
    const OpAttrs *at = &c->attrs;
    char from[64], to[96];
    shape_format(x, from, sizeof(from));
    size_t used = (size_t)snprintf(to, sizeof(to), "[");
    for (size_t i = 0; i < at->n_dims; i++)
        used += (size_t)snprintf(to + used, sizeof(to) - used, "%s%lld", i ? ", " : "", at->dims[i]);
    snprintf(to + used, sizeof(to) - used, "]");
    size_t size;
    shape_size(x, &size);
    char count[FORMAT_NUMBER_CAP];
    format_count((double)size, count, sizeof(count));
    switch (kernel_reshape_shape(x, at->dims, at->n_dims, &c->shape)) {
    case KERNEL_RESHAPE_OK:
        break;
    case KERNEL_RESHAPE_TOO_MANY_AXES:
        return op_error(c->problem, OP_PARAM(1), "%s has more than %d sizes", to, TENSOR_MAX_RANK);
    case KERNEL_RESHAPE_NEGATIVE:
        op_error(c->problem, OP_PARAM(1), "%s holds a size below -1", to);
        op_hint(c->problem, "a size is 0 or more, or -1 (once) for the size worked out from the others");
        return false;
    case KERNEL_RESHAPE_TWO_UNKNOWN:
        op_error(c->problem, OP_PARAM(1), "%s has -1 twice: only one size can be worked out", to);
        op_hint(c->problem, "give every size but one, as in [2, -1]");
        return false;
    case KERNEL_RESHAPE_UNKNOWN_OF_ZERO:
        op_error(c->problem, OP_PARAM(1), "%s puts -1 beside a 0: any size would do for the -1", to);
        op_hint(c->problem, "write the size instead of -1");
        return false;
    case KERNEL_RESHAPE_SIZE_DIFFERS: {
        long long known = 1;  // the product of the sizes given, -1 aside
        bool unknown = false;
        for (size_t i = 0; i < at->n_dims; i++) {
            unknown = unknown || at->dims[i] == -1;
            known *= at->dims[i] == -1 ? 1 : at->dims[i];
        }
        if (unknown)
            op_error(c->problem, OP_PARAM(1), "cannot reshape %s (%s values) into %s: %s is not a multiple of %lld",
                     from, count, to, count, known);
        else
            op_error(c->problem, OP_PARAM(1), "cannot reshape %s (%s values) into %s", from, count, to);
        op_hint(c->problem, "reshape keeps every value: the sizes must multiply to %s (numpy refuses this too)", count);
        return false;
    }
    }
    // The trailing axes that keep their size keep their meaning, and so their labels.
    for (size_t i = 1; i <= x->rank && i <= c->shape.rank; i++) {
        if (x->dim[x->rank - i] != c->shape.dim[c->shape.rank - i])
            break;
        c->out_labels[c->shape.rank - i] = c->labels[0][x->rank - i];
    }
    return true;
}

static bool compute_reshape(OpRun *r) {
    kernel_reshape(r->out, r->in[0]);
    return true;
}

static void explain_reshape(OpExplain *e) {
    const Tensor *x = e->in[0];
    size_t src[TENSOR_MAX_RANK];
    shape_unflatten(&x->shape, e->flat, src);
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], src, x->shape.rank);
    strbuf_printf(&sb, " (number %zu in reading order, from 0)", e->flat);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

static bool grad_split_heads(OpGrad *g) {
    kernel_grad_split_heads(g->din, g->dout);
    return true;
}

static bool grad_merge_heads(OpGrad *g) {
    kernel_grad_merge_heads(g->din, g->dout);
    return true;
}

// The same values in the same reading order: the gradient goes back unchanged, in x's shape.
static bool grad_reshape(OpGrad *g) {
    kernel_grad_identity(g->din, g->dout);
    return true;
}

static const OpDef ops[] = {
    {.name = "split_heads",
     .about = "split columns into heads: head h takes columns h*d_head to (h+1)*d_head - 1",
     .params = {OP_X, OP_COUNT("heads")}, .infer = infer_split_heads, .compute = compute_split_heads,
     .explain = explain_split_heads, .integers = INTEGERS_IF_FIRST,
     .grad = grad_split_heads, .grad_formula = {"merge_heads(%g)"}},
    {.name = "merge_heads", .about = "concatenate the heads' columns side by side", .params = {OP_X},
     .infer = infer_merge_heads, .compute = compute_merge_heads,
     .explain = explain_merge_heads,
     .integers = INTEGERS_IF_FIRST, .grad = grad_merge_heads, .grad_formula = {"split_heads(%g)"}},
    {.name = "reshape", .keeps_ids = true, .about = "the same values in reading order, in a new shape",
     .params = {OP_X, {"shape", PARAM_SHAPE, false, 0}}, .infer = infer_reshape, .compute = compute_reshape,
     .explain = explain_reshape, .integers = INTEGERS_IF_FIRST, .grad = grad_reshape,
     .grad_formula = {"%g in the shape of %0"}},
};

const OpFamily op_family_heads = OP_FAMILY(ops);
