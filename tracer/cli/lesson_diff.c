// lesson_diff: what an edit changed: the lesson's keys, its training, its claims, its stages.
#include "lesson_diff.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "format.h"
#include "render_train.h"
#include "text_diff.h"
#include "textwrap.h"
#include "yamldiff.h"

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

// s in colour (then back to plain), or s alone when colour is "".
static void coloured(StrBuf *out, const char *colour, const char *s, const TextDiffStyle *st) {
    strbuf_printf(out, "%s%s%s", colour, s, colour[0] ? st->reset : "");
}

// ---------------------------------------------------------------- the report

// What every part of the report shares: where it writes, the line it is making, the width.
typedef struct Report {
    StrBuf *out;
    StrBuf line;  // a line being made, wrapped into out by emit
    size_t width;
    int digits;
    TextDiffStyle st;
} Report;

// The line made so far, wrapped to the width: its first line from column indent, the rest from
// hang.
static void emit(Report *r, size_t indent, size_t hang) {
    textwrap_line(r->out, strbuf_str(&r->line), r->line.len, indent, hang, r->width);
    r->out->failed = r->out->failed || r->line.failed;
    strbuf_clear(&r->line);
}

// ---------------------------------------------------------------- the lesson's keys

static void key_change(Report *r, const YamlChange *c) {
    const TextDiffStyle *st = &r->st;
    strbuf_printf(&r->line, "%s: ", c->path);
    if (c->kind == YAML_ADDED) {
        strbuf_puts(&r->line, "added");
        if (c->after)
            strbuf_printf(&r->line, ": %s%s%s", st->after, c->after, st->after[0] ? st->reset : "");
    } else if (c->kind == YAML_REMOVED) {
        strbuf_puts(&r->line, "removed");
        if (c->before)
            strbuf_printf(&r->line, " (was %s%s%s)", st->before, c->before, st->before[0] ? st->reset : "");
    } else if (c->before && c->after) {
        coloured(&r->line, st->before, c->before, st);
        strbuf_puts(&r->line, " -> ");
        coloured(&r->line, st->after, c->after, st);
    } else {
        strbuf_puts(&r->line, "changed");
    }
    emit(r, 2, 6);
}

// What the edit changed in the lesson's YAML, key by key, first: the cause of all that follows.
static void changed_keys(Report *r, const Node *a, const Node *b) {
    if (!a || !b)
        return;
    YamlDiff *d = yamldiff_create(a, b);
    if (!d) {
        r->out->failed = true;
        return;
    }
    if (d->n) {
        strbuf_puts(r->out, "Changed in the lesson:\n");
        for (size_t k = 0; k < d->n && k < LESSON_DIFF_KEYS_SHOWN; k++)
            key_change(r, &d->changes[k]);
        if (d->n > LESSON_DIFF_KEYS_SHOWN)
            strbuf_printf(r->out, "  and %zu more\n", d->n - LESSON_DIFF_KEYS_SHOWN);
        strbuf_putc(r->out, '\n');
    }
    yamldiff_destroy(d);
}

// ---------------------------------------------------------------- training

static bool same_losses(const TraceTraining *a, const TraceTraining *b) {
    if (a->steps_done != b->steps_done || !a->validation != !b->validation)
        return false;
    for (size_t s = 0; s < a->steps_done; s++)
        if (!same_value(a->losses[s], b->losses[s]))
            return false;
    return !a->validation || same_value(a->validation->after, b->validation->after);
}

// One side's curve under its title, on the scale lo to hi, in `width` columns.
static void curve(const Report *r, const TraceTraining *t, double lo, double hi, const char *title,
                  const char *colour, size_t width, StrBuf *block) {
    coloured(block, colour, title, &r->st);
    strbuf_putc(block, '\n');
    if (t && t->steps_done)
        render_train_chart(t->losses, t->steps_done, lo, hi, r->digits, 0, width, block);
    else
        strbuf_puts(block, t ? "no step was taken\n" : "this lesson does not train\n");
}

