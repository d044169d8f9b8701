// op_elementwise: elementwise operations: + - * / // % ** and the comparisons == != < <= > >= with
// numpy broadcasting, and, or and not on truth values, allclose, the functions of two or three tensors broadcast together
// (maximum, minimum, where, clip), negation and the functions applied to each value alone (exp,
// log, sqrt, ..., gelu), and copy.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kernel_grad.h"
#include "op.h"

// Broadcast labels: each output axis takes the labels of the first input whose aligned axis
// has the same size and carries labels.
static void broadcast_labels(OpCheck *c) {
    size_t rank = c->shape.rank;
    for (size_t k = 0; k < rank; k++) {
        size_t out_axis = rank - 1 - k;
        for (size_t i = 0; i < c->n_inputs; i++) {
            const Shape *s = c->shapes[i];
            if (k >= s->rank)
                continue;
            size_t axis = s->rank - 1 - k;
            if (s->dim[axis] == c->shape.dim[out_axis] && c->labels[i][axis].items) {
                c->out_labels[out_axis] = c->labels[i][axis];
                break;
            }
        }
    }
}

static bool infer_binary(OpCheck *c) {
    if (!kernel_broadcast_shape(c->shapes[0], c->shapes[1], &c->shape)) {
        char a[64], b[64];
        shape_format(c->shapes[0], a, sizeof(a));
        shape_format(c->shapes[1], b, sizeof(b));
        op_error(c->problem, OP_CALL, "cannot combine %s and %s elementwise with '%s'", a, b, c->op->symbol);
        op_hint(c->problem, "elementwise operations need equal shapes, or axes of size 1 (or missing) "
                            "that stretch, matched from the right%s",
                c->op->variant == KERNEL_MUL && c->shapes[0]->rank == 2 && c->shapes[1]->rank == 2
                    ? "; for a matrix product write A @ B"
                    : "");
        return false;
    }
    broadcast_labels(c);
    return true;
}

// A number's operation on two numbers known before running (d_k / 2 written as an axis).
static double fold_binary(const OpDef *op, double a, double b) {
    return kernel_binary_apply((KernelBinary)op->variant, a, b);
}

static bool compute_binary(OpRun *r) {
    kernel_binary(r->out, r->in[0], r->in[1], (KernelBinary)r->op->variant);
    return true;
}

static void explain_binary(OpExplain *e) {
    const Tensor *a = e->in[0], *b = e->in[1];
    size_t ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK];
    op_broadcast_index(a, e->out, e->index, ia);
    op_broadcast_index(b, e->out, e->index, ib);
    const char *sym = e->op->work_symbol;
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], ia, a->shape.rank);
    strbuf_puts(&sb, sym);
    op_work_ref(&sb, e->in_names[1], ib, b->shape.rank);
    strbuf_puts(&sb, " = ");
    op_work_num(&sb, e, a, a->data[shape_flatten(&a->shape, ia)]);
    strbuf_puts(&sb, sym);
    op_work_num(&sb, e, b, b->data[shape_flatten(&b->shape, ib)]);
    op_work_result(&sb, e);
    if (e->op->truth)
        strbuf_puts(&sb, e->out->data[e->flat] != 0 ? " (true)" : " (false)");
    op_work_line(e, &sb);
}

// A number of shown work in brackets when it is negative: 7.5 - (-4) × (-2); whole: a
// quotient a // b, written without decimals.
static void work_operand(StrBuf *sb, const OpExplain *e, const Tensor *t, double v, bool whole) {
    bool bracket = v < 0;
    strbuf_puts(sb, bracket ? "(" : "");
    if (whole) {
        char buf[FORMAT_NUMBER_CAP];
        format_whole(v, e->digits, buf, sizeof(buf));
        strbuf_puts(sb, buf);
    } else {
        op_work_num(sb, e, t, v);
    }
    strbuf_puts(sb, bracket ? ")" : "");
}

