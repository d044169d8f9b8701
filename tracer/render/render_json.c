// render_json: the trace as one JSON document, for tools and for the numpy cross-check.
// Numbers use 17 significant digits so they read back to the same double; inf and nan,
// which JSON cannot spell, are the strings "inf", "-inf" and "nan".
#include <math.h>
#include <string.h>

#include "format.h"
#include "render.h"

void render_json_string(StrBuf *out, const char *s) {
    if (!s) {
        strbuf_puts(out, "null");
        return;
    }
    strbuf_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': strbuf_puts(out, "\\\""); break;
        case '\\': strbuf_puts(out, "\\\\"); break;
        case '\n': strbuf_puts(out, "\\n"); break;
        case '\r': strbuf_puts(out, "\\r"); break;
        case '\t': strbuf_puts(out, "\\t"); break;
        default:
            if (*p < 0x20)
                strbuf_printf(out, "\\u%04x", *p);
            else
                strbuf_putc(out, (char)*p);
        }
    }
    strbuf_putc(out, '"');
}

static void json_number(StrBuf *out, double v) {
    char buf[64];
    format_exact(v, buf, sizeof(buf));
    if (isfinite(v))
        strbuf_puts(out, buf);
    else
        render_json_string(out, buf);
}

// values nested like the shape: axis `axis` of t, starting at flat offset `at`.
static void json_values(StrBuf *out, const Tensor *t, size_t axis, size_t *at) {
    if (axis == t->shape.rank) {
        json_number(out, t->data[(*at)++]);
        return;
    }
    strbuf_putc(out, '[');
    for (size_t i = 0; i < t->shape.dim[axis]; i++) {
        if (i)
            strbuf_puts(out, ", ");
        json_values(out, t, axis + 1, at);
    }
    strbuf_putc(out, ']');
}

static void json_labels(StrBuf *out, const Labels *l) {
    if (!l->items) {
        strbuf_puts(out, "null");
        return;
    }
    strbuf_putc(out, '[');
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            strbuf_puts(out, ", ");
        render_json_string(out, l->items[i]);
    }
    strbuf_putc(out, ']');
}

static void json_verdict(StrBuf *out, const DocVerdict *v, size_t rank) {
    strbuf_printf(out, "\"agrees\": %s, \"max_abs_diff\": ", v->agrees ? "true" : "false");
    json_number(out, v->max_abs_diff);
    char at[INDEX_TEXT_MAX];
    index_format(v->at, rank, at, sizeof(at));
    strbuf_printf(out, ", \"at\": %s", at);
    strbuf_puts(out, ", \"ours\": ");
    json_number(out, v->ours);
    strbuf_puts(out, ", \"printed\": ");
    json_number(out, v->printed);
    strbuf_puts(out, ", \"tolerance\": ");
    json_number(out, v->tolerance);
}

static void json_document(StrBuf *out, const TraceDocument *doc, size_t rank) {
    size_t at = 0;
    static const char *const verdicts[] = {"agrees", "inherits", "own_slip", "edited", "follows_edit", "set_aside"};
    _Static_assert(ARRAY_LEN(verdicts) == DOC_CLASS_COUNT, "one word for each verdict");
    strbuf_printf(out, "{\"verdict\": \"%s\", \"edited\": [", verdicts[doc->verdict]);
    for (size_t i = 0; i < doc->n_edited; i++) {
        strbuf_puts(out, i ? ", " : "");
        render_json_string(out, doc->edited[i]);
    }
    strbuf_puts(out, "], \"values\": ");
    json_values(out, doc->values, 0, &at);
    if (doc->verdict == DOC_SET_ASIDE) {
        strbuf_puts(out, ", \"local\": null}");
        return;
    }
    strbuf_puts(out, ", ");
    json_verdict(out, &doc->chained, rank);
    strbuf_puts(out, ", \"local\": ");
    if (doc->has_local) {
        strbuf_putc(out, '{');
        json_verdict(out, &doc->local, rank);
        strbuf_puts(out, ", \"widened_by\": ");
        json_number(out, doc->widened_by);
        strbuf_putc(out, '}');
    } else {
        strbuf_puts(out, "null");
    }
    strbuf_putc(out, '}');
}

