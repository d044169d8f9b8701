// stale_narration: numbers of fixed narration text that an edit of the givens changes.
#include "stale_narration.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

// ---------------------------------------------------------------- numbers of fixed text

// A number of the narration as typed: "0.62" is 0.62 to 2 decimals, "40%" 0.40 to 2.
typedef struct Literal {
    const Node *node;     // the narration it stands in
    size_t offset, len;   // in node->text
    double value;
    int decimals;
    // Found stale: the stage and element it equals in the base trace, and what the edit made of
    // it (an error, reported once every edit is compared, in the order of the file).
    bool stale;
    size_t stage, element;
    char edit[320], became[160];
    size_t line, col;
} Literal;

typedef struct Literals {
    Literal *items;
    size_t n, cap;
} Literals;

static bool push_literal(Literals *l, Literal lit) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        Literal *items = cap <= SIZE_MAX / sizeof(Literal) ? util_realloc(l->items, cap * sizeof(Literal)) : NULL;
        if (!items)
            return false;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = lit;
    return true;
}

static bool is_word(char c) {
    return isalnum((unsigned char)c) || c == '_';
}

// The narration with what is not read blanked out, byte for byte so that offsets stay: its
// placeholders ({{ and }} too), words in double quotes, and paragraphs that work from the
// document's printed numbers.
static void blank_unread(char *s) {
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++) {
        if ((s[i] == '{' || s[i] == '}') && s[i + 1] == s[i]) {
            s[i] = s[i + 1] = ' ';
            i++;
        } else if (s[i] == '{') {
            for (; i < len && s[i] != '}'; i++)
                s[i] = ' ';
            if (i < len)
                s[i] = ' ';
        }
    }
    for (char *open = strchr(s, '"'); open;) {
        char *close = strchr(open + 1, '"');
        if (!close)
            break;
        memset(open + 1, ' ', (size_t)(close - open - 1));
        open = strchr(close + 1, '"');
    }
    for (char *p = s; *p;) {
        char *end = strstr(p, "\n\n");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char saved = p[n];
        p[n] = '\0';
        bool quotes = strstr(p, "printed numbers") != NULL;
        p[n] = saved;
        if (quotes)
            for (size_t i = 0; i < n; i++)
                p[i] = p[i] == '\n' ? '\n' : ' ';
        p += n + (end ? 2 : 0);
    }
}

// The number that starts at s[i] (a digit not after a word character or a point), as the
// pattern (\d{1,3}(,\d{3})+|\d+)(\.\d+)?%? not followed by a word character reads it; false
// when none does ("12abc").
static bool read_number(const char *s, size_t i, Literal *lit) {
    size_t d = i;
    while (isdigit((unsigned char)s[d]))
        d++;
    // Thousands written with commas: 50,257 (at most three digits before the first comma).
    size_t whole_end = d;
    if (d - i <= 3)
        while (s[whole_end] == ',' && isdigit((unsigned char)s[whole_end + 1]) &&
               isdigit((unsigned char)s[whole_end + 2]) && isdigit((unsigned char)s[whole_end + 3]) &&
               !isdigit((unsigned char)s[whole_end + 4]))
            whole_end += 4;
    // The longest reading first, then shorter ones, as the pattern backtracks.
    size_t ends[2] = {whole_end, d};
    for (size_t w = 0; w < (whole_end == d ? 1u : 2u); w++) {
        size_t at = ends[w], frac_end = at;
        if (s[at] == '.' && isdigit((unsigned char)s[at + 1]))
            for (frac_end = at + 1; isdigit((unsigned char)s[frac_end]);)
                frac_end++;
        size_t fracs[2] = {frac_end, at};
        for (size_t f = 0; f < (frac_end == at ? 1u : 2u); f++) {
            size_t end = fracs[f];
            bool percent = s[end] == '%';
            if (percent && is_word(s[end + 1]))
                percent = false;
            if (!percent && is_word(s[end]))
                continue;
            char digits[64];
            size_t n = 0;
            for (size_t k = i; k < end && n + 1 < sizeof(digits); k++)
                if (s[k] != ',')
                    digits[n++] = s[k];
            digits[n] = '\0';
            lit->value = strtod(digits, NULL);
            lit->decimals = end > at ? (int)(end - at - 1) : 0;
            if (percent) {
                lit->value /= 100;
                lit->decimals += 2;
                end++;
            }
            lit->offset = i;
            lit->len = end - i;
            return true;
        }
    }
    return false;
}