// q[0] = a[0] // b[0] = 7.5 // -2 = (7.5 - (-0.5)) / (-2) = -4, through the remainder a % b;
// r[0] = a[0] % b[0] = 7.5 % -2 = 7.5 - (-4) × (-2) = -0.5, through the quotient a // b. An inf
// or a nan among the numbers (a division by 0) leaves only the operation and its value.
static void explain_divmod(OpExplain *e) {
    const Tensor *a = e->in[0], *b = e->in[1];
    size_t ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK];
    op_broadcast_index(a, e->out, e->index, ia);
    op_broadcast_index(b, e->out, e->index, ib);
    double x = a->data[shape_flatten(&a->shape, ia)], y = b->data[shape_flatten(&b->shape, ib)];
    bool remainder = e->op->variant == KERNEL_MOD;
    double other = kernel_binary_apply(remainder ? KERNEL_FLOOR_DIV : KERNEL_MOD, x, y);
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], ia, a->shape.rank);
    strbuf_puts(&sb, e->op->work_symbol);
    op_work_ref(&sb, e->in_names[1], ib, b->shape.rank);
    strbuf_puts(&sb, " = ");
    op_work_num(&sb, e, a, x);
    strbuf_puts(&sb, e->op->work_symbol);
    op_work_num(&sb, e, b, y);
    if (isfinite(x) && isfinite(y) && isfinite(other) && isfinite(e->out->data[e->flat])) {
        strbuf_puts(&sb, " = ");
        if (remainder) {  // a - (a // b) × b
            op_work_num(&sb, e, a, x);
            strbuf_puts(&sb, " - ");
            work_operand(&sb, e, NULL, other, true);
            strbuf_puts(&sb, " × ");
            work_operand(&sb, e, b, y, false);
        } else {  // (a - a % b) / b
            strbuf_puts(&sb, "(");
            op_work_num(&sb, e, a, x);
            strbuf_puts(&sb, " - ");
            work_operand(&sb, e, NULL, other, false);
            strbuf_puts(&sb, ") / ");
            work_operand(&sb, e, b, y, false);
        }
    }
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// "true at 2 of 6 places": how much of a comparison holds, read at a glance.
static void note_truth_count(OpNotes *n) {
    const Tensor *t = n->out;
    if (t->size < 2)
        return;
    size_t true_count = 0;
    for (size_t i = 0; i < t->size; i++)
        true_count += t->data[i] != 0;
    op_note(n, "true at %zu of %zu places", true_count, t->size);
}

// ---------------------------------------------------------------- maximum, minimum, where, clip

// Functions of two or three tensors, element by element, broadcast together as numpy does.
static bool infer_broadcast_call(OpCheck *c) {
    bool fits = c->n_inputs == 2 ? kernel_broadcast_shape(c->shapes[0], c->shapes[1], &c->shape)
                                 : kernel_broadcast_shape3(c->shapes[0], c->shapes[1], c->shapes[2], &c->shape);
    if (!fits) {
        char shapes[3][64];
        for (size_t i = 0; i < c->n_inputs; i++)
            shape_format(c->shapes[i], shapes[i], sizeof(shapes[i]));
        if (c->n_inputs == 2)
            op_error(c->problem, OP_CALL, "%s cannot combine %s and %s element by element: the shapes do not broadcast",
                     c->op->name, shapes[0], shapes[1]);
        else
            op_error(c->problem, OP_CALL,
                     "%s cannot combine %s, %s and %s element by element: the shapes do not broadcast", c->op->name,
                     shapes[0], shapes[1], shapes[2]);
        op_hint(c->problem, "give tensors of the same shape, or axes of size 1 (or missing) that stretch, "
                            "matched from the right");
        return false;
    }
    broadcast_labels(c);
    return true;
}

static bool compute_where(OpRun *r) {
    kernel_where(r->out, r->in[0], r->in[1], r->in[2]);
    return true;
}

static bool compute_clip(OpRun *r) {
    kernel_clip(r->out, r->in[0], r->in[1], r->in[2]);
    return true;
}

