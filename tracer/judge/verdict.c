// verdict: the words that judge a stage against the document (see verdict.h).
#include "verdict.h"

#include <math.h>
#include <stdio.h>

#include "format.h"

static void words_init(VerdictWords *w, VerdictTone tone, const char *head, const char *sep) {
    w->tone = tone;
    strbuf_init(&w->head);
    strbuf_init(&w->body);
    strbuf_puts(&w->head, head);
    w->sep = sep;
}

bool verdict_words_failed(const VerdictWords *w) {
    return w->head.failed || w->body.failed;
}

void verdict_words_finish(VerdictWords *w) {
    strbuf_finish(&w->head);
    strbuf_finish(&w->body);
}

// "Q_0", "Q_0 and d_k" or "X, W_Q and W_K": the edited givens a stage depends on.
static void edited_list(StrBuf *out, const TraceDocument *doc, VerdictName name) {
    for (size_t i = 0; i < doc->n_edited; i++) {
        strbuf_puts(out, i == 0 ? "" : i + 1 == doc->n_edited ? " and " : ", ");
        name(out, doc->edited[i]);
    }
}

// The verdict's place as text: before "[1, 0]" after, or nothing for a scalar.
static void place(StrBuf *out, const char *before, const size_t *at, size_t rank, const char *after) {
    if (!rank)
        return;
    char text[INDEX_TEXT_MAX];
    index_format(at, rank, text, sizeof(text));
    strbuf_printf(out, "%s%s%s", before, text, after);
}

void verdict_words(VerdictWords *w, const Trace *tr, const TraceStage *s, const DocVerdict *v, bool local,
                   VerdictName name) {
    const TraceDocument *doc = s->document;
    size_t rank = s->value->shape.rank;
    size_t k = shape_flatten(&s->value->shape, v->at);
    char ours[64], printed[64], diff[64], tol[64], wid[64];
    format_number(v->ours, tr->digits, ours, sizeof(ours));
    format_places(v->printed, doc->decimals[k], printed, sizeof(printed));
    // The gap and the tolerance where the verdict points, which need not be where the largest
    // gap is when numbers were printed with different decimals.
    format_number(v->agrees ? v->max_abs_diff : v->gap, tr->digits, diff, sizeof(diff));
    format_places(v->tolerance - v->widened, doc->decimals[k], tol, sizeof(tol));
    format_number(doc->widened_by, tr->digits, wid, sizeof(wid));
    bool follows_edit = doc->verdict == DOC_FOLLOWS_EDIT;
    VerdictTone against = doc->verdict == DOC_INHERITS || follows_edit ? VERDICT_INHERITS : VERDICT_DISAGREES;
    StrBuf *b = &w->body;
    if (!local) {
        if (follows_edit) {
            words_init(w, VERDICT_EDIT, "document: follows your edit", ": ");
            place(b, "at ", v->at, rank, " ");
            strbuf_printf(b, "the exact value is %s, the document printed %s (off by %s): the difference comes from "
                             "your change to ", ours, printed, diff);
            edited_list(b, doc, name);
            strbuf_puts(b, ", not from the document");
        } else if (v->agrees) {
            words_init(w, VERDICT_AGREES, "document: agrees", ": ");
            strbuf_printf(b, "every printed number is within one unit of its last place (largest difference %s",
                          diff);
            place(b, " at ", v->at, rank, "");
            strbuf_puts(b, ")");
        } else {
            words_init(w, against, "document: disagrees", ": ");
            place(b, "at ", v->at, rank, " ");
            if (!isfinite(v->ours) && isfinite(v->printed))
                // No gap can be measured to a value that is not a number: say why instead.
                strbuf_printf(b, "the exact value is %s but the document printed %s (%s)", ours, printed,
                              isnan(v->ours) ? "nan is not a number, so no printed number agrees with it"
                                             : "inf is past every double, so no printed number agrees with it");
            else
                strbuf_printf(b, "the exact value is %s but the document printed %s (off by %s; within %s would "
                                 "agree)", ours, printed, diff, tol);
        }
        return;
    }
    // How the tolerance was widened: by the rounding of printed inputs, or not at all when the
    // step reads only the lesson's exact givens.
    char how[256];
    if (doc->printed_inputs == 0)
        snprintf(how, sizeof(how), "within %s; its inputs are exact, so nothing was widened", tol);
    else if (doc->widening_skipped)
        snprintf(how, sizeof(how), "within %s; not widened: its %zu printed input values are too many to try one "
                                   "by one", tol, doc->printed_inputs);
    else
        snprintf(how, sizeof(how), "within %s, widened by up to %s for the rounding of its printed inputs", tol, wid);
    if (follows_edit) {
        // The document's own numbers, without the student's: true whatever the edit.
        if (v->agrees) {
            words_init(w, VERDICT_AGREES, "on the document's own printed inputs, without your edit: agrees", " ");
            strbuf_printf(b, "(%s)", how);
        } else {
            words_init(w, VERDICT_INHERITS, "on the document's own printed inputs, without your edit: disagrees",
                       ": ");
            strbuf_printf(b, "they give %s", ours);
            place(b, " at ", v->at, rank, "");
            strbuf_printf(b, ", not %s (%s)", printed, how);
        }
    } else if (v->agrees) {
        words_init(w, VERDICT_AGREES, "on its own printed inputs: agrees", " ");
        strbuf_printf(b, "(%s)%s", how,
                      doc->chained.agrees ? ""
                                          : ": this step is right; it is off only through numbers carried from "
                                            "earlier steps");
    } else {
        words_init(w, against, "on its own printed inputs: disagrees", ": ");
        strbuf_printf(b, "the same operation on the document's own inputs gives %s", ours);
        place(b, " at ", v->at, rank, "");
        strbuf_printf(b, ", not %s (%s): the document goes wrong here by itself", printed, how);
    }
}