// The numbers of one narration that state a value.
static bool read_literals(const Node *node, Literals *out) {
    char *s = util_strdup(node->text);
    if (!s)
        return false;
    blank_unread(s);
    bool ok = true;
    for (size_t i = 0; s[i] && ok;) {
        if (!isdigit((unsigned char)s[i]) || (i > 0 && (is_word(s[i - 1]) || s[i - 1] == '.'))) {
            i++;
            continue;
        }
        Literal lit = {.node = node};
        if (!read_number(s, i, &lit)) {
            i++;
            continue;
        }
        i = lit.offset + lit.len;
        // A single digit states a value only after '='.
        if (lit.decimals == 0 && lit.value < 10) {
            size_t k = lit.offset;
            while (k > 0 && isspace((unsigned char)s[k - 1]))
                k--;
            if (k == 0 || s[k - 1] != '=')
                continue;
        }
        ok = push_literal(out, lit);
    }
    util_free(s);
    return ok;
}

// Every narration of the lesson, each node once (the steps of a block share theirs).
static bool lesson_literals(const Lesson *lesson, size_t n_steps, Literals *out) {
    size_t cap = 2 + lesson->n_givens + n_steps, n = 0;
    const Node **nodes = util_calloc(cap, sizeof(Node *));
    if (!nodes)
        return false;
    nodes[n++] = lesson->intro_node;
    nodes[n++] = lesson->outro_node;
    for (size_t i = 0; i < lesson->n_givens; i++)
        nodes[n++] = lesson->givens[i].about_node;
    for (size_t i = 0; i < n_steps; i++)
        nodes[n++] = lesson->steps[i].say_node;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        bool seen = !nodes[i];
        for (size_t j = 0; j < i && !seen; j++)
            seen = nodes[j] == nodes[i];
        if (!seen)
            ok = read_literals(nodes[i], out);
    }
    util_free(nodes);
    return ok;
}

// ---------------------------------------------------------------- edits of the lesson

typedef enum EditKind {
    EDIT_VALUES,  // every value of one given changed
    EDIT_ROW,     // one more row for every given a label list labels, and one more label
} EditKind;

typedef struct Edit {
    EditKind kind;
    size_t index;  // the given, or the label list
} Edit;

// A given whose values an edit may change: written out in the lesson, not a text's tokens.
static bool editable(const LessonGiven *g) {
    return g->init == GIVEN_VALUES && !g->text_node && g->values;
}

static bool grows_with(const LessonGiven *g, const LabelList *list) {
    return editable(g) && g->rows == list && g->shape.rank == 2;
}

