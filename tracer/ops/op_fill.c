// op_fill: tensors filled from sizes alone (ones, zeros, full, eye, and seeded uniform numbers),
// and the triangles of a matrix (tril, triu) that keep the entries on one side of a diagonal.
#include <math.h>
#include <stdio.h>

#include "format.h"
#include "kernel_triangle.h"
#include "op.h"

static bool compute_filled(OpRun *r);

// ones(shape), zeros(shape), full(shape, value): shape is [2, 3] or a single size, as numpy's.
static bool infer_filled(OpCheck *c) {
    Shape s = {.rank = c->attrs.n_dims};
    for (size_t k = 0; k < c->attrs.n_dims; k++) {
        if (c->attrs.dims[k] < 0) {
            op_error(c->problem, OP_PARAM(0), "a size of %s cannot be %lld: a tensor has 0 or more entries along an axis",
                     c->op->name, c->attrs.dims[k]);
            op_hint(c->problem, "give every size, as in %s([2, 3]); -1 is only reshape's", c->op->name);
            return false;
        }
        s.dim[k] = (size_t)c->attrs.dims[k];
    }
    c->shape = s;
    // full's value, or the one number ones and zeros hold (their variant)
    if (c->op->compute == compute_filled)  // uniform keeps its seed in number
        c->attrs.number = c->present[1] ? c->constants[1] : (double)c->op->variant;
    return true;
}

static bool compute_filled(OpRun *r) {
    kernel_fill(r->out, r->attrs->number);
    return true;
}

