// narrate: placeholders in narration, compiled as hidden steps and written after the run.
#include "narrate.h"

#include <math.h>
#include <string.h>

#include "format.h"

typedef enum PlaceholderKind {
    PLACEHOLDER_VALUE,  // {weights[0, 1]}: one number
    PLACEHOLDER_LABEL,  // {tokens[argmax(w)]}: a word of a label list, by position
    PLACEHOLDER_SHAPE,  // {shape(X)}: "[3, 4]"
} PlaceholderKind;

typedef struct Placeholder {
    const NarrationPart *part;
    PlaceholderKind kind;
    const LabelList *labels;  // LABEL
    size_t step;              // its hidden step in lesson->steps
    const char *hidden_name;  // that step's name
} Placeholder;

// Where a narration stands and what it becomes.
typedef enum TextOwner {
    TEXT_INTRO,
    TEXT_OUTRO,
    TEXT_ABOUT,  // of given `index`
    TEXT_SAY,    // of step `index`
} TextOwner;

typedef struct NarratedText {
    TextOwner owner;
    size_t index;
    const Node *node;
    const Narration *narration;
    Placeholder *placeholders;  // narration->n_placeholders
} NarratedText;

// A name of the lesson: a given's or a step's (labels NULL), or else a label list's.
typedef struct NameSlot {
    const char *name;
    const LabelList *labels;
} NameSlot;

struct Narrator {
    Arena *arena;
    Lesson *lesson;
    NarratedText *texts;
    size_t n_texts;
    // The lesson's names hashed (open addressing; a power of two, at least twice the names),
    // so that 100,000 placeholders {tokens[i]} do not each read every name.
    NameSlot *names;
    size_t cap_names;
};

void narrate_destroy(Narrator *n) {
    if (!n)
        return;
    arena_destroy(n->arena);
    util_free(n);
}

