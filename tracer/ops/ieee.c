// ieee: notes on inf and nan, the values IEEE arithmetic gives where a number stops being one.
#include "ieee.h"

#include <math.h>

#include "backend.h"
#include "format.h"

typedef struct Scan {
    bool nan, inf;
} Scan;

typedef struct ScanJob {
    const Tensor *t;
    BackendBlocks blocks;
    Scan found[BACKEND_MAX_BLOCKS];
} ScanJob;

static void scan_blocks(void *ctx, size_t begin, size_t end) {
    ScanJob *j = ctx;
    for (size_t b = begin; b < end; b++) {
        const double *v = j->t->data + b * j->blocks.size;
        size_t n = backend_block_length(&j->blocks, b);
        // no early exit: a tensor of finite values, the common case, is read to its end anyway
        bool nan = false, inf = false;
        for (size_t k = 0; k < n; k++) {
            nan |= isnan(v[k]);
            inf |= isinf(v[k]);
        }
        j->found[b] = (Scan){nan, inf};
    }
}

// Whether t holds a nan, an inf: its values read in blocks on the threads of the loops.
static Scan scan(const Tensor *t) {
    Scan s = {false, false};
    if (!t->data)
        return s;
    ScanJob j;  // found is written block by block before it is read: not zeroed first
    j.t = t;
    j.blocks = backend_blocks(t->size);
    backend_for(j.blocks.count, 1, scan_blocks, &j);
    for (size_t b = 0; b < j.blocks.count; b++) {
        s.nan = s.nan || j.found[b].nan;
        s.inf = s.inf || j.found[b].inf;
    }
    return s;
}

// The first element of out that is nan (want_nan) or infinite.
static size_t first(const Tensor *out, bool want_nan) {
    for (size_t k = 0; k < out->size; k++)
        if (want_nan ? isnan(out->data[k]) : isinf(out->data[k]))
            return k;
    return out->size;
}

// "weights[1, 2]", or the bare name for a scalar.
static void element(StrBuf *sb, const char *name, const Tensor *t, size_t flat) {
    size_t idx[TENSOR_MAX_RANK];
    shape_unflatten(&t->shape, flat, idx);
    strbuf_puts(sb, name);
    for (size_t i = 0; i < t->shape.rank; i++)
        strbuf_printf(sb, "%s%zu", i ? ", " : "[", idx[i]);
    if (t->shape.rank)
        strbuf_putc(sb, ']');
}

// An operand as a learner would write it: 800, -2, 1e+200, inf (shortest exact form).
static void operand(StrBuf *sb, double v) {
    char buf[FORMAT_NUMBER_CAP];
    format_short(v, buf, sizeof(buf));
    strbuf_puts(sb, buf);
}

// The operands of elementwise element flat: one per input, broadcast as numpy does.
static void operands(const Tensor *out, const Tensor *const *in, size_t n_in, size_t flat, double *v) {
    size_t out_idx[TENSOR_MAX_RANK], idx[TENSOR_MAX_RANK];
    shape_unflatten(&out->shape, flat, out_idx);
    for (size_t i = 0; i < n_in; i++) {
        op_broadcast_index(in[i], out, out_idx, idx);
        size_t f = 0;
        for (size_t a = 0; a < in[i]->shape.rank; a++)
            f = f * in[i]->shape.dim[a] + idx[a];
        v[i] = in[i]->data[f];
    }
}

// "exp(800)", "inf / inf": the elementwise operation on these operands. (Negation, the one
// prefix operation, never makes an inf or a nan of numbers that are neither.)
static void written(StrBuf *sb, const OpDef *op, const double *v, size_t n_in) {
    if (op->syntax == OP_INFIX && n_in == 2) {
        // -8 ** 0.5 would read as -(8 ** 0.5): a power binds tighter than the minus
        bool bracket = v[0] < 0 && op->binds_before_minus;
        strbuf_puts(sb, bracket ? "(" : "");
        operand(sb, v[0]);
        strbuf_printf(sb, "%s %s ", bracket ? ")" : "", op->symbol);
        operand(sb, v[1]);
    } else {
        strbuf_printf(sb, "%s(", op->name);
        operand(sb, v[0]);
        strbuf_putc(sb, ')');
    }
}

