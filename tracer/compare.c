// compare: two traces side by side, stage by stage.
#include "compare.h"

#include <math.h>
#include <string.h>

#include "format.h"

static bool same_value(double a, double b) {
    return a == b || (isnan(a) && isnan(b));
}

// How far apart two values are: inf when only one is nan or when infinities differ.
static double change_size(double a, double b) {
    if (same_value(a, b))
        return 0;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b))
        return INFINITY;
    return fabs(a - b);
}

static const TraceStage *find_stage(const Trace *t, const char *name) {
    for (size_t i = 0; i < t->n_stages; i++)
        if (strcmp(t->stages[i].name, name) == 0)
            return &t->stages[i];
    return NULL;
}

// "Given Q_0 [4]" or "Step 2a scaled.1 [3]".
static void stage_title(StrBuf *out, const TraceStage *s) {
    char shape[128];
    shape_format(&s->value->shape, shape, sizeof(shape));
    if (s->kind == STAGE_GIVEN)
        strbuf_printf(out, "Given %s", s->name);
    else
        strbuf_printf(out, "Step %s %s", s->number, s->name);
    if (s->value->shape.rank)
        strbuf_printf(out, " %s", shape);
}

static void position(StrBuf *out, const Shape *shape, size_t flat) {
    size_t idx[TENSOR_MAX_RANK] = {0};
    for (size_t i = shape->rank; i-- > 0;) {
        idx[i] = shape->dim[i] ? flat % shape->dim[i] : 0;
        flat = shape->dim[i] ? flat / shape->dim[i] : 0;
    }
    strbuf_putc(out, '[');
    for (size_t i = 0; i < shape->rank; i++)
        strbuf_printf(out, "%s%zu", i ? ", " : "", idx[i]);
    strbuf_putc(out, ']');
}

static void number(StrBuf *out, const Tensor *t, double v, int digits) {
    char buf[64];
    if (t->is_count)
        format_count(v, buf, sizeof(buf));
    else
        format_number(v, digits, buf, sizeof(buf));
    strbuf_puts(out, buf);
}

static bool small(const Tensor *t) {
    const Shape *s = &t->shape;
    size_t rows = s->rank >= 2 ? s->dim[0] : 1, cols = s->rank ? s->dim[s->rank - 1] : 1;
    return t->data && s->rank <= 2 && rows <= COMPARE_SIDE_BY_SIDE_ROWS && cols <= COMPARE_SIDE_BY_SIDE_COLS;
}

// One row of a small tensor as "[ 0.5000  0.2000 ]", padded to width columns.
static size_t row_text(StrBuf *out, const Tensor *t, size_t row, int digits) {
    size_t cols = t->shape.rank ? t->shape.dim[t->shape.rank - 1] : 1;
    size_t start = out->len;
    FormatStyle style = format_style(t->data, t->size, digits, t->is_count);
    strbuf_putc(out, '[');
    for (size_t c = 0; c < cols; c++) {
        char buf[FORMAT_NUMBER_CAP];
        format_with(&style, t->data[row * cols + c], buf, sizeof(buf));
        strbuf_printf(out, " %*s", digits + 3, buf);
    }
    strbuf_puts(out, " ]");
    return out->len - start;
}

// Before and after, row by row; rows that changed are marked.
static void side_by_side(StrBuf *out, const Tensor *a, const Tensor *b, int digits) {
    size_t rows_a = a->shape.rank >= 2 ? a->shape.dim[0] : 1, rows_b = b->shape.rank >= 2 ? b->shape.dim[0] : 1;
    size_t rows = rows_a > rows_b ? rows_a : rows_b;
    size_t width = 0;
    StrBuf probe;
    strbuf_init(&probe);
    for (size_t r = 0; r < rows_a; r++) {
        strbuf_clear(&probe);
        size_t w = row_text(&probe, a, r, digits);
        if (w > width)
            width = w;
    }
    out->failed = out->failed || probe.failed;  // the columns would not line up
    strbuf_finish(&probe);
    strbuf_printf(out, "      %-*s   %s\n", (int)width, "before", "after");
    for (size_t r = 0; r < rows; r++) {
        strbuf_puts(out, "      ");
        size_t w = r < rows_a ? row_text(out, a, r, digits) : 0;
        strbuf_printf(out, "%*s   ", (int)(width - w), "");
        if (r < rows_b)
            row_text(out, b, r, digits);
        bool changed = r >= rows_a || r >= rows_b || a->shape.rank != b->shape.rank ||
                       a->shape.dim[a->shape.rank ? a->shape.rank - 1 : 0] !=
                           b->shape.dim[b->shape.rank ? b->shape.rank - 1 : 0];
        if (!changed) {
            size_t cols = a->shape.rank ? a->shape.dim[a->shape.rank - 1] : 1;
            for (size_t c = 0; c < cols; c++)
                changed |= !same_value(a->data[r * cols + c], b->data[r * cols + c]);
        }
        strbuf_puts(out, changed ? "   <- changed\n" : "\n");
    }
}