const char *render_stage_kind(StageKind k) {
    static const char *const names[] = {
        [STAGE_GIVEN] = "given",
        [STAGE_STEP] = "step",
        [STAGE_INTERMEDIATE] = "intermediate",
        [STAGE_GRADIENT] = "gradient",
    };
    ASSERT((size_t)k < ARRAY_LEN(names) && names[k]);
    return names[k];
}

void render_json_kind(StrBuf *out, const TraceStage *s) {
    strbuf_printf(out, ", \"kind\": \"%s\", ", render_stage_kind(s->kind));
    if (s->of) {
        strbuf_puts(out, "\"of\": ");
        render_json_string(out, s->of);
        strbuf_puts(out, ", \"wrt\": ");
        render_json_string(out, s->wrt);
        strbuf_puts(out, ", ");
    }
    strbuf_puts(out, "\"expr\": ");
    render_json_string(out, s->expr);
}

// What a step's or a given's show: asks, as the lesson writes it (numbers as table); NULL
// when it asks nothing, and for intermediates and gradients, which have no show: of their own.
static const char *show_word(const TraceStage *s) {
    static const char *const views[] = {[VIEW_QUIET] = "quiet", [VIEW_RESULT] = "result", [VIEW_PICTURE] = "picture",
                                        [VIEW_PERCENT] = "percent", [VIEW_CORNERS] = "corners"};
    if (s->kind != STAGE_STEP && s->kind != STAGE_GIVEN)
        return NULL;
    if (s->view != VIEW_FULL) {
        ASSERT((size_t)s->view < ARRAY_LEN(views) && views[s->view]);
        return views[s->view];
    }
    return NULL;
}

// A picture as a lesson's show: names it.
static const char *picture_name(PictureKind k) {
    static const char *const names[] = {
        [PICTURE_TABLE] = "table",
        [PICTURE_HEATMAP] = "heatmap",
        [PICTURE_BARS] = "bars",
    };
    ASSERT((size_t)k < ARRAY_LEN(names) && names[k]);
    return names[k];
}

// A list of strings: ["a", "b"].
static void json_strings(StrBuf *out, const char **strings, size_t n) {
    strbuf_putc(out, '[');
    for (size_t i = 0; i < n; i++) {
        strbuf_puts(out, i ? ", " : "");
        render_json_string(out, strings[i]);
    }
    strbuf_putc(out, ']');
}

static void json_stage(StrBuf *out, const TraceStage *s) {
    const Tensor *t = s->value;
    size_t rank = t->shape.rank;
    strbuf_puts(out, "{\"name\": ");
    render_json_string(out, s->name);
    strbuf_puts(out, ", \"number\": ");
    render_json_string(out, s->number);
    render_json_kind(out, s);
    strbuf_puts(out, ", \"op\": ");
    render_json_string(out, s->op);
    strbuf_puts(out, ", \"op_line\": ");
    render_json_string(out, s->op_line);
    strbuf_puts(out, ", \"say\": ");
    render_json_string(out, s->say);
    strbuf_puts(out, ", \"about\": ");
    render_json_string(out, s->about);
    strbuf_puts(out, ", \"shape\": [");
    for (size_t i = 0; i < rank; i++)
        strbuf_printf(out, "%s%zu", i ? ", " : "", t->shape.dim[i]);
    strbuf_puts(out, "], \"count\": ");
    strbuf_puts(out, t->is_count ? "true" : "false");
    strbuf_puts(out, ", \"values\": ");
    if (t->data) {
        size_t at = 0;
        json_values(out, t, 0, &at);
    } else {
        strbuf_puts(out, "null");
    }
    strbuf_puts(out, ", \"rows\": ");
    if (rank >= 2)
        json_labels(out, &s->labels[rank - 2]);
    else
        strbuf_puts(out, "null");
    strbuf_puts(out, ", \"cols\": ");
    if (rank >= 1)
        json_labels(out, &s->labels[rank - 1]);
    else
        strbuf_puts(out, "null");
    // The tokens its values are ids of, which the text trace prints in their place.
    if (s->ids_of.items) {
        strbuf_puts(out, ", \"ids_of\": ");
        json_labels(out, &s->ids_of);
    }
    // What the step asks to be drawn as, and what the text trace draws in colour.
    strbuf_puts(out, ", \"show\": ");
    const char *word = show_word(s);
    render_json_string(out, word ? word : s->show == PICTURE_DEFAULT ? NULL : picture_name(s->show));
    strbuf_printf(out, ", \"picture\": \"%s\"", picture_name(trace_picture(s, false, true)));
    strbuf_puts(out, ", \"notes\": [");
    for (size_t i = 0; i < s->n_notes; i++) {
        if (i)
            strbuf_puts(out, ", ");
        render_json_string(out, s->notes[i]);
    }
    strbuf_puts(out, "], \"document\": ");
    if (s->document)
        json_document(out, s->document, rank);
    else
        strbuf_puts(out, "null");
    strbuf_puts(out, ", \"work\": ");
    json_strings(out, s->work, s->n_work);
    strbuf_putc(out, '}');
}