// m[0, 1] = maximum(a[0, 1], b[1]) = maximum(0.5000, 0.2000) = 0.5000: the call with each
// input's element, then with its value.
static void explain_call(OpExplain *e) {
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    for (int values = 0; values < 2; values++) {
        strbuf_printf(&sb, "%s%s(", values ? " = " : "", e->op->name);
        for (size_t i = 0; i < e->n_in; i++) {
            const Tensor *t = e->in[i];
            size_t at[TENSOR_MAX_RANK];
            op_broadcast_index(t, e->out, e->index, at);
            if (i)
                strbuf_puts(&sb, ", ");
            if (values)
                op_work_num(&sb, e, t, t->data[shape_flatten(&t->shape, at)]);
            else
                op_work_ref(&sb, e->in_names[i], at, t->shape.rank);
        }
        strbuf_putc(&sb, ')');
    }
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- allclose

enum { CLOSE_A, CLOSE_B, CLOSE_RTOL, CLOSE_ATOL };

static bool infer_allclose(OpCheck *c) {
    Shape both;
    if (!kernel_broadcast_shape(c->shapes[0], c->shapes[1], &both)) {
        char a[64], b[64];
        shape_format(c->shapes[0], a, sizeof(a));
        shape_format(c->shapes[1], b, sizeof(b));
        op_error(c->problem, OP_CALL, "allclose cannot compare %s with %s: the shapes do not broadcast", a, b);
        op_hint(c->problem, "compare tensors of the same shape, or axes of size 1 (or missing) that stretch, "
                            "matched from the right; index one side to the part you mean, as in out[2:3]");
        return false;
    }
    for (int k = CLOSE_RTOL; k <= CLOSE_ATOL; k++)
        if (!(c->constants[k] >= 0)) {  // also refuses nan
            op_error(c->problem, OP_PARAM(k), "%s must be 0 or more", c->op->params[k].name);
            op_hint(c->problem, "numpy's defaults are rtol=1e-05 and atol=1e-08; with both 0 only equal "
                                "numbers are close");
            return false;
        }
    c->attrs.rtol = c->constants[CLOSE_RTOL];
    c->attrs.atol = c->constants[CLOSE_ATOL];
    c->shape = (Shape){0};
    return true;
}

static bool compute_allclose(OpRun *r) {
    kernel_allclose(r->out, r->in[0], r->in[1], r->attrs->rtol, r->attrs->atol);
    return true;
}

// "largest |a - b|: 0.00001 at [0, 1]; 0 of 4 values not close".
static void note_allclose(OpNotes *n) {
    OpCloseWorst w;
    op_allclose_worst(n->in[0], n->in[1], n->attrs, &w);
    char gap[64];
    format_number(w.largest_difference, n->digits, gap, sizeof(gap));
    op_note(n, "largest |difference|: %s; %zu value%s not close", gap, w.n_far, w.n_far == 1 ? " is" : "s are");
}

// ok = allclose(a, b): |a - b| <= atol + rtol × |b| everywhere; where it fails worst, or where
// a and b differ most when it holds.
static void explain_allclose(OpExplain *e) {
    const Tensor *a = e->in[0], *b = e->in[1];
    OpCloseWorst w;
    op_allclose_worst(a, b, e->attrs, &w);
    char rtol[64], atol[64], tol[64];
    format_short(e->attrs->rtol, rtol, sizeof(rtol));
    format_short(e->attrs->atol, atol, sizeof(atol));
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%s: is every |%s - %s| <= %s + %s × |%s|?", e->out_name, e->in_names[0], e->in_names[1],
                  atol, rtol, e->in_names[1]);
    if (w.n_far) {
        strbuf_printf(&sb, " No, %zu %s not: ", w.n_far, w.n_far == 1 ? "is" : "are");
        if (w.rank) {
            strbuf_puts(&sb, "at ");
            op_work_ref(&sb, "", w.at, w.rank);
            strbuf_putc(&sb, ' ');
        }
        strbuf_puts(&sb, "|");
        op_work_num(&sb, e, a, w.a);
        strbuf_puts(&sb, " - ");
        op_work_num(&sb, e, b, w.b);
        char gap[64];
        format_number(fabs(w.a - w.b), e->digits, gap, sizeof(gap));
        format_number(op_close_tolerance(e->attrs, w.b), e->digits, tol, sizeof(tol));
        strbuf_printf(&sb, "| = %s, more than %s", gap, tol);
    } else {
        format_number(w.largest_difference, e->digits, tol, sizeof(tol));
        strbuf_printf(&sb, " Yes (the largest |difference| is %s), so ", tol);
    }
    if (w.n_far)
        strbuf_puts(&sb, ", so ");
    op_work_lhs(&sb, e);
    op_work_num(&sb, e, e->out, e->out->data[e->flat]);
    strbuf_puts(&sb, w.n_far ? " (false)" : " (true)");
    op_work_line(e, &sb);
}

