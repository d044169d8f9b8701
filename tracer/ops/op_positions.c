// op_positions: tensors built from sizes alone: masks, positions, position encodings, and RoPE.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

static bool infer_square(OpCheck *c) {
    size_t n = (size_t)c->constants[0];
    c->attrs.count = n;
    c->shape = (Shape){.rank = 2, .dim = {n, n}};
    return true;
}

static bool compute_causal_mask(OpRun *r) {
    kernel_causal_mask(r->out);
    return true;
}

static void notes_causal_mask(OpNotes *n) {
    op_note(n, "-inf above the diagonal: after softmax those weights are exactly 0, so no token sees a "
               "later one");
}

static void explain_causal_mask(OpExplain *e) {
    size_t i = e->index[0], j = e->index[1];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_num(&sb, e, e->out, e->out->data[e->flat]);
    if (j > i)
        strbuf_printf(&sb, ": key %zu comes after query %zu, so it must stay hidden", j, i);
    else
        strbuf_printf(&sb, ": key %zu is %s query %zu, so it may be seen", j, j == i ? "the same token as" : "before", i);
    op_work_line(e, &sb);
}

static bool compute_relative_positions(OpRun *r) {
    kernel_relative_positions(r->out);
    return true;
}

static void explain_relative_positions(OpExplain *e) {
    size_t i = e->index[0], j = e->index[1];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "i - j = %zu - %zu", i, j);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_vector(OpCheck *c) {
    c->attrs.count = (size_t)c->constants[0];
    c->shape = (Shape){.rank = 1, .dim = {c->attrs.count}};
    return true;
}

static bool compute_arange(OpRun *r) {
    kernel_arange(r->out);
    return true;
}

static void explain_arange(OpExplain *e) {
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%s[%zu] = position %zu", e->out_name, e->index[0], e->index[0]);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool compute_alibi_slopes(OpRun *r) {
    kernel_alibi_slopes(r->out);
    return true;
}

static void explain_alibi_slopes(OpExplain *e) {
    size_t k = e->index[0] + 1, h = e->out->shape.dim[0];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "2^(-8 × %zu / %zu) = 2^(", k, h);
    op_work_num(&sb, e, e->out, -8.0 * (double)k / (double)h);
    strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_sinusoidal(OpCheck *c) {
    size_t n = (size_t)c->constants[0], d = (size_t)c->constants[1];
    if (d % 2 != 0) {
        op_error(c->problem, OP_PARAM(1), "d must be even: dimensions come in sin/cos pairs");
        return false;
    }
    c->attrs.number = c->constants[2];
    if (!(c->attrs.number > 0))
        return op_error(c->problem, OP_PARAM(2), "base must be positive");
    c->shape = (Shape){.rank = 2, .dim = {n, d}};
    return true;
}

static bool compute_sinusoidal(OpRun *r) {
    kernel_sinusoidal(r->out, r->attrs->number);
    return true;
}

static void explain_sinusoidal(OpExplain *e) {
    size_t pos = e->index[0], dim = e->index[1], d = e->out->shape.dim[1];
    size_t i2 = dim - dim % 2;
    double base = e->attrs->number;
    double denom = pow(base, (double)i2 / (double)d);
    char basebuf[64];
    format_short(base, basebuf, sizeof(basebuf));
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "%s(%zu / %s^(%zu/%zu)) = %s(%zu / ", dim % 2 ? "cos" : "sin", pos, basebuf, i2, d,
                  dim % 2 ? "cos" : "sin", pos);
    op_work_num(&sb, e, e->out, denom);
    strbuf_printf(&sb, ") = %s(", dim % 2 ? "cos" : "sin");
    op_work_num(&sb, e, e->out, (double)pos / denom);
    strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

static bool infer_rope(OpCheck *c) {
    const Shape *x = c->shapes[0], *p = c->shapes[1];
    char sx[64], sp[64];
    shape_format(x, sx, sizeof(sx));
    shape_format(p, sp, sizeof(sp));
    if (x->rank != 2)
        return op_error(c->problem, OP_INPUT(0), "rope rotates rows of a matrix [n, d], but this is %s", sx);
    if (x->dim[1] % 2 != 0) {
        op_error(c->problem, OP_INPUT(0), "rope needs an even number of columns (pairs are rotated), but this is %s", sx);
        return false;
    }
    if (!(p->rank == 1 && p->dim[0] == x->dim[0]) && !(p->rank == 0 && x->dim[0] == 1)) {
        op_error(c->problem, OP_INPUT(1), "rope needs one position per row: %zu positions for %s, but got %s", x->dim[0],
                 sx, sp);
        return false;
    }
    c->attrs.number = c->constants[2];
    if (!(c->attrs.number > 0))
        return op_error(c->problem, OP_PARAM(2), "base must be positive");
    return op_infer_same(c);
}