// The updates --explain W[i, j]@s asked for: each one's lines, and every number they show by
// name at full precision.
static void json_updates(StrBuf *out, const TraceTraining *t) {
    strbuf_puts(out, ",\n  \"updates\": [");
    for (size_t k = 0; k < t->n_updates; k++) {
        const TraceUpdate *u = &t->updates[k];
        strbuf_puts(out, k ? ",\n   {\"element\": " : "{\"element\": ");
        render_json_string(out, u->element);
        strbuf_printf(out, ", \"step\": %zu, \"not_reached\": ", u->step);
        render_json_string(out, u->not_reached);
        strbuf_puts(out, ", \"values\": {");
        for (size_t i = 0; i < u->n_values; i++) {
            strbuf_puts(out, i ? ", " : "");
            render_json_string(out, u->names[i]);
            strbuf_puts(out, ": ");
            json_number(out, u->values[i]);
        }
        strbuf_puts(out, "}, \"work\": ");
        json_strings(out, u->work, u->n_work);
        strbuf_putc(out, '}');
    }
    strbuf_putc(out, ']');
}

// [1.5, 2] as JSON numbers.
static void json_numbers(StrBuf *out, const double *v, size_t n) {
    strbuf_putc(out, '[');
    for (size_t i = 0; i < n; i++) {
        strbuf_puts(out, i ? ", " : "");
        json_number(out, v[i]);
    }
    strbuf_putc(out, ']');
}

// What train: did: the setup, each trained given before the first step, and the loss at
// every step taken (and the updates asked for).
static void json_training(StrBuf *out, const TraceTraining *t) {
    strbuf_puts(out, ",\n \"training\": {\"loss\": ");
    render_json_string(out, t->loss);
    strbuf_puts(out, ", \"optimizer\": ");
    render_json_string(out, t->optimizer);
    strbuf_puts(out, ", \"clip\": ");
    render_json_string(out, t->clip);
    strbuf_puts(out, ", \"data\": ");
    json_strings(out, t->data, t->n_data);
    strbuf_puts(out, ", \"trained\": [");
    for (size_t k = 0; k < t->n_trained; k++) {
        strbuf_puts(out, k ? ", {\"name\": " : "{\"name\": ");
        render_json_string(out, t->trained[k].name);
        strbuf_puts(out, ", \"before\": ");
        size_t at = 0;
        json_values(out, t->trained[k].before, 0, &at);
        strbuf_putc(out, '}');
    }
    strbuf_printf(out, "], \"steps\": %zu, \"steps_done\": %zu, \"stopped\": ", t->steps, t->steps_done);
    render_json_string(out, t->stopped);
    strbuf_puts(out, ",\n  \"losses\": ");
    json_numbers(out, t->losses, t->steps_done);
    if (t->n_notes) {
        strbuf_puts(out, ",\n  \"notes\": ");
        json_strings(out, t->notes, t->n_notes);
    }
    if (t->n_updates)
        json_updates(out, t);
    const TraceValidation *v = t->validation;
    if (v) {
        strbuf_puts(out, ",\n  \"validation\": {\"about\": ");
        render_json_string(out, v->about);
        strbuf_puts(out, ", \"steps\": [");
        for (size_t i = 0; i < v->n; i++)
            strbuf_printf(out, "%s%zu", i ? ", " : "", v->steps[i]);
        strbuf_puts(out, "], \"losses\": ");
        json_numbers(out, v->losses, v->n);
        strbuf_puts(out, ", \"after\": ");
        json_number(out, v->after);
        strbuf_puts(out, ", \"bigram\": ");
        json_number(out, v->bigram);
        strbuf_puts(out, ", \"trigram\": ");
        json_number(out, v->trigram);
        strbuf_putc(out, '}');
    }
    strbuf_putc(out, '}');
}