// A prefix operator's value on a number known before running (-n, not flag).
static double fold_unary(const OpDef *op, double a, double b) {
    (void)b;
    return kernel_unary_apply((KernelUnary)op->variant, a);
}

static bool compute_unary(OpRun *r) {
    kernel_unary(r->out, r->in[0], (KernelUnary)r->op->variant);
    return true;
}

// exp(x[0]) = exp(0.5000) = 1.6487
static void explain_unary(OpExplain *e) {
    const Tensor *x = e->in[0];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "%s(", e->op->name);
    op_work_ref(&sb, e->in_names[0], e->index, x->shape.rank);
    strbuf_printf(&sb, ") = %s(", e->op->name);
    op_work_num(&sb, e, x, x->data[e->flat]);
    strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// y[0] = -x[0] = -(-1.0000) = 1.0000, not --1.0000: a negative operand keeps its brackets.
static void explain_negate(OpExplain *e) {
    const Tensor *x = e->in[0];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_puts(&sb, "-");
    op_work_ref(&sb, e->in_names[0], e->index, x->shape.rank);
    bool bracket = x->data[e->flat] < 0;
    strbuf_printf(&sb, " = -%s", bracket ? "(" : "");
    op_work_num(&sb, e, x, x->data[e->flat]);
    if (bracket)
        strbuf_putc(&sb, ')');
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// y[0] = not x[0] = not 0.5000 = 0 (false)
static void explain_not(OpExplain *e) {
    const Tensor *x = e->in[0];
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    strbuf_printf(&sb, "%s ", e->op->symbol);
    op_work_ref(&sb, e->in_names[0], e->index, x->shape.rank);
    strbuf_printf(&sb, " = %s ", e->op->symbol);
    op_work_num(&sb, e, x, x->data[e->flat]);
    op_work_result(&sb, e);
    strbuf_puts(&sb, e->out->data[e->flat] != 0 ? " (true)" : " (false)");
    op_work_line(e, &sb);
}

static bool compute_copy(OpRun *r) {
    memcpy(r->out->data, r->in[0]->data, r->in[0]->size * sizeof(double));
    return true;
}

static void explain_copy(OpExplain *e) {
    StrBuf sb;
    strbuf_init(&sb);
    op_work_lhs(&sb, e);
    op_work_ref(&sb, e->in_names[0], e->index, e->out->shape.rank);
    op_work_result(&sb, e);
    op_work_line(e, &sb);
}

// ---------------------------------------------------------------- the table

// ---------------------------------------------------------------- derivatives

static bool grad_binary(OpGrad *g) {
    kernel_grad_binary(g->din, g->input, g->dout, g->in[0], g->in[1], (KernelBinary)g->op->variant);
    return true;
}

static bool grad_unary(OpGrad *g) {
    kernel_grad_unary(g->din, g->dout, g->in[0], (KernelUnary)g->op->variant);
    return true;
}

static bool grad_where(OpGrad *g) {
    kernel_grad_where(g->din, g->input, g->dout, g->in[0], g->in[1], g->in[2]);
    return true;
}

static bool grad_clip(OpGrad *g) {
    kernel_grad_clip(g->din, g->input, g->dout, g->in[0], g->in[1], g->in[2]);
    return true;
}

static bool grad_copy(OpGrad *g) {
    kernel_grad_identity(g->din, g->dout);
    return true;
}

// An entry's fields, for an entry that adds its own (where it leaves the real numbers, .domain);
// BINARY and UNARY make the whole entry.
#define BINARY_FIELDS(op_name, tok, sym, shown, what, kind, whole, share_a, share_b)                 \
    .name = op_name, .syntax = OP_INFIX, .token = tok, .symbol = sym, .work_symbol = shown,          \
    .about = what " (numpy broadcasting)", .variant = kind, .params = {OP_X, OP_X},                   \
    .infer = infer_binary, .compute = compute_binary, .explain = explain_binary, .fold = fold_binary, \
    .integers = whole, .elementwise = true, .grad = grad_binary, .grad_formula = {share_a, share_b}
#define BINARY(...) {BINARY_FIELDS(__VA_ARGS__)}
#define UNARY_FIELDS(op_name, what, kind, whole, formula)                                         \
    .name = op_name, .about = what, .variant = kind, .params = {OP_X}, .infer = op_infer_same,  \
    .compute = compute_unary, .explain = explain_unary, .integers = whole, .elementwise = true, \
    .grad = grad_unary, .grad_formula = {formula}
#define UNARY(...) {UNARY_FIELDS(__VA_ARGS__)}

// maximum(a, b), minimum(a, b): the same values as a comparison picks, with a derivative.
#define PICK(op_name, what, kind, share_a, share_b)                                                    \
    {.name = op_name, .about = what " (numpy broadcasting; nan wins)", .variant = kind,                 \
     .params = {OP_TENSOR("a"), OP_TENSOR("b")}, .infer = infer_broadcast_call, .compute = compute_binary, \
     .explain = explain_call, .integers = INTEGERS_IF_INPUTS, .elementwise = true, .grad = grad_binary, \
     .grad_formula = {share_a, share_b}}

#define COMPARE(op_name, tok, sym, what, kind)                                                       \
    {.name = op_name, .syntax = OP_INFIX, .token = tok, .symbol = sym, .work_symbol = " " sym " ",     \
     .about = what ": 1 where true, 0 where false (numpy broadcasting)", .variant = kind,              \
     .params = {OP_X, OP_X}, .infer = infer_binary, .compute = compute_binary, .explain = explain_binary, \
     .notes = note_truth_count, .fold = fold_binary, .integers = INTEGERS_ALWAYS,                      \
     .truth = TRUTH_COMPARES}

static const OpDef ops[] = {
    BINARY("add", '+', "+", " + ", "elementwise sum", KERNEL_ADD, INTEGERS_IF_INPUTS, "%g", "%g"),
    BINARY("subtract", '-', "-", " - ", "elementwise difference", KERNEL_SUB, INTEGERS_IF_INPUTS,
           "%g", "-%g"),
    BINARY("multiply", '*', "*", " × ", "elementwise product", KERNEL_MUL, INTEGERS_IF_INPUTS,
           "%g * %1", "%g * %0"),
    {BINARY_FIELDS("divide", '/', "/", " / ", "elementwise division", KERNEL_DIV, INTEGERS_NEVER, "%g / %1",
                   "-%g * %0 / %1**2"),
     .domain = {.zero_operand = 1,
                .zero_gives_inf = " is a division by zero: IEEE arithmetic gives inf with the sign of the quotient"}},
    {BINARY_FIELDS("power", '^', "**", " ** ", "elementwise power", KERNEL_POW, INTEGERS_NEVER,
                   "%g * %1 * %0**(%1 - 1)", "%g * %y * log(%0)"),
     .binds_before_minus = true,
     .domain = {.zero_gives_inf = " divides by zero (a negative power of 0): IEEE arithmetic gives inf",
                .negative_gives_nan = " has no value: a negative number has no real power with a fraction"}},
    // a // b is a whole number, flat between the jumps at multiples of b: no derivative, as floor
    // (and PyTorch's floor_divide) has none.
    {.name = "floor_divide", .syntax = OP_INFIX, .token = OP_TOKEN_FLOOR_DIV, .symbol = "//", .work_symbol = " // ",
     .about = "elementwise floor division: the whole number of times b fits in a, rounded down, as numpy's "
              "floor_divide (numpy broadcasting)",
     .variant = KERNEL_FLOOR_DIV, .params = {OP_X, OP_X}, .infer = infer_binary, .compute = compute_binary,
     .explain = explain_divmod, .fold = fold_binary, .integers = INTEGERS_ROUNDED, .elementwise = true,
     .no_derivative = "a // b is a whole number, flat between its jumps: no gradient flows through it (PyTorch's "
                      "floor_divide has none either); compute the loss without it",
     .domain = {.zero_operand = 1,
                .zero_gives_inf = " is a division by zero: IEEE arithmetic gives inf with the sign of the quotient"}},
    {.name = "remainder", .syntax = OP_INFIX, .token = '%', .symbol = "%", .work_symbol = " % ",
     .about = "elementwise remainder a - (a // b) × b, with the sign of b, as numpy's remainder (numpy "
              "broadcasting)",
     .variant = KERNEL_MOD, .params = {OP_X, OP_X}, .infer = infer_binary, .compute = compute_binary,
     .explain = explain_divmod, .fold = fold_binary, .integers = INTEGERS_IF_INPUTS, .elementwise = true,
     .grad = grad_binary, .grad_formula = {"%g", "-%g * (%0 // %1)"}},
    COMPARE("equal", OP_TOKEN_EQ, "==", "elementwise a == b", KERNEL_EQ),
    COMPARE("not_equal", OP_TOKEN_NE, "!=", "elementwise a != b", KERNEL_NE),
    COMPARE("less", '<', "<", "elementwise a < b", KERNEL_LT),
    COMPARE("less_equal", OP_TOKEN_LE, "<=", "elementwise a <= b", KERNEL_LE),
    COMPARE("greater", '>', ">", "elementwise a > b", KERNEL_GT),
    COMPARE("greater_equal", OP_TOKEN_GE, ">=", "elementwise a >= b", KERNEL_GE),
    // Truth values as Python's and numpy's: and, or and not give 1 or 0 (numpy's logical_and,
    // logical_or, logical_not), and take any number but 0 as true.
    COMPARE("logical_and", OP_TOKEN_AND, "and", "elementwise a and b, numpy's logical_and (any value but 0 is true, nan too)",
            KERNEL_AND),
    COMPARE("logical_or", OP_TOKEN_OR, "or", "elementwise a or b, numpy's logical_or (any value but 0 is true, nan too)",
            KERNEL_OR),
    {.name = "logical_not", .syntax = OP_PREFIX, .token = OP_TOKEN_NOT, .symbol = "not",
     .about = "elementwise not x, numpy's logical_not: 1 where x is 0, else 0 (nan is true, so not nan is 0)",
     .variant = KERNEL_LOGICAL_NOT, .params = {OP_X}, .infer = op_infer_same, .compute = compute_unary,
     .explain = explain_not, .notes = note_truth_count, .fold = fold_unary, .integers = INTEGERS_ALWAYS,
     .elementwise = true, .truth = TRUTH_COMPARES},
    {.name = "allclose",
     .about = "1 when |a - b| <= atol + rtol × |b| everywhere (numpy broadcasting; nan is never close), else 0",
     .params = {OP_X, OP_X, OP_NUMBER("rtol", 1e-05), OP_NUMBER("atol", 1e-08)}, .infer = infer_allclose,
     .compute = compute_allclose, .notes = note_allclose, .explain = explain_allclose, .integers = INTEGERS_ALWAYS,
     .truth = TRUTH_CLOSE},
    PICK("maximum", "elementwise larger of a and b", KERNEL_MAXIMUM, "%g * ((%0 > %1) + (%0 == %1) / 2)",
         "%g * ((%1 > %0) + (%0 == %1) / 2)"),
    PICK("minimum", "elementwise smaller of a and b", KERNEL_MINIMUM, "%g * ((%0 < %1) + (%0 == %1) / 2)",
         "%g * ((%1 < %0) + (%0 == %1) / 2)"),
    {.name = "where", .about = "elementwise a where cond is true (not 0), else b (numpy broadcasting)",
     .params = {OP_TENSOR("cond"), OP_TENSOR("a"), OP_TENSOR("b")}, .infer = infer_broadcast_call,
     .compute = compute_where, .explain = explain_call, .integers = INTEGERS_IF_INPUTS, .elementwise = true,
     .grad = grad_where, .no_grad = OP_NO_GRAD(0), .grad_formula = {NULL, "%g * (%0 != 0)", "%g * (%0 == 0)"}},
    {.name = "clip", .about = "elementwise x limited to [lo, hi]: minimum(maximum(x, lo), hi) (numpy broadcasting)",
     .params = {OP_X, OP_TENSOR("lo"), OP_TENSOR("hi")}, .infer = infer_broadcast_call, .compute = compute_clip,
     .explain = explain_call, .integers = INTEGERS_IF_INPUTS, .elementwise = true, .grad = grad_clip,
     .grad_formula = {"%g * (%1 <= %0 <= %2)", "%g * (%0 < %1 < %2)", "%g * ((%0 > %2) or (%2 < %1))"}},
    {.name = "negate", .syntax = OP_PREFIX, .token = '-', .symbol = "-", .about = "elementwise negation",
     .variant = KERNEL_NEG, .params = {OP_X}, .infer = op_infer_same, .compute = compute_unary,
     .explain = explain_negate, .fold = fold_unary, .integers = INTEGERS_IF_INPUTS, .elementwise = true,
     .grad = grad_unary, .grad_formula = {"-%g"}},
    {UNARY_FIELDS("exp", "elementwise e^x", KERNEL_EXP, INTEGERS_NEVER, "%g * %y"),
     .domain = {.overflow_hint = " (softmax() subtracts the row's largest value first, so its exps never pass 1)"}},
    {UNARY_FIELDS("log", "elementwise natural logarithm", KERNEL_LOG, INTEGERS_NEVER, "%g / %0"),
     .domain = {.zero_gives_inf = " is -inf: the logarithm falls without end as its argument goes to 0",
                .negative_gives_nan = " has no value: a negative number has no real logarithm"}},
    {UNARY_FIELDS("sqrt", "elementwise square root", KERNEL_SQRT, INTEGERS_NEVER, "%g * 0.5 / %y"),
     .domain = {.negative_gives_nan = " has no value: a negative number has no real square root"}},
    UNARY("abs", "elementwise absolute value", KERNEL_ABS, INTEGERS_IF_INPUTS, "%g * sign(%0)"),
    UNARY("relu", "elementwise max(x, 0)", KERNEL_RELU, INTEGERS_IF_INPUTS, "%g * (%0 > 0)"),
    UNARY("gelu", "elementwise GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", KERNEL_GELU,
          INTEGERS_NEVER, "%g * gelu'(%0)"),
    UNARY("tanh", "elementwise tanh", KERNEL_TANH, INTEGERS_NEVER, "%g * (1 - %y**2)"),
    UNARY("sin", "elementwise sine", KERNEL_SIN, INTEGERS_NEVER, "%g * cos(%0)"),
    UNARY("cos", "elementwise cosine", KERNEL_COS, INTEGERS_NEVER, "-%g * sin(%0)"),
    UNARY("silu", "elementwise SiLU: x * sigmoid(x) = x / (1 + e^-x)", KERNEL_SILU, INTEGERS_NEVER, "%g * silu'(%0)"),
    UNARY("sigmoid", "elementwise logistic sigmoid: 1 / (1 + e^-x)", KERNEL_SIGMOID, INTEGERS_NEVER,
          "%g * %y * (1 - %y)"),
    // Whole numbers with no derivative: flat between whole numbers, a jump at them.
    {.name = "floor", .about = "elementwise largest whole number not above x", .variant = KERNEL_FLOOR,
     .params = {OP_X}, .infer = op_infer_same, .compute = compute_unary, .explain = explain_unary,
     .integers = INTEGERS_ROUNDED, .elementwise = true},
    {.name = "ceil", .about = "elementwise smallest whole number not below x", .variant = KERNEL_CEIL,
     .params = {OP_X}, .infer = op_infer_same, .compute = compute_unary, .explain = explain_unary,
     .integers = INTEGERS_ROUNDED, .elementwise = true},
    {.name = "round", .about = "elementwise nearest whole number, halves to the even one (numpy's round)",
     .variant = KERNEL_ROUND, .params = {OP_X}, .infer = op_infer_same, .compute = compute_unary,
     .explain = explain_unary, .integers = INTEGERS_ROUNDED, .elementwise = true},
    {.name = "copy", .keeps_ids = true, .about = "the same values under a new name", .params = {OP_X}, .infer = op_infer_same,
     .compute = compute_copy, .explain = explain_copy, .integers = INTEGERS_IF_FIRST, .elementwise = true,
     .grad = grad_copy, .grad_formula = {"%g"}},
};

const OpFamily op_family_elementwise = OP_FAMILY(ops);