// splitmix64: a number from [0, 1) for each call, the same on every machine.
static double next_uniform(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

// Written as a whole number ("6", "-2"), as sizes, counts and indices are: an edit keeps it whole.
static bool written_whole(const Node *node) {
    return node && node->text[0] && strspn(node->text, "+-0123456789") == strlen(node->text);
}

// Each value 5% to 15% larger, by a factor of its own, so that no edit is a mere rescaling
// (which LayerNorm or a softmax of a ratio would hide); a whole number to the next whole
// number at or above 10% more, so that it stays whole.
static void change_values(LessonGiven *g, size_t edit) {
    uint64_t state = STALE_SEED + edit;
    size_t n = 0;
    shape_size(&g->shape, &n);
    for (size_t k = 0; k < n; k++) {
        double u = next_uniform(&state);
        if (g->value_nodes && written_whole(g->value_nodes[k]))
            g->values[k] = ceil(g->values[k] * 1.1);
        else
            g->values[k] *= 1.05 + 0.1 * u;
    }
}

// One more row, 10% smaller than the last, for each given the list labels, and one more label.
static bool add_row(Lesson *lesson, LabelList *list) {
    for (size_t i = 0; i < lesson->n_givens; i++) {
        LessonGiven *g = &lesson->givens[i];
        if (!grows_with(g, list))
            continue;
        size_t rows = g->shape.dim[0], cols = g->shape.dim[1];
        double *values = arena_array(lesson->arena, (rows + 1) * cols, sizeof(double));
        const Node **nodes = arena_array(lesson->arena, (rows + 1) * cols, sizeof(Node *));
        if (!values || !nodes)
            return false;
        memcpy(values, g->values, rows * cols * sizeof(double));
        for (size_t c = 0; c < cols; c++)
            values[rows * cols + c] = rows ? values[(rows - 1) * cols + c] * 0.9 : 0.1;
        if (g->value_nodes) {
            memcpy(nodes, g->value_nodes, rows * cols * sizeof(Node *));
            for (size_t c = 0; c < cols; c++)
                nodes[rows * cols + c] = rows ? g->value_nodes[(rows - 1) * cols + c] : g->value;
        }
        g->values = values;
        g->value_nodes = g->value_nodes ? nodes : NULL;
        g->shape.dim[0]++;
    }
    const char **items = arena_array(lesson->arena, list->n + 1, sizeof(char *));
    if (!items)
        return false;
    if (list->n)
        memcpy(items, list->items, list->n * sizeof(char *));
    items[list->n] = "new";
    list->items = items;
    list->n++;
    return true;
}

// The edits of a lesson, in a fixed order: each given, then each label list.
static size_t list_edits(const Lesson *lesson, Edit *edits) {
    size_t n = 0;
    for (size_t i = 0; i < lesson->n_givens; i++)
        if (editable(&lesson->givens[i]))
            edits[n++] = (Edit){EDIT_VALUES, i};
    for (size_t l = 0; l < lesson->n_labels; l++)
        for (size_t i = 0; i < lesson->n_givens; i++)
            if (grows_with(&lesson->givens[i], &lesson->labels[l])) {
                edits[n++] = (Edit){EDIT_ROW, l};
                break;
            }
    return n;
}

static void describe_edit(const Lesson *lesson, Edit e, char *buf, size_t cap) {
    if (e.kind == EDIT_VALUES)
        snprintf(buf, cap, "with the values of %s changed", lesson->givens[e.index].name);
    else
        snprintf(buf, cap, "with one more row of %s", lesson->labels[e.index].name);
}

// ---------------------------------------------------------------- comparing

// Whether value reads as the literal at its precision: "0.62" is 0.615 to 0.625.
static bool matches(double value, const Literal *lit) {
    if (!isfinite(value))
        return false;
    if (lit->decimals == 0)
        return value == lit->value;
    return fabs(value - lit->value) <= 0.5 * pow(10.0, -lit->decimals) * (1 + 1e-9);
}

static bool same_at(double a, double b, int decimals) {
    if (decimals == 0)
        return a == b;
    char x[64], y[64];
    snprintf(x, sizeof(x), "%.*f", decimals, a);
    snprintf(y, sizeof(y), "%.*f", decimals, b);
    return strcmp(x, y) == 0;
}

static const TraceStage *stage_named(const Trace *trace, size_t hint, const char *name) {
    if (hint < trace->n_stages && strcmp(trace->stages[hint].name, name) == 0)
        return &trace->stages[hint];
    for (size_t i = 0; i < trace->n_stages; i++)
        if (strcmp(trace->stages[i].name, name) == 0)
            return &trace->stages[i];
    return NULL;
}

// "[1, 2]" for element k of shape; "" for a single number.
static void element_index(const Shape *shape, size_t k, char *buf, size_t cap) {
    size_t idx[TENSOR_MAX_RANK];
    for (size_t a = shape->rank; a-- > 0;) {
        idx[a] = shape->dim[a] ? k % shape->dim[a] : 0;
        k = shape->dim[a] ? k / shape->dim[a] : 0;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < shape->rank && len < cap; a++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%zu%s", a ? ", " : "[", idx[a],
                                a + 1 == shape->rank ? "]" : "");
}

// The format of a placeholder that writes the number as it was typed.
static void placeholder_format(const Literal *lit, const char *text, char *buf, size_t cap) {
    if (text[lit->len - 1] == '%')
        snprintf(buf, cap, ":.%d%%", lit->decimals - 2);
    else if (lit->decimals > 0)
        snprintf(buf, cap, ":.%df", lit->decimals);
    else
        buf[0] = '\0';
}

// What the edit made of a stale number's stage.
static void describe_change(const TraceStage *s, const TraceStage *now, size_t k, int digits, char *buf,
                            size_t cap) {
    if (!now || !now->value->data) {
        snprintf(buf, cap, "%s is not computed", s->name);
    } else if (now->value->size != s->value->size) {
        char shape[64];
        shape_format(&now->value->shape, shape, sizeof(shape));
        snprintf(buf, cap, "%s has shape %s", s->name, shape);
    } else {
        char v[64];
        format_number(now->value->data[k], digits, v, sizeof(v));
        snprintf(buf, cap, "it is %s", v);
    }
}

// The error at a stale number: what it is, the stage it equals, how the edit changes it.
static bool report_stale(const Lesson *lesson, const Literal *lit, const Trace *base, Diag *diag) {
    const TraceStage *s = &base->stages[lit->stage];
    size_t k = lit->element;
    char index[128], was[64], format[16], text[64];
    snprintf(text, sizeof(text), "%.*s", (int)lit->len, lit->node->text + lit->offset);
    element_index(&s->value->shape, k, index, sizeof(index));
    format_number(s->value->data[k], base->digits, was, sizeof(was));
    placeholder_format(lit, text, format, sizeof(format));
    size_t line, col;
    bool exact = lesson_text_position(lesson, lit->node, lit->offset, &line, &col);
    Diag one;
    diag_init(&one);
    diag_error(&one, STATUS_LESSON_ERROR, &lesson->doc->source, line, col, exact ? lit->len : 1,
               "the narration states %s as fixed text; it is %s%s = %s, which an edit changes: %s, %s", text,
               s->name, index, was, lit->edit, lit->became);
    if (s->kind == STAGE_INTERMEDIATE)
        diag_hint(&one, "compute it in a step of its own (%s) and write it as a placeholder, {step%s%s}, so that "
                  "it follows every edit", s->expr ? s->expr : s->name, index, format);
    else
        diag_hint(&one, "write it as a placeholder, {%s%s%s}, so that it follows every edit", s->name, index, format);
    return diag_append(diag, &one);
}

static int by_place(const void *a, const void *b) {
    const Literal *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return 0;
}

// The stale numbers as errors, in the order of the file.
static void report_all(const Lesson *lesson, Literals *lits, const Trace *base, Diag *diag) {
    if (!lits->n)
        return;  // no list to sort (qsort takes no NULL, even for none)
    for (size_t l = 0; l < lits->n; l++)
        lesson_text_position(lesson, lits->items[l].node, lits->items[l].offset, &lits->items[l].line,
                             &lits->items[l].col);
    qsort(lits->items, lits->n, sizeof(Literal), by_place);
    for (size_t l = 0; l < lits->n; l++)
        if (lits->items[l].stale && !report_stale(lesson, &lits->items[l], base, diag))
            return;  // DIAG_MAX_ERRORS said: enough to fix first
}

// Each literal not yet found stale that equals a value of the base trace which the edited
// trace changes at the literal's precision (or no longer has) is reported, once.
static void compare(Literals *lits, const Trace *base, const Trace *edited, const char *edit, StaleReport *report) {
    for (size_t l = 0; l < lits->n; l++) {
        Literal *lit = &lits->items[l];
        for (size_t i = 0; i < base->n_stages && !lit->stale; i++) {
            const TraceStage *s = &base->stages[i];
            if (!s->value || !s->value->data)
                continue;
            const TraceStage *now = NULL;
            bool looked = false;
            for (size_t k = 0; k < s->value->size; k++) {
                double v = s->value->data[k];
                if (!matches(v, lit))
                    continue;
                if (!looked) {
                    now = stage_named(edited, i, s->name);
                    looked = true;
                }
                if (now && now->value->data && now->value->size == s->value->size &&
                    same_at(v, now->value->data[k], lit->decimals))
                    continue;
                lit->stale = true;
                lit->stage = i;
                lit->element = k;
                snprintf(lit->edit, sizeof(lit->edit), "%s", edit);
                describe_change(s, now, k, base->digits, lit->became, sizeof(lit->became));
                report->stale++;
                break;
            }
        }
    }
}

// ---------------------------------------------------------------- the lint

void stale_report_finish(StaleReport *report) {
    strbuf_finish(&report->failed);
}

// The first line of an error, for the list of edits that do not run.
static void note_failed(StaleReport *report, const char *edit, const Diag *d) {
    report->edits_failed++;
    strbuf_printf(&report->failed, "%s: %s:%zu:%zu: %s\n", edit, d->path, d->line, d->col, d->message);
}

int stale_lint_file(const char *path, const PipelineOptions *opts, StaleReport *report, Diag *diag) {
    *report = (StaleReport){0};
    strbuf_init(&report->failed);
    Literals lits = {0};
    Plan *plan = NULL;
    Trace *trace = NULL;
    Edit *edits = NULL;
    Lesson *lesson = lesson_load_file(path, diag);
    if (!lesson)
        return diag->status;
    size_t n_steps = lesson->n_steps;  // before the narration's hidden steps
    if (!lesson_literals(lesson, n_steps, &lits)) {
        diag_out_of_memory(diag);
        goto done;
    }
    report->numbers = lits.n;
    size_t max_edits = lesson->n_givens + lesson->n_labels;
    if (!(edits = util_calloc(max_edits + 1, sizeof(Edit)))) {
        diag_out_of_memory(diag);
        goto done;
    }
    size_t n_edits = list_edits(lesson, edits);
    if (pipeline_trace_lesson(lesson, opts, &plan, &trace, diag) != STATUS_OK)
        goto done;
    const Source *src = &lesson->doc->source;
    for (size_t e = 0; e < n_edits && lits.n; e++) {
        Diag d;
        diag_init(&d);
        Lesson *edited = lesson_create(path, src->text, src->len, &d);
        bool ok = edited != NULL;
        if (ok && edits[e].kind == EDIT_VALUES)
            change_values(&edited->givens[edits[e].index], e);
        else if (ok)
            ok = add_row(edited, &edited->labels[edits[e].index]) || diag_no_memory(&d);
        Plan *edited_plan = NULL;
        Trace *edited_trace = NULL;
        ok = ok && pipeline_trace_lesson(edited, opts, &edited_plan, &edited_trace, &d) == STATUS_OK;
        char what[320];
        describe_edit(lesson, edits[e], what, sizeof(what));
        bool go_on = true;
        if (ok) {
            report->edits++;
            compare(&lits, trace, edited_trace, what, report);
        } else if (d.out_of_memory) {
            diag_out_of_memory(diag);
            go_on = false;
        } else {
            note_failed(report, what, &d);
        }
        trace_destroy(edited_trace);
        plan_destroy(edited_plan);
        lesson_destroy(edited);
        if (!go_on)
            break;
    }
    if (report->failed.failed)
        diag_out_of_memory(diag);
    else if (diag->status == STATUS_OK)
        report_all(lesson, &lits, trace, diag);
done:;
    int status = diag->status;
    util_free(lits.items);
    util_free(edits);
    trace_destroy(trace);
    plan_destroy(plan);
    lesson_destroy(lesson);
    return status;
}
