// lesson_diff: two traces side by side, stage by stage.
#include "lesson_diff.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "text_diff.h"
#include "format.h"

// The same bits, save for nan's payload: 0.0 and -0.0 differ (1 / x tells them apart).
static bool same_value(double a, double b) {
    return (a == b && signbit(a) == signbit(b)) || (isnan(a) && isnan(b));
}

// How far apart two values are: inf when only one is nan or when infinities differ, and the
// least change there is when a zero changed sign.
static double change_size(double a, double b) {
    if (same_value(a, b))
        return 0;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b))
        return INFINITY;
    return a == b ? DBL_TRUE_MIN : fabs(a - b);
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

// A stage's title opening the lines about it, in the colour of a hunk's header: it says where
// the lines under it are.
static void stage_heading(StrBuf *out, const TraceStage *s, const TextDiffStyle *st) {
    strbuf_puts(out, st->hunk);
    stage_title(out, s);
    strbuf_puts(out, st->reset);
}

// s in colour (then back to plain), or s alone when colour is "".
static void coloured(StrBuf *out, const char *colour, const char *s, const TextDiffStyle *st) {
    strbuf_printf(out, "%s%s%s", colour, s, colour[0] ? st->reset : "");
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

// One number in the colour of its side (before or after).
static void number(StrBuf *out, const Tensor *t, double v, int digits, const char *colour, const TextDiffStyle *st) {
    char buf[64];
    if (t->is_count)
        format_count(v, buf, sizeof(buf));
    else
        format_number(v, digits, buf, sizeof(buf));
    coloured(out, colour, buf, st);
}

static bool small(const Tensor *t) {
    const Shape *s = &t->shape;
    size_t rows = s->rank >= 2 ? s->dim[0] : 1, cols = s->rank ? s->dim[s->rank - 1] : 1;
    return t->data && s->rank <= 2 && rows <= LESSON_DIFF_SIDE_BY_SIDE_ROWS && cols <= LESSON_DIFF_SIDE_BY_SIDE_COLS;
}

static size_t rows_of(const Tensor *t) {
    return t->shape.rank >= 2 ? t->shape.dim[0] : 1;
}

static size_t cols_of(const Tensor *t) {
    return t->shape.rank ? t->shape.dim[t->shape.rank - 1] : 1;
}

// Whether t's value at (row, col) differs from other's at the same place (or other has none).
static bool cell_changed(const Tensor *t, const Tensor *other, size_t row, size_t col) {
    if (row >= rows_of(other) || col >= cols_of(other))
        return true;
    return !same_value(t->data[row * cols_of(t) + col], other->data[row * cols_of(other) + col]);
}

// One row of a small tensor as "[ 0.5000  0.2000 ]"; with a colour (the row changed), in that
// colour with the values that differ from other's marked. Returns its width in columns.
static size_t row_text(StrBuf *out, const Tensor *t, const Tensor *other, size_t row, int digits, const char *colour,
                       const TextDiffStyle *st) {
    size_t cols = cols_of(t), width = 0;
    FormatStyle style = format_style(t->data, t->size, digits, t->is_count);
    // Every column as wide as the tensor's widest value: 0 and 1 stay narrow, 0.5000 lines up.
    size_t field = 0;
    for (size_t i = 0; i < t->size; i++) {
        char buf[FORMAT_NUMBER_CAP];
        format_with(&style, t->data[i], buf, sizeof(buf));
        field = strlen(buf) > field ? strlen(buf) : field;
    }
    strbuf_printf(out, "%s[", colour);
    width++;
    for (size_t c = 0; c < cols; c++) {
        char buf[FORMAT_NUMBER_CAP];
        format_with(&style, t->data[row * cols + c], buf, sizeof(buf));
        size_t len = strlen(buf);
        bool mark = colour[0] && cell_changed(t, other, row, c);
        // The padding stays outside the mark: only the number is highlighted.
        strbuf_printf(out, "  %*s%s%s%s", (int)(field - len), "", mark ? st->changed : "", buf,
                      mark ? st->changed_end : "");
        width += 2 + field;
    }
    strbuf_printf(out, " ]%s", colour[0] ? st->reset : "");
    return width + 2;
}

// Before and after, row by row; rows that changed are marked, and in colour drawn as git draws
// a changed line: before red, after green, the values that changed in reverse video.
static void side_by_side(StrBuf *out, const Tensor *a, const Tensor *b, int digits, const TextDiffStyle *st) {
    size_t rows_a = rows_of(a), rows_b = rows_of(b);
    size_t rows = rows_a > rows_b ? rows_a : rows_b;
    size_t width = 0;
    StrBuf probe;
    strbuf_init(&probe);
    for (size_t r = 0; r < rows_a; r++) {
        size_t w = row_text(&probe, a, b, r, digits, "", st);
        if (w > width)
            width = w;
    }
    out->failed = out->failed || probe.failed;  // the columns would not line up
    strbuf_finish(&probe);
    strbuf_printf(out, "      %-*s   %s\n", (int)width, "before", "after");
    for (size_t r = 0; r < rows; r++) {
        bool changed = r >= rows_a || r >= rows_b || a->shape.rank != b->shape.rank || cols_of(a) != cols_of(b);
        for (size_t c = 0; !changed && c < cols_of(a); c++)
            changed = cell_changed(a, b, r, c);
        strbuf_puts(out, "      ");
        size_t w = r < rows_a ? row_text(out, a, b, r, digits, changed ? st->before : "", st) : 0;
        strbuf_printf(out, "%*s   ", (int)(width - w), "");
        if (r < rows_b)
            row_text(out, b, a, r, digits, changed ? st->after : "", st);
        strbuf_puts(out, changed ? "   <- changed\n" : "\n");
    }
}

// Report one stage present in both; false when it differs.
static bool compare_stage(StrBuf *out, const TraceStage *sa, const TraceStage *sb, int digits,
                          const TextDiffStyle *st) {
    const Tensor *a = sa->value, *b = sb->value;
    char shape_a[128], shape_b[128];
    shape_format(&a->shape, shape_a, sizeof(shape_a));
    shape_format(&b->shape, shape_b, sizeof(shape_b));
    if (!shape_equal(&a->shape, &b->shape)) {
        stage_heading(out, sb, st);
        strbuf_puts(out, ": the shape changed from ");
        coloured(out, st->before, shape_a, st);
        strbuf_puts(out, " to ");
        coloured(out, st->after, shape_b, st);
        strbuf_putc(out, '\n');
        if (small(a) && small(b))
            side_by_side(out, a, b, digits, st);
        return false;
    }
    if (!a->data || !b->data) {
        if (!a->data && !b->data)
            return true;  // shape-only in both, the same shape
        stage_heading(out, sb, st);
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
    stage_heading(out, sb, st);
    strbuf_printf(out, ": %zu of %zu value%s changed; the largest change is ", changed, a->size,
                  a->size == 1 ? "" : "s");
    if (a->shape.rank) {
        strbuf_puts(out, "at ");
        position(out, &a->shape, worst);
        strbuf_puts(out, ": ");
    }
    number(out, a, a->data[worst], digits, st->before, st);
    strbuf_puts(out, " -> ");
    number(out, b, b->data[worst], digits, st->after, st);
    if (a->data[worst] == 0 && b->data[worst] == 0)  // printed alike: say which is which
        strbuf_printf(out, " (%s0.0 -> %s0.0: a zero changed sign)", signbit(a->data[worst]) ? "-" : "",
                      signbit(b->data[worst]) ? "-" : "");
    strbuf_putc(out, '\n');
    if (a->shape.rank && small(a))
        side_by_side(out, a, b, digits, st);
    return false;
}

// The stages only t has, on one line in the colour of its side (removed or added lines).
static void list_only_in(StrBuf *out, const Trace *t, const Trace *other, const char *name, const char *colour,
                         const TextDiffStyle *st) {
    bool any = false;
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *s = &t->stages[i];
        if (find_stage(other, s->name))
            continue;
        strbuf_puts(out, any ? ", " : colour);
        strbuf_puts(out, any ? "" : "Only in ");
        if (!any)
            strbuf_printf(out, "%s: ", name);
        stage_title(out, s);
        any = true;
    }
    if (any)
        strbuf_printf(out, "%s\n", colour[0] ? st->reset : "");
}

// The claims whose verdict the edit turned (held, now fails; or the other way), and those only
// the edited lesson states: whether the lesson's own claims survive is what a student asks first.
// The verdict before is in the colour of what was, the one now in the colour of what is.
static void changed_claims(StrBuf *out, const Trace *a, const Trace *b, const TextDiffStyle *st) {
    for (size_t i = 0; i < b->n_claims; i++) {
        const TraceClaim *cb = &b->claims[i], *ca = NULL;
        for (size_t k = 0; k < a->n_claims && !ca; k++)
            if (strcmp(a->claims[k].text, cb->text) == 0)
                ca = &a->claims[k];
        if (ca && ca->holds == cb->holds)
            continue;
        strbuf_printf(out, "claim: %s: ", cb->text);
        if (ca)
            coloured(out, st->before, ca->holds ? "held" : "failed", st);
        else
            strbuf_puts(out, "new");
        strbuf_printf(out, ", %s%s", st->after, cb->holds ? "now holds" : "now fails: ");
        strbuf_printf(out, "%s%s\n", cb->holds ? "" : cb->detail, st->after[0] ? st->reset : "");
    }
    // and those the edit took away
    for (size_t k = 0; k < a->n_claims; k++) {
        bool kept = false;
        for (size_t i = 0; i < b->n_claims && !kept; i++)
            kept = strcmp(a->claims[k].text, b->claims[i].text) == 0;
        if (kept)
            continue;
        strbuf_printf(out, "claim: %s: ", a->claims[k].text);
        coloured(out, st->before, a->claims[k].holds ? "held" : "failed", st);
        strbuf_puts(out, ", no longer claimed\n");
    }
}

bool lesson_diff_traces(const Trace *a, const Trace *b, const char *a_name, const char *b_name, int digits, bool colour,
                    StrBuf *out) {
    const TextDiffStyle st = text_diff_style(colour);
    text_diff_names(out, a_name, b_name, colour);
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
        differ += !compare_stage(out, sa, sb, digits, &st);
    }
    for (size_t i = 0; i < a->n_stages; i++)
        only += !find_stage(b, a->stages[i].name);
    list_only_in(out, a, b, a_name, st.before, &st);
    list_only_in(out, b, a, b_name, st.after, &st);
    changed_claims(out, a, b, &st);
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