static void explain_filled(OpExplain *e) {
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_puts(&sb, "every entry");
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// uniform(shape=[], seed=0): a single number when the shape is left out (uniform(seed=7)); the seed a whole number a double holds exactly, 0 to 2^53.
static bool infer_uniform(OpCheck *c) {
    double seed = c->constants[1];
    if (!(seed >= 0 && seed <= 0x1p53 && seed == floor(seed))) {
        char s[64];
        format_short(seed, s, sizeof(s));
        op_error(c->problem, OP_PARAM(1), "seed = %s, but a seed is a whole number from 0 to 2^53", s);
        op_hint(c->problem, "any whole number names its own draws: uniform(seed=7)");
        return false;
    }
    c->attrs.number = seed;
    return infer_filled(c);
}

static bool compute_uniform(OpRun *r) {
    kernel_fill_random(r->out, KERNEL_UNIT, 1.0, (uint64_t)r->attrs->number);
    return true;
}

// value i is the i-th draw of the generator from the seed (kernel.h states it)
static void explain_uniform(OpExplain *e) {
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "draw %zu of splitmix64 from seed %.0f", e->flat, e->attrs->number);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_eye(OpCheck *c) {
    size_t n = (size_t)c->constants[0];
    c->shape = (Shape){.rank = 2, .dim = {n, n}};
    return true;
}

static bool compute_eye(OpRun *r) {
    kernel_eye(r->out);
    return true;
}

static void explain_eye(OpExplain *e) {
    size_t i = e->index[0], j = e->index[1];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_num(&sb, e, e->out, e->out->data[e->flat]);
    strbuf_printf(&sb, i == j ? ": on the diagonal (row %zu, column %zu)" : ": off the diagonal (row %zu, column %zu)",
                  i, j);
    op_work_line(e, &sb);
}

// tril(x, k=0), triu(x, k=0): x has at least two axes; k is a whole number.
static bool infer_triangle(OpCheck *c) {
    if (c->shapes[0]->rank < 2) {
        char s[64];
        shape_format(c->shapes[0], s, sizeof(s));
        op_error(c->problem, OP_INPUT(0), "%s needs a matrix (two axes or more), but this one is %s", c->op->name, s);
        op_hint(c->problem, "a triangle is taken over the last two axes: rows i and columns j");
        return false;
    }
    double k = c->constants[1];
    if (k != floor(k) || fabs(k) > (double)TENSOR_MAX_VALUES) {
        op_error(c->problem, OP_PARAM(1), "k counts diagonals from the main one, so it is a whole number, not %g", k);
        op_hint(c->problem, "k=0 is the main diagonal, k=1 the one above it, k=-1 the one below");
        return false;
    }
    c->attrs.number = k;
    return op_infer_same(c);
}

static KernelTriangle triangle_side(const OpDef *op) {
    return (KernelTriangle)op->variant;
}

static bool compute_triangle(OpRun *r) {
    kernel_triangle(r->out, r->in[0], (long long)r->attrs->number, triangle_side(r->op));
    return true;
}

// Why the entry is kept or set to 0: where column j lies against diagonal k of row i.
static void explain_triangle(OpExplain *e) {
    size_t rank = e->out->shape.rank, i = e->index[rank - 2], j = e->index[rank - 1];
    long long k = (long long)e->attrs->number, d = (long long)j - (long long)i;
    bool lower = triangle_side(e->op) == KERNEL_LOWER, kept = lower ? d <= k : d >= k;
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    if (kept)
        op_work_ref(&sb, e->in_names[0], e->index, rank);
    else
        strbuf_putc(&sb, '0');
    strbuf_printf(&sb, " (j - i = %lld %s k = %lld)", d, kept ? (lower ? "<=" : ">=") : (lower ? ">" : "<"), k);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool grad_triangle(OpGrad *g) {
    kernel_grad_triangle(g->din, g->dout, (long long)g->attrs->number, triangle_side(g->op));
    return true;
}

#define SHAPE_PARAM {"shape", PARAM_SHAPE, false, 0}

static const OpDef ops[] = {
    {.name = "ones", .about = "a tensor of this shape, every entry 1", .variant = 1,
     .params = {SHAPE_PARAM},
     .infer = infer_filled, .compute = compute_filled, .explain = explain_filled, .integers = INTEGERS_ALWAYS},
    {.name = "zeros", .about = "a tensor of this shape, every entry 0", .variant = 0,
     .params = {SHAPE_PARAM},
     .infer = infer_filled, .compute = compute_filled, .explain = explain_filled, .integers = INTEGERS_ALWAYS},
    {.name = "full", .about = "a tensor of this shape, every entry the value",
     .params = {SHAPE_PARAM, {"value", PARAM_NUMBER, false, 0}}, .infer = infer_filled, .compute = compute_filled,
     .explain = explain_filled},
    {.name = "uniform", .about = "a tensor of this shape, each entry a uniform number in [0, 1) drawn from seed",
     .params = {{"shape", PARAM_SHAPE, true, 0}, OP_NUMBER("seed", 0)}, .infer = infer_uniform, .compute = compute_uniform,
     .explain = explain_uniform},
    {.name = "eye", .about = "the n × n identity: 1 on the diagonal, 0 elsewhere", .params = {OP_COUNT("n")},
     .infer = infer_eye, .compute = compute_eye, .explain = explain_eye, .integers = INTEGERS_ALWAYS},
    {.name = "tril", .about = "the lower triangle: entries on and below diagonal k kept, the rest 0",
     .variant = KERNEL_LOWER, .params = {OP_X, OP_NUMBER("k", 0)}, .infer = infer_triangle,
     .compute = compute_triangle, .explain = explain_triangle, .integers = INTEGERS_IF_FIRST, .grad = grad_triangle,
     .grad_formula = {"(%g, 0 outside the triangle)"}},
    {.name = "triu", .about = "the upper triangle: entries on and above diagonal k kept, the rest 0",
     .variant = KERNEL_UPPER, .params = {OP_X, OP_NUMBER("k", 0)}, .infer = infer_triangle,
     .compute = compute_triangle, .explain = explain_triangle, .integers = INTEGERS_IF_FIRST, .grad = grad_triangle,
     .grad_formula = {"(%g, 0 outside the triangle)"}},
};

const OpFamily op_family_fill = OP_FAMILY(ops);