// The two loss curves on one scale, so that their heights compare, side by side when each gets
// LESSON_DIFF_CURVE_COLUMNS columns, else one above the other.
static void curves(Report *r, const TraceTraining *ta, const TraceTraining *tb) {
    const TraceTraining *t[2] = {ta, tb};
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < 2; k++)
        for (size_t s = 0; t[k] && s < t[k]->steps_done; s++) {
            lo = fmin(lo, t[k]->losses[s]);
            hi = fmax(hi, t[k]->losses[s]);
        }
    char top[FORMAT_NUMBER_CAP] = "", bottom[FORMAT_NUMBER_CAP] = "";
    if (lo <= hi) {
        format_number(hi, r->digits, top, sizeof(top));
        format_number(lo, r->digits, bottom, sizeof(bottom));
    }
    size_t label = strlen(top) > strlen(bottom) ? strlen(top) : strlen(bottom);
    size_t half = r->width > 2 + TEXTWRAP_GAP ? (r->width - 2 - TEXTWRAP_GAP) / 2 : 0;
    bool beside = half >= label + 3 + LESSON_DIFF_CURVE_COLUMNS;
    StrBuf blocks[2];
    for (size_t k = 0; k < 2; k++) {
        strbuf_init(&blocks[k]);
        curve(r, t[k], lo, hi, k ? "after" : "before", k ? r->st.after : r->st.before,
              beside ? half : r->width - 2, &blocks[k]);
        r->out->failed = r->out->failed || blocks[k].failed;
    }
    if (beside) {
        textwrap_side_by_side(r->out, blocks, 2, 2);
    } else {
        textwrap_indent(r->out, strbuf_str(&blocks[0]), 2);
        textwrap_indent(r->out, strbuf_str(&blocks[1]), 2);
    }
    strbuf_finish(&blocks[0]);
    strbuf_finish(&blocks[1]);
}

// The last loss of each side: "last loss: 0.0912 -> 1.7169 (step 799)".
static void last_losses(Report *r, const TraceTraining *ta, const TraceTraining *tb) {
    const TraceTraining *t[2] = {ta, tb};
    char num[2][FORMAT_NUMBER_CAP];
    for (size_t k = 0; k < 2; k++) {
        if (t[k] && t[k]->steps_done)
            format_number(t[k]->losses[t[k]->steps_done - 1], r->digits, num[k], sizeof(num[k]));
        else
            snprintf(num[k], sizeof(num[k]), "%s", t[k] ? "none" : "no training");
    }
    bool same_step = ta && tb && ta->steps_done == tb->steps_done && ta->steps_done;
    strbuf_puts(&r->line, "last loss: ");
    coloured(&r->line, r->st.before, num[0], &r->st);
    if (!same_step && ta && ta->steps_done)
        strbuf_printf(&r->line, " (step %zu)", ta->steps_done - 1);
    strbuf_puts(&r->line, " -> ");
    coloured(&r->line, r->st.after, num[1], &r->st);
    if (tb && tb->steps_done)
        strbuf_printf(&r->line, " (step %zu)", tb->steps_done - 1);
    emit(r, 2, 4);
    if ((ta && ta->validation) || (tb && tb->validation)) {
        // "validation after training: 2.4002 -> none"
        strbuf_puts(&r->line, "validation after training: ");
        for (size_t k = 0; k < 2; k++) {
            const TraceValidation *v = t[k] ? t[k]->validation : NULL;
            if (v && t[k]->steps_done)
                format_number(v->after, r->digits, num[k], sizeof(num[k]));
            else
                snprintf(num[k], sizeof(num[k]), "none");
            strbuf_puts(&r->line, k ? " -> " : "");
            coloured(&r->line, k ? r->st.after : r->st.before, num[k], &r->st);
        }
        emit(r, 2, 4);
    }
    for (size_t k = 0; k < 2; k++)
        if (t[k] && t[k]->stopped) {
            strbuf_printf(&r->line, "%s: %s", k ? "after" : "before", t[k]->stopped);
            emit(r, 2, 4);
        }
}