static bool compute_rope(OpRun *r) {
    kernel_rope(r->out, r->in[0], r->in[1], r->attrs->number);
    return true;
}

static void explain_rope(OpExplain *e) {
    const Tensor *x = e->in[0], *p = e->in[1];
    size_t r = x->shape.rank;
    size_t row = e->index[r - 2], col = e->index[r - 1], d = x->shape.dim[r - 1];
    size_t i = col / 2;
    double pos = p->data[p->shape.rank ? row : 0];
    double base = e->attrs->number;
    double theta = pow(base, -2.0 * (double)i / (double)d), angle = pos * theta;
    const double *xr = x->data + (e->flat - col);
    double a = xr[2 * i], b = xr[2 * i + 1];
    char basebuf[64];
    format_short(base, basebuf, sizeof(basebuf));
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "pair %zu (columns %zu and %zu): theta = %s^(-2×%zu/%zu) = ", i, 2 * i, 2 * i + 1, basebuf, i,
                  d);
    op_work_num(&sb, e, e->out, theta);
    strbuf_puts(&sb, ", angle = ");
    op_work_num(&sb, e, p, pos);
    strbuf_puts(&sb, " × ");
    op_work_num(&sb, e, e->out, theta);
    strbuf_puts(&sb, " = ");
    op_work_num(&sb, e, e->out, angle);
    op_work_line(e, &sb);
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_num(&sb, e, x, col % 2 ? b : a);
    strbuf_puts(&sb, "×cos(");
    op_work_num(&sb, e, e->out, angle);
    strbuf_puts(&sb, col % 2 ? ") + " : ") - ");
    op_work_num(&sb, e, x, col % 2 ? a : b);
    strbuf_puts(&sb, "×sin(");
    op_work_num(&sb, e, e->out, angle);
    strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

static bool grad_rope(OpGrad *g) {
    kernel_grad_rope(g->din, g->dout, g->in[1], g->attrs->number);
    return true;
}

static const OpDef ops[] = {
    {.name = "causal_mask", .about = "causal mask: 0 where a query may look, -inf at later keys",
     .params = {OP_COUNT("n")}, .infer = infer_square, .compute = compute_causal_mask, .notes = notes_causal_mask,
     .explain = explain_causal_mask},
    {.name = "relative_positions", .about = "relative position i - j of key j from query i",
     .params = {OP_COUNT("n")}, .infer = infer_square, .compute = compute_relative_positions,
     .explain = explain_relative_positions, .integers = INTEGERS_ALWAYS},
    {.name = "arange", .about = "the positions 0, 1, ..., n-1", .params = {OP_COUNT("n")}, .infer = infer_vector,
     .compute = compute_arange, .explain = explain_arange, .integers = INTEGERS_ALWAYS},
    {.name = "alibi_slopes", .about = "ALiBi head slopes 2^(-8k/h) for k = 1..h", .params = {OP_COUNT("h")},
     .infer = infer_vector, .compute = compute_alibi_slopes, .explain = explain_alibi_slopes},
    {.name = "sinusoidal", .about = "sinusoidal position encodings: sin on even, cos on odd dimensions",
     .params = {OP_COUNT("n"), OP_COUNT("d"), OP_NUMBER("base", 10000)}, .infer = infer_sinusoidal,
     .compute = compute_sinusoidal, .explain = explain_sinusoidal},
    {.name = "rope", .about = "rotary position embedding: each pair of dimensions turned by position x frequency",
     .params = {OP_X, OP_TENSOR("positions"), OP_NUMBER("base", 10000)}, .infer = infer_rope,
     .compute = compute_rope, .explain = explain_rope, .grad = grad_rope, .no_grad = OP_NO_GRAD(1),
     .grad_formula = {"%g turned back by each angle"}},
};

const OpFamily op_family_positions = OP_FAMILY(ops);