void render_json(const Trace *tr, const bool *shown, StrBuf *out) {
    strbuf_puts(out, "{\"title\": ");
    render_json_string(out, tr->title);
    strbuf_puts(out, ", \"source\": ");
    render_json_string(out, tr->source);
    strbuf_puts(out, ", \"file\": ");
    render_json_string(out, tr->file);
    strbuf_printf(out, ", \"digits\": %d", tr->digits);
    strbuf_puts(out, ", \"intro\": ");
    render_json_string(out, tr->intro);
    strbuf_puts(out, ", \"outro\": ");
    render_json_string(out, tr->outro);
    strbuf_puts(out, ",\n \"stages\": [\n");
    bool any = false;
    for (size_t i = 0; i < tr->n_stages; i++) {
        if (shown && !shown[i])
            continue;
        ASSERT(!tr->stages[i].released);  // the JSON trace keeps every value (pipeline.c)
        strbuf_puts(out, any ? ",\n  " : "  ");
        json_stage(out, &tr->stages[i]);
        any = true;
    }
    if (any)
        strbuf_putc(out, '\n');
    strbuf_printf(out, "],\n \"document_summary\": {\"printed\": %zu, \"agree\": %zu, \"first_own_slip\": ",
                  tr->doc_printed, tr->doc_agree);
    render_json_string(out, tr->doc_first_slip >= 0 ? tr->stages[tr->doc_first_slip].name : NULL);
    // The givens the student changed, the stages that follow those edits, those set aside,
    // and the stages that slip by themselves or are only off through earlier numbers.
    static const struct {
        DocClass verdict;
        const char *key;
    } lists[] = {{DOC_EDITED, "edited"}, {DOC_FOLLOWS_EDIT, "follows_edit"}, {DOC_SET_ASIDE, "set_aside"},
                 {DOC_INHERITS, "inherits"}, {DOC_OWN_SLIP, "own_slips"}};
    for (size_t v = 0; v < ARRAY_LEN(lists); v++) {
        strbuf_printf(out, ", \"%s\": [", lists[v].key);
        bool first = true;
        for (size_t i = 0; i < tr->n_stages; i++)
            if (tr->stages[i].document && tr->stages[i].document->verdict == lists[v].verdict) {
                strbuf_puts(out, first ? "" : ", ");
                render_json_string(out, tr->stages[i].name);
                first = false;
            }
        strbuf_putc(out, ']');
    }
    strbuf_puts(out, "},\n \"claims\": [");
    for (size_t i = 0; i < tr->n_claims; i++) {
        const TraceClaim *cl = &tr->claims[i];
        strbuf_puts(out, i ? ",\n  {\"text\": " : "\n  {\"text\": ");
        render_json_string(out, cl->text);
        strbuf_puts(out, ", \"expr\": ");
        render_json_string(out, cl->expr);
        strbuf_printf(out, ", \"holds\": %s, \"detail\": ", cl->holds ? "true" : "false");
        render_json_string(out, cl->detail);
        strbuf_puts(out, ", \"stage\": ");
        render_json_string(out, tr->stages[cl->stage].name);
        strbuf_putc(out, '}');
    }
    strbuf_puts(out, tr->n_claims ? "\n ]" : "]");
    if (tr->training)
        json_training(out, tr->training);
    strbuf_puts(out, "}\n");
}