// An inf from finite numbers: an overflow, a division by zero or the log of 0.
static void made_inf(StrBuf *sb, const OpDef *op, const Tensor *out, const Tensor *const *in, size_t n_in,
                     const char *stage) {
    size_t k = first(out, false);
    if (!op->elementwise || n_in > 2) {
        element(sb, stage, out, k);
        strbuf_printf(sb, " overflows to %s: the %s passes the largest double, about 1.8e308",
                      out->data[k] < 0 ? "-inf" : "inf", op->name);
        return;
    }
    double v[2];
    operands(out, in, n_in, k, v);
    written(sb, op, v, n_in);
    const OpDomain *d = &op->domain;
    if (d->zero_gives_inf && d->zero_operand < n_in && v[d->zero_operand] == 0)
        strbuf_puts(sb, d->zero_gives_inf);
    else
        strbuf_printf(sb, " overflows: the largest double is about 1.8e308, so it is %s",
                      out->data[k] < 0 ? "-inf" : "inf");
    if (d->overflow_hint && v[0] > 0)
        strbuf_puts(sb, d->overflow_hint);
}

// A nan from numbers that are not nan: name the operation that has no value.
static void made_nan(StrBuf *sb, const OpDef *op, const Tensor *out, const Tensor *const *in, size_t n_in,
                     const char *stage, bool inf_in) {
    size_t k = first(out, true);
    element(sb, stage, out, k);
    strbuf_puts(sb, " is nan: ");
    if (op->elementwise && n_in <= 2) {
        double v[2];
        operands(out, in, n_in, k, v);
        written(sb, op, v, n_in);
        if (op->domain.negative_gives_nan && v[0] < 0)
            strbuf_puts(sb, op->domain.negative_gives_nan);
        else
            strbuf_puts(sb, " has no value, so IEEE arithmetic gives nan");
        return;
    }
    if (inf_in)
        strbuf_printf(sb, "the %s meets an inf it cannot resolve (inf - inf or 0 * inf inside it)", op->name);
    else
        // Finite inputs whose intermediate results overflowed (a LayerNorm of 1e200s squares
        // them) or divided 0 by 0.
        strbuf_printf(sb, "a step inside the %s gave 0 / 0, inf - inf or 0 * inf (an intermediate result can "
                          "overflow even when the inputs do not)", op->name);
}

bool ieee_note(IeeeWatch *watch, const OpDef *op, const Tensor *out, const Tensor *const *in, size_t n_in,
               const char *stage, Arena *arena, const char **note) {
    *note = NULL;
    if (!out->data || n_in == 0)
        return true;  // a mask or a table built from nothing means its inf
    Scan o = scan(out), i = {false, false};
    if (!o.nan && !o.inf)
        return true;  // every value a number: nothing to say, whatever the inputs hold
    for (size_t k = 0; k < n_in; k++) {
        Scan s = scan(in[k]);
        i.nan = i.nan || s.nan;
        i.inf = i.inf || s.inf;
    }
    StrBuf sb;
    strbuf_init(&sb);
    if (o.nan && !i.nan) {
        made_nan(&sb, op, out, in, n_in, stage, i.inf);
        if (!watch->nan_stage)
            watch->nan_stage = stage;
    } else if (o.nan && !watch->inherited_said) {
        watch->inherited_said = true;
        strbuf_printf(&sb, "the nan comes from %s: any operation on a nan gives nan, so it spreads to every "
                           "later result it touches (and nothing more is said of it)",
                      watch->nan_stage ? watch->nan_stage : "an input");
    } else if (o.inf && !i.inf && !i.nan) {
        made_inf(&sb, op, out, in, n_in, stage);
    }
    bool ok = !sb.failed;
    if (ok && sb.len)
        ok = (*note = arena_strdup(arena, strbuf_str(&sb))) != NULL;
    strbuf_finish(&sb);
    return ok;
}
