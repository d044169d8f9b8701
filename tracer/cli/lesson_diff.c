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

// ---------------------------------------------------------------- names by hash

// A trace's stages (or claims) by name, in open addressing: slot k holds i + 1 for item i, 0
// when empty. Looked up one by one, the diff of two lessons with 4,000 gradient stages each
// made 16 million comparisons, and one of 100,000 would make 10^10. Where two items share a
// name, the first is found, as the trace lists them.
typedef struct NameIndex {
    const void *items;
    const char *(*name)(const void *items, size_t i);
    size_t *slots;
    size_t cap;  // a power of two, at least twice the items
} NameIndex;

static const char *stage_name(const void *stages, size_t i) {
    return ((const TraceStage *)stages)[i].name;
}

static const char *claim_text(const void *claims, size_t i) {
    return ((const TraceClaim *)claims)[i].text;
}

// The slot of name: where it is, or the empty slot where it would go.
static size_t name_slot(const NameIndex *ix, const char *name) {
    size_t k = (size_t)util_hash_string(name) & (ix->cap - 1);
    while (ix->slots[k] && strcmp(ix->name(ix->items, ix->slots[k] - 1), name) != 0)
        k = (k + 1) & (ix->cap - 1);
    return k;
}

// Index n items; false when memory runs out.
static bool name_index_init(NameIndex *ix, const void *items, size_t n, const char *(*name)(const void *, size_t)) {
    *ix = (NameIndex){.items = items, .name = name, .cap = 16};
    while (ix->cap < 2 * (n + 1))  // n items are in memory: no overflow
        ix->cap *= 2;
    if (!(ix->slots = util_calloc(ix->cap, sizeof(size_t))))
        return false;
    for (size_t i = 0; i < n; i++) {
        size_t k = name_slot(ix, name(items, i));
        if (!ix->slots[k])
            ix->slots[k] = i + 1;
    }
    return true;
}

// The index of the item called name, or SIZE_MAX.
static size_t name_index_find(const NameIndex *ix, const char *name) {
    size_t slot = ix->slots[name_slot(ix, name)];
    return slot ? slot - 1 : SIZE_MAX;
}

static const TraceStage *find_stage(const NameIndex *ix, const char *name) {
    size_t i = name_index_find(ix, name);
    return i == SIZE_MAX ? NULL : &((const TraceStage *)ix->items)[i];
}

// ---------------------------------------------------------------- stages

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
static void list_only_in(StrBuf *out, const Trace *t, const NameIndex *other, const char *name, const char *colour,
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
static void changed_claims(StrBuf *out, const Trace *a, const Trace *b, const NameIndex *a_claims,
                           const NameIndex *b_claims, const TextDiffStyle *st) {
    for (size_t i = 0; i < b->n_claims; i++) {
        const TraceClaim *cb = &b->claims[i];
        size_t k = name_index_find(a_claims, cb->text);
        const TraceClaim *ca = k == SIZE_MAX ? NULL : &a->claims[k];
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
        if (name_index_find(b_claims, a->claims[k].text) != SIZE_MAX)
            continue;
        strbuf_printf(out, "claim: %s: ", a->claims[k].text);
        coloured(out, st->before, a->claims[k].holds ? "held" : "failed", st);
        strbuf_puts(out, ", no longer claimed\n");
    }
}

// The diff of a and b, their stages and claims indexed by name.
static bool diff_indexed(const Trace *a, const Trace *b, const NameIndex stages[2], const NameIndex claims[2],
                         const char *a_name, const char *b_name, int digits, bool colour, const TextDiffStyle *style,
                         StrBuf *out) {
    const TextDiffStyle st = *style;
    text_diff_names(out, a_name, b_name, colour);
    size_t differ = 0, both = 0, only = 0;
    // In the edited lesson's order: givens first, as the student wrote them.
    for (size_t i = 0; i < b->n_stages; i++) {
        const TraceStage *sb = &b->stages[i];
        const TraceStage *sa = find_stage(&stages[0], sb->name);
        if (!sa) {
            only++;
            continue;
        }
        both++;
        differ += !compare_stage(out, sa, sb, digits, &st);
    }
    for (size_t i = 0; i < a->n_stages; i++)
        only += !find_stage(&stages[1], a->stages[i].name);
    list_only_in(out, a, &stages[1], a_name, st.before, &st);
    list_only_in(out, b, &stages[0], b_name, st.after, &st);
    changed_claims(out, a, b, &claims[0], &claims[1], &st);
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

bool lesson_diff_traces(const Trace *a, const Trace *b, const char *a_name, const char *b_name, int digits, bool colour,
                    StrBuf *out) {
    const TextDiffStyle st = text_diff_style(colour);
    NameIndex stages[2] = {0}, claims[2] = {0};
    bool indexed = name_index_init(&stages[0], a->stages, a->n_stages, stage_name) &&
                   name_index_init(&stages[1], b->stages, b->n_stages, stage_name) &&
                   name_index_init(&claims[0], a->claims, a->n_claims, claim_text) &&
                   name_index_init(&claims[1], b->claims, b->n_claims, claim_text);
    bool same = indexed && diff_indexed(a, b, stages, claims, a_name, b_name, digits, colour, &st, out);
    out->failed |= !indexed;  // out of memory, as for the text itself
    for (size_t k = 0; k < 2; k++) {
        util_free(stages[k].slots);
        util_free(claims[k].slots);
    }
    return same;
}