// Report one stage present in both; false when it differs.
static bool compare_stage(StrBuf *out, const TraceStage *sa, const TraceStage *sb, int digits) {
    const Tensor *a = sa->value, *b = sb->value;
    char shape_a[128], shape_b[128];
    shape_format(&a->shape, shape_a, sizeof(shape_a));
    shape_format(&b->shape, shape_b, sizeof(shape_b));
    if (!shape_equal(&a->shape, &b->shape)) {
        stage_title(out, sb);
        strbuf_printf(out, ": the shape changed from %s to %s\n", shape_a, shape_b);
        if (small(a) && small(b))
            side_by_side(out, a, b, digits);
        return false;
    }
    if (!a->data || !b->data) {
        if (!a->data && !b->data)
            return true;  // shape-only in both, the same shape
        stage_title(out, sb);
        strbuf_printf(out, ": %s\n", a->data ? "now shape-only (no values)" : "now has values (was shape-only)");
        return false;
    }
    size_t changed = 0, worst = 0;
    double largest = -1;
    for (size_t k = 0; k < a->size; k++) {
        double d = change_size(a->data[k], b->data[k]);
        if (d == 0)
            continue;
        changed++;
        if (d > largest) {
            largest = d;
            worst = k;
        }
    }
    if (!changed)
        return true;
    stage_title(out, sb);
    strbuf_printf(out, ": %zu of %zu value%s changed; the largest change is ", changed, a->size,
                  a->size == 1 ? "" : "s");
    if (a->shape.rank) {
        strbuf_puts(out, "at ");
        position(out, &a->shape, worst);
        strbuf_puts(out, ": ");
    }
    number(out, a, a->data[worst], digits);
    strbuf_puts(out, " -> ");
    number(out, b, b->data[worst], digits);
    strbuf_putc(out, '\n');
    if (a->shape.rank && small(a))
        side_by_side(out, a, b, digits);
    return false;
}

static void list_only_in(StrBuf *out, const Trace *t, const Trace *other, const char *name) {
    bool any = false;
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *s = &t->stages[i];
        if (find_stage(other, s->name))
            continue;
        strbuf_puts(out, any ? ", " : "Only in ");
        if (!any)
            strbuf_printf(out, "%s: ", name);
        stage_title(out, s);
        any = true;
    }
    if (any)
        strbuf_putc(out, '\n');
}

// The claims whose verdict the edit turned (held, now fails; or the other way), and those only
// the edited lesson states: whether the lesson's own claims survive is what a student asks first.
static void changed_claims(StrBuf *out, const Trace *a, const Trace *b) {
    for (size_t i = 0; i < b->n_claims; i++) {
        const TraceClaim *cb = &b->claims[i], *ca = NULL;
        for (size_t k = 0; k < a->n_claims && !ca; k++)
            if (strcmp(a->claims[k].text, cb->text) == 0)
                ca = &a->claims[k];
        if (ca && ca->holds == cb->holds)
            continue;
        const char *was = !ca ? "new" : ca->holds ? "held" : "failed";
        if (cb->holds)
            strbuf_printf(out, "claim: %s: %s, now holds\n", cb->text, was);
        else
            strbuf_printf(out, "claim: %s: %s, now fails: %s\n", cb->text, was, cb->detail);
    }
}

bool compare_traces(const Trace *a, const Trace *b, const char *a_name, const char *b_name, int digits,
                    StrBuf *out) {
    strbuf_printf(out, "--- %s\n+++ %s\n", a_name, b_name);
    size_t differ = 0, both = 0, only = 0;
    // In the edited lesson's order: givens first, as the student wrote them.
    for (size_t i = 0; i < b->n_stages; i++) {
        const TraceStage *sb = &b->stages[i];
        const TraceStage *sa = find_stage(a, sb->name);
        if (!sa) {
            only++;
            continue;
        }
        both++;
        differ += !compare_stage(out, sa, sb, digits);
    }
    for (size_t i = 0; i < a->n_stages; i++)
        only += !find_stage(b, a->stages[i].name);
    list_only_in(out, a, b, a_name);
    list_only_in(out, b, a, b_name);
    changed_claims(out, a, b);
    if (differ == 0 && only == 0) {
        strbuf_printf(out, "The same trace: all %zu stages have the same values.\n", both);
        return true;
    }
    strbuf_printf(out, "%zu of the %zu stages in both lessons differ", differ, both);
    if (only)
        strbuf_printf(out, "; %zu stage%s in only one of them", only, only == 1 ? " is" : "s are");
    strbuf_puts(out, ".\n");
    return false;
}