// What training did on each side, when either lesson trains.
static void training(Report *r, const Trace *a, const Trace *b) {
    const TraceTraining *ta = a->training, *tb = b->training;
    if (!ta && !tb)
        return;
    if (ta && tb && same_losses(ta, tb)) {
        strbuf_printf(&r->line, "Training: the same loss at each of the %zu steps.", ta->steps_done);
        emit(r, 0, 2);
        strbuf_putc(r->out, '\n');
        return;
    }
    strbuf_puts(&r->line, "Training: the loss at every step, both curves on one scale");
    emit(r, 0, 2);
    curves(r, ta, tb);
    last_losses(r, ta, tb);
    strbuf_putc(r->out, '\n');
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

// Whether row r of a and b differ (or only one has it, or their shapes differ).
static bool row_changed(const Tensor *a, const Tensor *b, size_t r) {
    bool changed = r >= rows_of(a) || r >= rows_of(b) || a->shape.rank != b->shape.rank || cols_of(a) != cols_of(b);
    for (size_t c = 0; !changed && c < cols_of(a); c++)
        changed = cell_changed(a, b, r, c);
    return changed;
}

// The widest row of t, in columns.
static size_t widest_row(const Tensor *t, const Tensor *other, int digits, const TextDiffStyle *st, StrBuf *out) {
    size_t width = 0;
    StrBuf probe;
    strbuf_init(&probe);
    for (size_t r = 0; r < rows_of(t); r++) {
        size_t w = row_text(&probe, t, other, r, digits, "", st);
        width = w > width ? w : width;
    }
    out->failed = out->failed || probe.failed;  // the columns would not line up
    strbuf_finish(&probe);
    return width;
}

// "   <- changed" after a row that changed.
#define CHANGED_MARK "   <- changed"

// Before and after, row by row, side by side where both fit the width, else the rows before
// above the rows after; rows that changed are marked (the edit's, one above the other), and in colour drawn as git draws a
// changed line: before red, after green, the values that changed in reverse video. Nothing
// when even one row does not fit.
static void before_and_after(Report *r, const Tensor *a, const Tensor *b) {
    StrBuf *out = r->out;
    const TextDiffStyle *st = &r->st;
    size_t wa = widest_row(a, b, r->digits, st, out), wb = widest_row(b, a, r->digits, st, out);
    size_t mark = strlen(CHANGED_MARK), rows = rows_of(a) > rows_of(b) ? rows_of(a) : rows_of(b);
    if (6 + wa + 3 + wb + mark <= r->width) {
        strbuf_printf(out, "      %-*s   %s\n", (int)wa, "before", "after");
        for (size_t row = 0; row < rows; row++) {
            bool changed = row_changed(a, b, row);
            strbuf_puts(out, "      ");
            size_t w = row < rows_of(a) ? row_text(out, a, b, row, r->digits, changed ? st->before : "", st) : 0;
            strbuf_printf(out, "%*s   ", (int)(wa - w), "");
            if (row < rows_of(b))
                row_text(out, b, a, row, r->digits, changed ? st->after : "", st);
            strbuf_puts(out, changed ? CHANGED_MARK "\n" : "\n");
        }
        return;
    }
    size_t widest = wa > wb ? wa : wb;
    if (6 + 8 + widest + mark > r->width)
        return;
    const Tensor *side[2] = {a, b};
    for (size_t k = 0; k < 2; k++)
        for (size_t row = 0; row < rows_of(side[k]); row++) {
            bool changed = row_changed(a, b, row);
            strbuf_printf(out, "      %-8s", row ? "" : k ? "after" : "before");
            size_t w = row_text(out, side[k], side[1 - k], row, r->digits, changed ? (k ? st->after : st->before) : "", st);
            if (changed && k)  // the edit's rows say which changed
                strbuf_printf(out, "%*s" CHANGED_MARK, (int)(widest - w), "");
            strbuf_putc(out, '\n');
        }
}

// Whether a stage present in both is the same: its shape and every value.
static bool same_stage(const TraceStage *sa, const TraceStage *sb) {
    const Tensor *a = sa->value, *b = sb->value;
    if (!shape_equal(&a->shape, &b->shape) || !a->data != !b->data)
        return false;
    for (size_t k = 0; a->data && k < a->size; k++)
        if (!same_value(a->data[k], b->data[k]))
            return false;
    return true;
}

// Report one stage present in both; false when it differs.
static bool compare_stage(Report *r, const TraceStage *sa, const TraceStage *sb) {
    const TextDiffStyle *st = &r->st;
    StrBuf *line = &r->line;
    const Tensor *a = sa->value, *b = sb->value;
    char shape_a[128], shape_b[128];
    shape_format(&a->shape, shape_a, sizeof(shape_a));
    shape_format(&b->shape, shape_b, sizeof(shape_b));
    if (!shape_equal(&a->shape, &b->shape)) {
        stage_heading(line, sb, st);
        strbuf_puts(line, ": the shape changed from ");
        coloured(line, st->before, shape_a, st);
        strbuf_puts(line, " to ");
        coloured(line, st->after, shape_b, st);
        emit(r, 0, 4);
        if (small(a) && small(b))
            before_and_after(r, a, b);
        return false;
    }
    if (!a->data || !b->data) {
        if (!a->data && !b->data)
            return true;  // shape-only in both, the same shape
        stage_heading(line, sb, st);
        strbuf_printf(line, ": %s", a->data ? "now shape-only (no values)" : "now has values (was shape-only)");
        emit(r, 0, 4);
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
    stage_heading(line, sb, st);
    strbuf_printf(line, ": %zu of %zu value%s changed;", changed, a->size, a->size == 1 ? "" : "s");
    StrBuf largest_change;
    strbuf_init(&largest_change);
    strbuf_puts(&largest_change, "the largest change is ");
    if (a->shape.rank) {
        strbuf_puts(&largest_change, "at ");
        position(&largest_change, &a->shape, worst);
        strbuf_puts(&largest_change, ": ");
    }
    number(&largest_change, a, a->data[worst], r->digits, st->before, st);
    strbuf_puts(&largest_change, " -> ");
    number(&largest_change, b, b->data[worst], r->digits, st->after, st);
    if (a->data[worst] == 0 && b->data[worst] == 0)  // printed alike: say which is which
        strbuf_printf(&largest_change, " (%s0.0 -> %s0.0: a zero changed sign)", signbit(a->data[worst]) ? "-" : "",
                      signbit(b->data[worst]) ? "-" : "");
    // On one line when it fits, else the largest change on a line of its own.
    size_t whole = format_display_width(strbuf_str(line), line->len) + 1 +
                   format_display_width(strbuf_str(&largest_change), largest_change.len);
    if (whole > r->width)
        emit(r, 0, 4);
    else
        strbuf_putc(line, ' ');
    strbuf_append(line, strbuf_str(&largest_change), largest_change.len);
    emit(r, whole > r->width ? 4 : 0, whole > r->width ? 6 : 4);
    r->out->failed = r->out->failed || largest_change.failed;
    strbuf_finish(&largest_change);
    if (a->shape.rank && small(a))
        before_and_after(r, a, b);
    return false;
}

// The stages only t has, in the colour of its side (removed or added lines).
static void list_only_in(Report *r, const Trace *t, const NameIndex *other, const char *name, const char *colour) {
    bool any = false;
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *s = &t->stages[i];
        if (find_stage(other, s->name))
            continue;
        strbuf_puts(&r->line, any ? ", " : colour);
        if (!any)
            strbuf_printf(&r->line, "Only in %s: ", name);
        stage_title(&r->line, s);
        any = true;
    }
    if (any) {
        strbuf_puts(&r->line, colour[0] ? r->st.reset : "");
        emit(r, 0, 4);
    }
}

// The claims whose verdict the edit turned (held, now fails; or the other way), and those only
// the edited lesson states: whether the lesson's own claims survive is what a student asks first.
// The verdict before is in the colour of what was, the one now in the colour of what is.
static void changed_claims(Report *r, const Trace *a, const Trace *b, const NameIndex *a_claims,
                           const NameIndex *b_claims) {
    const TextDiffStyle *st = &r->st;
    StrBuf *line = &r->line;
    for (size_t i = 0; i < b->n_claims; i++) {
        const TraceClaim *cb = &b->claims[i];
        size_t k = name_index_find(a_claims, cb->text);
        const TraceClaim *ca = k == SIZE_MAX ? NULL : &a->claims[k];
        if (ca && ca->holds == cb->holds)
            continue;
        strbuf_printf(line, "claim: %s: ", cb->text);
        if (ca)
            coloured(line, st->before, ca->holds ? "held" : "failed", st);
        else
            strbuf_puts(line, "new");
        strbuf_printf(line, ", %s%s", st->after, cb->holds ? "now holds" : "now fails: ");
        strbuf_printf(line, "%s%s", cb->holds ? "" : cb->detail, st->after[0] ? st->reset : "");
        emit(r, 0, 4);
    }
    // and those the edit took away
    for (size_t k = 0; k < a->n_claims; k++) {
        if (name_index_find(b_claims, a->claims[k].text) != SIZE_MAX)
            continue;
        strbuf_printf(line, "claim: %s: ", a->claims[k].text);
        coloured(line, st->before, a->claims[k].holds ? "held" : "failed", st);
        strbuf_puts(line, ", no longer claimed");
        emit(r, 0, 4);
    }
}

// A given that either lesson trains.
static bool trained(const Trace *t, const char *name) {
    for (size_t k = 0; t->training && k < t->training->n_trained; k++)
        if (strcmp(t->training->trained[k].name, name) == 0)
            return true;
    return false;
}

// The trained givens of lessons that train, in one line: every value of every weight moves
// when anything of the training changes, and 9 lines of "512 of 512 values changed" say less
// than "all 9 trained weights differ". Returns how many differ; *both counts those compared.
static size_t trained_weights(Report *r, const Trace *a, const Trace *b, const NameIndex *a_stages, size_t *both) {
    StrBuf differ, same;
    strbuf_init(&differ);
    strbuf_init(&same);
    size_t n = 0, n_differ = 0;
    for (size_t i = 0; i < b->n_stages; i++) {
        const TraceStage *sb = &b->stages[i], *sa = find_stage(a_stages, sb->name);
        if (!sa || sb->kind != STAGE_GIVEN || !(trained(a, sb->name) || trained(b, sb->name)))
            continue;
        n++;
        bool d = !same_stage(sa, sb);
        n_differ += d;
        StrBuf *list = d ? &differ : &same;
        strbuf_printf(list, "%s%s", list->len ? ", " : "", sb->name);
    }
    *both += n;
    if (n == 0) {
        // no trained given in both lessons
    } else if (n_differ == n && n == 1) {
        strbuf_printf(&r->line, "Trained weights: %s differs", strbuf_str(&differ));
    } else if (n_differ == n) {
        strbuf_printf(&r->line, "Trained weights: %s%zu differ (%s)", n == 2 ? "both " : "all ", n,
                      strbuf_str(&differ));
    } else if (n_differ == 0) {
        strbuf_printf(&r->line, "Trained weights: the same (%s)", strbuf_str(&same));
    } else {
        strbuf_printf(&r->line, "Trained weights: %zu of the %zu differ (%s); the same: %s", n_differ, n,
                      strbuf_str(&differ), strbuf_str(&same));
    }
    if (n)
        emit(r, 0, 4);
    r->out->failed = r->out->failed || differ.failed || same.failed;
    strbuf_finish(&differ);
    strbuf_finish(&same);
    return n_differ;
}

// The diff of a and b, their stages and claims indexed by name.
static bool diff_indexed(Report *r, const LessonDiffSide sides[2], const NameIndex stages[2],
                         const NameIndex claims[2]) {
    const Trace *a = sides[0].trace, *b = sides[1].trace;
    // The two names, bold, as a diff opens; a path wider than the width is cut where it ends.
    for (size_t k = 0; k < 2; k++) {
        strbuf_printf(&r->line, "%s%s %s%s", r->st.names, k ? "+++" : "---", sides[k].name, r->st.reset);
        emit(r, 0, 4);
    }
    changed_keys(r, sides[0].yaml, sides[1].yaml);
    training(r, a, b);
    size_t before_claims = r->out->len;
    changed_claims(r, a, b, &claims[0], &claims[1]);
    if (r->out->len != before_claims)
        strbuf_putc(r->out, '\n');
    // A lesson that trains: its trained givens in one line, its intermediate stages counted.
    bool trains = a->training || b->training;
    size_t both = 0, only = 0, unlisted = 0;
    size_t differ = trains ? trained_weights(r, a, b, &stages[0], &both) : 0;
    // In the edited lesson's order: givens first, as the student wrote them.
    for (size_t i = 0; i < b->n_stages; i++) {
        const TraceStage *sb = &b->stages[i];
        const TraceStage *sa = find_stage(&stages[0], sb->name);
        if (!sa) {
            only++;
            continue;
        }
        if (trains && sb->kind == STAGE_GIVEN && (trained(a, sb->name) || trained(b, sb->name)))
            continue;  // counted above
        both++;
        if (trains && sb->kind == STAGE_INTERMEDIATE) {
            bool d = !same_stage(sa, sb);
            differ += d;
            unlisted += d;
            continue;
        }
        differ += !compare_stage(r, sa, sb);
    }
    for (size_t i = 0; i < a->n_stages; i++)
        only += !find_stage(&stages[1], a->stages[i].name);
    list_only_in(r, a, &stages[1], sides[0].name, r->st.before);
    list_only_in(r, b, &stages[0], sides[1].name, r->st.after);
    if (differ == 0 && only == 0) {
        strbuf_printf(&r->line, "The same trace: all %zu stages have the same values.", both);
        emit(r, 0, 2);
        return true;
    }
    strbuf_printf(&r->line, "%zu of the %zu stages in both lessons differ", differ, both);
    if (only)
        strbuf_printf(&r->line, "; %zu stage%s in only one of them", only, only == 1 ? " is" : "s are");
    if (unlisted)
        strbuf_printf(&r->line, "; %zu of them intermediate, not listed", unlisted);
    strbuf_putc(&r->line, '.');
    emit(r, 0, 2);
    return false;
}

bool lesson_diff_traces(const LessonDiffSide sides[2], int digits, size_t width, bool colour, StrBuf *out) {
    Report r = {.out = out, .width = width, .digits = digits, .st = text_diff_style(colour)};
    strbuf_init(&r.line);
    const Trace *a = sides[0].trace, *b = sides[1].trace;
    NameIndex stages[2] = {0}, claims[2] = {0};
    bool indexed = name_index_init(&stages[0], a->stages, a->n_stages, stage_name) &&
                   name_index_init(&stages[1], b->stages, b->n_stages, stage_name) &&
                   name_index_init(&claims[0], a->claims, a->n_claims, claim_text) &&
                   name_index_init(&claims[1], b->claims, b->n_claims, claim_text);
    bool same = indexed && diff_indexed(&r, sides, stages, claims);
    out->failed |= !indexed;  // out of memory, as for the text itself
    for (size_t k = 0; k < 2; k++) {
        util_free(stages[k].slots);
        util_free(claims[k].slots);
    }
    strbuf_finish(&r.line);
    return same;
}