void verdict_edited(VerdictWords *w, const TraceStage *s, VerdictName name) {
    const TraceDocument *doc = s->document;
    const Tensor *v = s->value;
    size_t first = doc->first_changed;
    size_t at[TENSOR_MAX_RANK] = {0};
    shape_unflatten(&v->shape, first, at);
    char where[INDEX_TEXT_MAX] = "", ours[64], printed[64];
    if (v->shape.rank)
        index_format(at, v->shape.rank, where, sizeof(where));
    format_short(v->data[first], ours, sizeof(ours));
    format_places(doc->values->data[first], doc->decimals[first], printed, sizeof(printed));
    words_init(w, VERDICT_EDIT, "you changed ", ": ");
    StrBuf given;
    strbuf_init(&given);
    strbuf_printf(&given, "%s%s", s->name, where);
    name(&w->head, strbuf_str(&given));
    w->head.failed |= given.failed;
    strbuf_finish(&given);
    strbuf_printf(&w->body, "the document has %s, this lesson %s", printed, ours);
    if (doc->values_changed > 1)
        strbuf_printf(&w->body, " (%zu of its %zu values differ)", doc->values_changed, v->size);
    strbuf_puts(&w->body, "; what depends on it follows your edit");
}

void verdict_set_aside(VerdictWords *w, const TraceStage *s, VerdictName name) {
    char printed[64], ours[64];
    shape_format(&s->document->values->shape, printed, sizeof(printed));
    shape_format(&s->value->shape, ours, sizeof(ours));
    words_init(w, VERDICT_EDIT, "document: not compared", ": ");
    strbuf_puts(&w->body, "the document's values for ");
    name(&w->body, s->name);
    strbuf_printf(&w->body, " are %s; this lesson's ", printed);
    name(&w->body, s->name);
    strbuf_printf(&w->body, " is %s", ours);
}

void verdict_same(VerdictWords *w) {
    words_init(w, VERDICT_AGREES, "document: the same numbers", ", ");
    strbuf_puts(&w->body, "as the document printed them");
}