static bool error_at(Diag *diag, const Lesson *lesson, const Node *node, size_t offset, size_t width,
                     const char *hint, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static bool error_at(Diag *diag, const Lesson *lesson, const Node *node, size_t offset, size_t width,
                     const char *hint, const char *fmt, ...) {
    size_t line, col;
    bool exact = lesson_text_position(lesson, node, offset, &line, &col);
    char message[sizeof(diag->message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    if (diag_error(diag, STATUS_LESSON_ERROR, &lesson->doc->source, line, col, exact ? width : 1, "%s", message) ==
            STATUS_LESSON_ERROR &&
        hint)
        diag_hint(diag, "%s", hint);
    return false;
}

// The slot of name: where it is, or the empty slot it would take.
static NameSlot *name_slot(const Narrator *n, const char *name) {
    size_t mask = n->cap_names - 1, at = util_hash_string(name) & mask;
    while (n->names[at].name && strcmp(n->names[at].name, name) != 0)
        at = (at + 1) & mask;
    return &n->names[at];
}

// The names of the givens and steps, then of the label lists (a value by a list's name wins).
static bool hash_names(Narrator *n) {
    const Lesson *lesson = n->lesson;
    size_t count = lesson->n_givens + lesson->n_steps + lesson->n_labels;
    for (n->cap_names = 16; n->cap_names < 2 * (count + 1); n->cap_names *= 2)
        ;
    if (!(n->names = arena_array(n->arena, n->cap_names, sizeof(NameSlot))))
        return false;
    for (size_t i = 0; i < lesson->n_givens; i++)
        name_slot(n, lesson->givens[i].name)->name = lesson->givens[i].name;
    for (size_t i = 0; i < lesson->n_steps; i++)
        name_slot(n, lesson->steps[i].name)->name = lesson->steps[i].name;
    for (size_t i = 0; i < lesson->n_labels; i++) {
        NameSlot *slot = name_slot(n, lesson->labels[i].name);
        if (!slot->name)
            *slot = (NameSlot){lesson->labels[i].name, &lesson->labels[i]};
    }
    return true;
}

// What a placeholder is, and the expression its hidden step computes (start..end of expr_text).
static PlaceholderKind classify(const Narrator *n, const NarrationPart *part, const LabelList **labels,
                                size_t *start, size_t *end) {
    const Expr *e = part->expr;
    *start = e->start;
    *end = e->end;
    *labels = NULL;
    if (e->kind == EXPR_CALL && strcmp(e->name, "shape") == 0 && e->n_args == 1 && !e->arg_names[0]) {
        *start = e->args[0]->start;
        *end = e->args[0]->end;
        return PLACEHOLDER_SHAPE;
    }
    if (e->kind == EXPR_INDEX && e->n_args == 2 && e->args[0]->kind == EXPR_NAME &&
        e->args[1]->kind != EXPR_SLICE && (*labels = name_slot(n, e->args[0]->name)->labels)) {
        *start = e->args[1]->start;
        *end = e->args[1]->end;
        return PLACEHOLDER_LABEL;
    }
    return PLACEHOLDER_VALUE;
}

// Append the hidden step of one placeholder to the lesson's steps (room is already made).
static bool add_hidden_step(Narrator *n, const NarratedText *t, Placeholder *p, size_t start, size_t end,
                            TextCursor *cursor, Diag *diag) {
    Lesson *lesson = n->lesson;
    LessonStep *step = &lesson->steps[lesson->n_steps];
    // A name no step can have (it holds a space), so no stage of the lesson is taken for it.
    const char *name = arena_printf(lesson->arena, "placeholder %zu", lesson->n_steps + 1);
    const char *expr = arena_strndup(lesson->arena, p->part->expr_text + start, end - start);
    if (!name || !expr) {
        diag_out_of_memory(diag);
        return false;
    }
    *step = (LessonStep){.name = name, .key = t->node, .expr = expr, .expr_node = t->node};
    if (t->owner == TEXT_SAY)  // a block's step says it in the block's names
        step->scope = lesson->steps[t->index].scope;
    size_t line, col;
    bool exact = lesson_text_place(lesson, t->node, p->part->expr_offset + start, cursor, &line, &col);
    step->expr_line = line;
    step->expr_col = col;
    step->expr_exact = exact && !memchr(expr, '\n', end - start);
    if (!step->expr_exact) {
        step->expr_line = t->node->line;
        step->expr_col = t->node->col;
    }
    p->step = lesson->n_steps++;
    p->hidden_name = name;
    return true;
}

Narrator *narrate_prepare(Lesson *lesson, Diag *diag) {
    Narrator *n = util_calloc(1, sizeof(Narrator));
    if (!n || !(n->arena = arena_create())) {
        util_free(n);
        diag_out_of_memory(diag);
        return NULL;
    }
    n->lesson = lesson;
    size_t max_texts = 2 + lesson->n_givens + lesson->n_steps;
    n->texts = arena_array(n->arena, max_texts, sizeof(NarratedText));
    if (!n->texts || !hash_names(n))
        goto oom;
    size_t n_placeholders = 0;
    for (size_t k = 0; k < max_texts; k++) {
        NarratedText t = {0};
        const char *text;  // as loaded: a folded block's paragraphs are lines apart
        if (k < 2) {
            t.owner = k == 0 ? TEXT_INTRO : TEXT_OUTRO;
            t.node = k == 0 ? lesson->intro_node : lesson->outro_node;
            text = k == 0 ? lesson->intro : lesson->outro;
        } else if (k < 2 + lesson->n_givens) {
            t.owner = TEXT_ABOUT;
            t.index = k - 2;
            t.node = lesson->givens[t.index].about_node;
            text = lesson->givens[t.index].about;
        } else {
            t.owner = TEXT_SAY;
            t.index = k - 2 - lesson->n_givens;
            t.node = lesson->steps[t.index].say_node;
            text = lesson->steps[t.index].say;
        }
        if (!t.node || (!strchr(text, '{') && !strchr(text, '}')))
            continue;
        ExprError err;
        t.narration = expr_parse_narration(n->arena, text, &err);
        if (!t.narration) {
            if (!err.message[0])
                goto oom;
            error_at(diag, lesson, t.node, err.pos, err.width, err.hint[0] ? err.hint : NULL, "%s", err.message);
            goto fail;
        }
        n_placeholders += t.narration->n_placeholders;
        n->texts[n->n_texts++] = t;
    }
    // Room for the hidden steps, after every step of the lesson.
    LessonStep *steps = arena_array(lesson->arena, lesson->n_steps + n_placeholders + 1, sizeof(LessonStep));
    if (!steps)
        goto oom;
    if (lesson->n_steps)
        memcpy(steps, lesson->steps, lesson->n_steps * sizeof(LessonStep));
    lesson->steps = steps;
    for (size_t k = 0; k < n->n_texts; k++) {
        NarratedText *t = &n->texts[k];
        t->placeholders = arena_array(n->arena, t->narration->n_placeholders + 1, sizeof(Placeholder));
        if (!t->placeholders)
            goto oom;
        size_t j = 0;
        TextCursor cursor = {0};  // the placeholders come in the order of the text
        for (size_t i = 0; i < t->narration->n_parts; i++) {
            const NarrationPart *part = &t->narration->parts[i];
            if (!part->expr)
                continue;
            Placeholder *p = &t->placeholders[j++];
            p->part = part;
            size_t start, end;
            p->kind = classify(n, part, &p->labels, &start, &end);
            if (!add_hidden_step(n, t, p, start, end, &cursor, diag))
                goto fail;
        }
    }
    return n;
oom:
    diag_out_of_memory(diag);
fail:
    narrate_destroy(n);
    return NULL;
}

static size_t hidden_node(const Plan *plan, const Placeholder *p) {
    size_t node = 0;
    const PlanNode *found = plan_find_stage(plan, p->hidden_name, &node);
    ASSERT(found);
    return node;
}

bool narrate_check(const Narrator *n, const Plan *plan, Diag *diag) {
    for (size_t k = 0; k < n->n_texts; k++) {
        const NarratedText *t = &n->texts[k];
        for (size_t i = 0; i < t->narration->n_placeholders; i++) {
            const Placeholder *p = &t->placeholders[i];
            if (p->kind == PLACEHOLDER_SHAPE)
                continue;
            const PlanNode *node = &plan->nodes[hidden_node(plan, p)];
            size_t size = 0;
            shape_size(&node->shape, &size);
            const Expr *e = p->kind == PLACEHOLDER_LABEL ? p->part->expr->args[1] : p->part->expr;
            size_t offset = p->part->expr_offset + e->start, width = e->end - e->start;
            char shape[64];
            shape_format(&node->shape, shape, sizeof(shape));
            if (size != 1)
                return error_at(diag, n->lesson, t->node, offset, width,
                                p->kind == PLACEHOLDER_LABEL
                                    ? "a label is picked by one position, as tokens[argmax(weights[0])]"
                                    : "pick one value, as weights[0, 1], or reduce it, as max(weights[0]); "
                                      "{shape(X)} writes a shape",
                                "this placeholder gives a tensor of shape %s where %s is expected", shape,
                                p->kind == PLACEHOLDER_LABEL ? "one position" : "a number");
            if (!node->has_values)
                return error_at(diag, n->lesson, t->node, offset, width,
                                "write its shape with {shape(...)}, or give the tensor values",
                                "this placeholder reads a shape-only tensor, which has no values");
        }
    }
    return true;
}

// One placeholder's text into out. A label position past its list is written as the position,
// as the rows of a tensor with more rows than labels are, with a warning at the placeholder:
// a lesson that traces is never stopped by its narration. False only when memory runs out.
static bool write_placeholder(const Narrator *n, const NarratedText *t, const Placeholder *p, const Plan *plan,
                              const Trace *trace, StrBuf *out, Diag *diag) {
    size_t node = hidden_node(plan, p);
    const Tensor *v = trace->tensors[node];
    char buf[128];
    if (p->kind == PLACEHOLDER_SHAPE) {
        shape_format(&plan->nodes[node].shape, buf, sizeof(buf));
        strbuf_puts(out, buf);
        return true;
    }
    double x = v->data[0];
    if (p->kind == PLACEHOLDER_LABEL) {
        double n_labels = (double)p->labels->n;
        double at = x < 0 ? x + n_labels : x;
        if (!(at >= 0 && at < n_labels) || at != floor(at)) {
            const Expr *e = p->part->expr->args[1];
            size_t line, col;
            lesson_text_position(n->lesson, t->node, p->part->expr_offset + e->start, &line, &col);
            format_short(x, buf, sizeof(buf));
            diag_warning(diag, n->lesson->doc->source.path, line, col,
                         "the position %s is not one of the %zu labels of '%s': it is written as the position", buf,
                         p->labels->n, p->labels->name);
            strbuf_puts(out, buf);
            return true;
        }
        strbuf_puts(out, p->labels->items[(size_t)at]);
        return true;
    }
    switch (p->part->format) {
    case NARRATION_DEFAULT:
        if (v->is_count)
            format_count(x, buf, sizeof(buf));
        else
            format_number(x, trace->digits, buf, sizeof(buf));
        break;
    case NARRATION_FIXED:
        format_places(x, p->part->decimals, buf, sizeof(buf));
        break;
    case NARRATION_PERCENT:
        format_percent(x, p->part->decimals, buf, sizeof(buf));
        break;
    case NARRATION_SHORT:
        format_short(x, buf, sizeof(buf));
        break;
    }
    strbuf_puts(out, buf);
    return true;
}

// The trace's slot for a narrated text.
static const char **slot(const Narrator *n, const NarratedText *t, const Plan *plan, Trace *trace) {
    if (t->owner == TEXT_INTRO)
        return &trace->intro;
    if (t->owner == TEXT_OUTRO)
        return &trace->outro;
    for (size_t i = 0; i < trace->n_stages; i++) {
        TraceStage *s = &trace->stages[i];
        const PlanNode *node = &plan->nodes[s->node];
        if (t->owner == TEXT_ABOUT && s->kind == STAGE_GIVEN && node->given == &n->lesson->givens[t->index])
            return &s->about;
        if (t->owner == TEXT_SAY && s->kind == STAGE_STEP && node->step == &n->lesson->steps[t->index])
            return &s->say;
    }
    return NULL;
}

bool narrate_apply(const Narrator *n, const Plan *plan, Trace *trace, Diag *diag) {
    StrBuf out;
    strbuf_init(&out);
    for (size_t k = 0; k < n->n_texts; k++) {
        const NarratedText *t = &n->texts[k];
        strbuf_clear(&out);
        size_t j = 0;
        for (size_t i = 0; i < t->narration->n_parts; i++) {
            const NarrationPart *part = &t->narration->parts[i];
            if (!part->expr)
                strbuf_append(&out, part->text, part->text_len);
            else if (!write_placeholder(n, t, &t->placeholders[j++], plan, trace, &out, diag)) {
                strbuf_finish(&out);
                return false;
            }
        }
        const char **where = slot(n, t, plan, trace);
        const char *text = out.failed ? NULL : arena_strdup(trace->arena, strbuf_str(&out));
        if (!text) {
            strbuf_finish(&out);
            diag_out_of_memory(diag);
            return false;
        }
        if (where)
            *where = text;
    }
    strbuf_finish(&out);
    // The hidden steps and their intermediates are the last stages: drop them.
    size_t first_hidden = n->lesson->n_steps;
    for (size_t k = 0; k < n->n_texts; k++)
        for (size_t i = 0; i < n->texts[k].narration->n_placeholders; i++)
            if (n->texts[k].placeholders[i].step < first_hidden)
                first_hidden = n->texts[k].placeholders[i].step;
    for (size_t i = 0; i < trace->n_stages; i++) {
        const PlanNode *node = &plan->nodes[trace->stages[i].node];
        if (node->step && node->step >= &n->lesson->steps[first_hidden] &&
            node->step < &n->lesson->steps[n->lesson->n_steps]) {
            trace->n_stages = i;
            break;
        }
    }
    return true;
}

void narrate_needs(const Narrator *n, const Plan *plan, bool *keep) {
    for (size_t k = 0; k < n->n_texts; k++)
        for (size_t i = 0; i < n->texts[k].narration->n_placeholders; i++)
            if (n->texts[k].placeholders[i].kind != PLACEHOLDER_SHAPE)
                keep[hidden_node(plan, &n->texts[k].placeholders[i])] = true;
}
