// render_text: the trace as a student reads it: headers, shapes, narration, the values of
// each stage (render_values.c), the document's verdicts and the claims, all fitted to a width
// (a terminal's, or 80 for a golden file).
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "render_values.h"
#include "render_train.h"
#include "safetext.h"
#include "textwrap.h"
#include "verdict.h"

// A name in a sentence: as it is.
static void plain_name(StrBuf *out, const char *name) {
    strbuf_puts(out, name);
}

// One judgement (verdict.h): its head in the colour of its tone, then its body.
static void judgement(const TextCtx *c, StrBuf *out, VerdictWords *w, size_t indent) {
    const TextStyle *st = &c->st;
    const char *tones[] = {[VERDICT_AGREES] = st->green, [VERDICT_INHERITS] = st->yellow,
                           [VERDICT_DISAGREES] = st->red, [VERDICT_EDIT] = st->cyan};
    text_wrapf(c, out, indent, indent + 2, "%s%s%s%s%s", tones[w->tone], strbuf_str(&w->head), st->reset, w->sep,
          strbuf_str(&w->body));
    out->failed |= verdict_words_failed(w);
    verdict_words_finish(w);
}

static void document(const TextCtx *c, StrBuf *out, const TraceStage *s, size_t indent, bool values_shown) {
    const TraceDocument *doc = s->document;
    VerdictWords w;
    if (doc->verdict == DOC_SET_ASIDE) {
        verdict_set_aside(&w, s, plain_name);
        judgement(c, out, &w, indent);
        return;
    }
    if (doc->same_as_given) {
        verdict_same(&w);
        judgement(c, out, &w, indent);
        return;
    }
    if (values_shown) {
        text_pad(out, indent);
        strbuf_puts(out, "as the document printed it:\n");
        text_values(c, out, s, doc->values, doc->decimals, indent, &TEXT_TABLE_ONLY);
    }
    if (doc->verdict == DOC_EDITED) {
        verdict_edited(&w, s, plain_name);
        judgement(c, out, &w, indent);
        return;
    }
    verdict_words(&w, c->tr, s, &doc->chained, false, plain_name);
    judgement(c, out, &w, indent);
    if (doc->has_local) {
        verdict_words(&w, c->tr, s, &doc->local, true, plain_name);
        judgement(c, out, &w, indent);
    }
}

// The stages whose document has this verdict: "Q (step 1), K (step 2)". The givens the
// student changed are those edited and those whose shape changed.
static void stages_with(StrBuf *list, const Trace *tr, DocClass verdict) {
    for (size_t i = 0; i < tr->n_stages; i++) {
        const TraceStage *s = &tr->stages[i];
        if (!s->document)
            continue;
        DocClass v = s->document->verdict;
        bool reshaped_given = v == DOC_SET_ASIDE && s->kind == STAGE_GIVEN;
        if (verdict == DOC_EDITED ? v != DOC_EDITED && !reshaped_given : v != verdict)
            continue;
        strbuf_printf(list, "%s%s", list->len ? ", " : "", s->name);
        if (s->number[0])
            strbuf_printf(list, " (step %s)", s->number);
    }
}

// One sentence naming the stages with this verdict, in its colour, when there are any; the
// sentence is "%s<words>%s ... %s." (colour on, colour off, the list). list is scratch.
static bool list_line(const TextCtx *c, StrBuf *out, StrBuf *list, DocClass verdict, const char *colour,
                      const char *sentence) __attribute__((format(printf, 6, 0)));
static bool list_line(const TextCtx *c, StrBuf *out, StrBuf *list, DocClass verdict, const char *colour,
                      const char *sentence) {
    strbuf_clear(list);
    stages_with(list, c->tr, verdict);
    if (!list->len)
        return false;
    text_wrapf(c, out, 0, 2, sentence, colour, c->st.reset, strbuf_str(list));
    return true;
}

static void document_summary(const TextCtx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    if (tr->doc_printed == 0)
        return;
    strbuf_printf(out, "\n%sDocument check%s\n--------------\n", st->bold, st->reset);
    StrBuf list;
    strbuf_init(&list);
    // The student's edits first: they explain every difference that follows from them.
    if (list_line(c, out, &list, DOC_EDITED, st->cyan, "%sYou changed%s %s: the document's numbers are not yours there."))
        list_line(c, out, &list, DOC_FOLLOWS_EDIT, st->cyan,
                  "%sOff only because of your edit%s (the document is not to blame): %s.");
    size_t compared = tr->doc_printed - tr->doc_edited - tr->doc_set_aside;
    char follow[64] = "";
    if (tr->doc_follow)
        snprintf(follow, sizeof(follow), ", %zu follow your edit", tr->doc_follow);
    text_wrapf(c, out, 0, 2, "The document printed %zu of these stages; %zu agree with the exact values%s.", tr->doc_printed,
          tr->doc_agree, follow);
    list_line(c, out, &list, DOC_SET_ASIDE, st->cyan,
              "%sNot compared%s, because their shape is no longer the document's: %s.");
    list_line(c, out, &list, DOC_OWN_SLIP, st->red, "%sWrong by themselves%s, on the document's own printed inputs: %s.");
    list_line(c, out, &list, DOC_INHERITS, st->yellow,
              "%sRight on their own printed inputs%s, off only through numbers carried from earlier steps: %s.");
    if (tr->doc_first_slip >= 0) {
        const TraceStage *s = &tr->stages[tr->doc_first_slip];
        text_wrapf(c, out, 0, 2, "%sThe document first goes wrong by itself%s at step %s: %s = %s.", st->red, st->reset,
              s->number, s->name, s->expr);
    } else if (tr->doc_agree == compared) {
        text_wrapf(c, out, 0, 2, "%s%s%s", st->green,
              tr->doc_edited || tr->doc_set_aside ? "Every other number the document printed agrees."
                                                  : "Every number the document printed agrees.",
              st->reset);
    } else if (tr->doc_agree + tr->doc_follow < compared) {
        // Disagreements without a slip: the document computed on from its own rounded numbers.
        text_wrapf(c, out, 0, 2, "%sNo step goes wrong by itself%s: each disagreement comes from rounded numbers the "
                            "document carried forward.", st->yellow, st->reset);
    } else if (tr->doc_follow && tr->doc_first_hidden_slip >= 0) {
        // Every difference follows the edit, but on its own printed inputs the document is
        // also wrong somewhere (the step says so): not "no step goes wrong".
        const TraceStage *s = &tr->stages[tr->doc_first_hidden_slip];
        text_wrapf(c, out, 0, 2, "%sYour edit aside, the document also goes wrong by itself%s, on its own printed "
                   "inputs, first at step %s: %s = %s.", st->red, st->reset, s->number, s->name, s->expr);
    } else {
        text_wrapf(c, out, 0, 2, "%sNo step of the document goes wrong by itself.%s", st->green, st->reset);
    }
    out->failed |= list.failed;
    strbuf_finish(&list);
}

// The operation line: its shapes, then what it does, on the same line when both fit.
static void operation(const TextCtx *c, StrBuf *out, const TraceStage *s, size_t indent) {
    const TextStyle *st = &c->st;
    const char *about = s->op_about ? s->op_about : "";
    size_t w = indent + text_width(s->op_line) + (about[0] ? 3 + text_width(about) : 0);
    if (w <= c->width || !about[0]) {
        text_wrapf(c, out, indent, indent + 2, "%s%s%s%s%s", st->cyan, s->op_line, st->reset, about[0] ? "   " : "",
              about);
        return;
    }
    text_wrapf(c, out, indent, indent + 2, "%s%s%s", st->cyan, s->op_line, st->reset);
    textwrap_line(out, about, strlen(about), indent + 2, indent + 2, c->width);
}

// A stage chosen by name (--only, --from, --to) is shown whatever its view; otherwise the
// intermediates of a quiet step (and the gradient stages of a quiet grad step: its backward
// pass), and every intermediate with --brief, are not.
static bool stage_shown(const TextCtx *c, size_t i) {
    const TraceStage *s = &c->tr->stages[i];
    if (c->opts->shown)
        return c->opts->shown[i] && !(c->opts->brief && s->kind == STAGE_INTERMEDIATE);
    bool folded = (s->kind == STAGE_INTERMEDIATE || s->kind == STAGE_GRADIENT) && s->view == VIEW_QUIET;
    return !(folded || (s->kind == STAGE_INTERMEDIATE && c->opts->brief));
}

// Whether the stage prints quietly: its line and narration, not its values (show: quiet),
// unless a choice of stages (--only) asked for it.
static bool stage_quiet(const TextCtx *c, const TraceStage *s) {
    return s->view == VIEW_QUIET && !c->opts->shown;
}

bool render_text_prints_values(const RenderOptions *opts, StageKind kind, bool chosen) {
    return chosen && !(opts->brief && (kind == STAGE_INTERMEDIATE || kind == STAGE_GIVEN));
}

static void stage(const TextCtx *c, StrBuf *out, const TraceStage *s) {
    const TextStyle *st = &c->st;
    char shape[64];
    shape_format(&s->value->shape, shape, sizeof(shape));
    const size_t indent = 4;
    bool brief_given = !render_text_prints_values(c->opts, s->kind, true);
    // The values of a stage shown were kept to the end (run.h); a given whose values --brief
    // hides may have been freed, but not when the document printed it (doccheck_needs).
    ASSERT(!s->released || (brief_given && !s->document));
    strbuf_putc(out, '\n');
    if (s->kind == STAGE_GIVEN)
        text_wrapf(c, out, 0, indent, "%sGiven %s  %s%s%s%s", st->bold, s->name, shape, st->reset, s->about ? "  " : "",
              s->about ? s->about : "");
    else
        text_wrapf(c, out, 0, indent, "%sStep %s  %s = %s%s", st->bold, s->number, s->name, s->expr, st->reset);
    // A step that names a grad() shows the backward pass above it: the copy that gives it its
    // name is no operation of the lesson's, so the step prints its shape alone.
    if (s->op_line && !s->names_gradient)
        operation(c, out, s, indent);
    else if (s->kind != STAGE_GIVEN)
        text_wrapf(c, out, indent, indent + 2, "%s%s%s", st->cyan, shape, st->reset);
    if (s->say)
        textwrap_paragraph(out, s->say, indent, c->width);
    if (s->say && trace_claim_fails_under(c->tr, (size_t)(s - c->tr->stages)))
        text_wrapf(c, out, indent, indent + 2,
                   "%scareful:%s this narration describes the lesson as written; the claim below fails on these "
                   "numbers", st->red, st->reset);
    if (stage_quiet(c, s)) {
        // Said once: a page of quiet stages each with the same line would bury the point.
        if (!c->notation->quiet_said)
            text_wrapf(c, out, indent, indent + 1,
                       "(quiet: its values, as those of each stage printed so, come with --only %s)", s->name);
        c->notation->quiet_said = true;
        return;
    }
    if (!brief_given) {
        Drawing draw = text_drawing_for(c, s);
        text_values(c, out, s, s->value, NULL, indent, &draw);
    }
    for (size_t i = 0; i < s->n_notes; i++)
        text_wrapf(c, out, indent, indent + 6, "%snote:%s %s", st->cyan, st->reset, s->notes[i]);
    if (s->document)
        document(c, out, s, indent, !brief_given);
    if (s->n_work) {
        text_pad(out, indent);
        strbuf_printf(out, "%swork:%s\n", st->cyan, st->reset);
        for (size_t i = 0; i < s->n_work; i++)
            textwrap_line(out, s->work[i], strlen(s->work[i]), indent + 2, indent + 6, c->width);
    }
}

// The claims that print under stage i: "claim: rows sum to 1: holds", in green; a failing one
// in red, with where and by how much.
static void stage_claims(const TextCtx *c, StrBuf *out, size_t i, size_t indent) {
    const TextStyle *st = &c->st;
    for (size_t k = 0; k < c->tr->n_claims; k++) {
        const TraceClaim *cl = &c->tr->claims[k];
        if (cl->stage != i)
            continue;
        if (cl->holds)
            text_wrapf(c, out, indent, indent + 2, "%sclaim:%s %s: %sholds%s", st->cyan, st->reset, cl->text, st->green,
                  st->reset);
        else
            text_wrapf(c, out, indent, indent + 2, "%sclaim:%s %s: %sfails%s: %s", st->cyan, st->reset, cl->text, st->red,
                  st->reset, cl->detail);
    }
}

// The claims that fail, in a heavy box as wide as its text, in red: the end of a trace is
// where a student looks last, and a failed claim means that the narration above says what
// these numbers do not show.
static void failed_claims_box(const TextCtx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    size_t inner = c->width - 4;  // "┃ " and " ┃"
    StrBuf body, item;
    strbuf_init(&body);
    strbuf_init(&item);
    size_t failed = tr->n_claims_failed, all = tr->n_claims;
    strbuf_puts(&item, st->bold);
    if (all == 1)
        strbuf_puts(&item, "The lesson's claim FAILS");
    else if (failed == all && all == 2)
        strbuf_puts(&item, "Both of the lesson's claims FAIL");
    else if (failed == all)
        strbuf_printf(&item, "All %zu of the lesson's claims FAIL", all);
    else
        strbuf_printf(&item, "%zu of the lesson's %zu claims %s", failed, all, failed == 1 ? "FAILS" : "FAIL");
    strbuf_printf(&item, " on these numbers:%s", st->reset);
    textwrap_line(&body, strbuf_str(&item), item.len, 0, 2, inner);
    strbuf_putc(&body, '\n');
    bool narrated = false;  // a claim that fails is beside narration
    for (size_t k = 0; k < tr->n_claims; k++) {
        const TraceClaim *cl = &tr->claims[k];
        if (cl->holds)
            continue;
        const TraceStage *s = &tr->stages[cl->stage];
        narrated = narrated || s->say;
        strbuf_clear(&item);
        strbuf_printf(&item, "- %s (%s %s)", cl->text, s->number[0] ? "step" : "given", s->number[0] ? s->number : s->name);
        textwrap_line(&body, strbuf_str(&item), item.len, 0, 2, inner);
        strbuf_clear(&item);
        strbuf_printf(&item, "%s: %s", cl->expr, cl->detail);
        textwrap_line(&body, strbuf_str(&item), item.len, 4, 6, inner);
    }
    static const char close[] = "Every number above is exact, but the narration was written for the lesson as "
                                "written: beside a claim that fails, it may say what these numbers do not show.";
    if (narrated) {
        strbuf_putc(&body, '\n');
        textwrap_line(&body, close, strlen(close), 0, 0, inner);
    }
    size_t w = textwrap_block_width(strbuf_str(&body));
    strbuf_printf(out, "%s┏", st->red);
    strbuf_repeat(out, "━", w + 2);
    strbuf_printf(out, "┓%s\n", st->reset);
    for (const char *line = strbuf_str(&body); *line;) {
        size_t len = strcspn(line, "\n");
        strbuf_printf(out, "%s┃%s %.*s", st->red, st->reset, (int)len, line);
        text_pad(out, w - format_display_width(line, len));
        strbuf_printf(out, " %s┃%s\n", st->red, st->reset);
        line += len + (line[len] == '\n');
    }
    strbuf_printf(out, "%s┗", st->red);
    strbuf_repeat(out, "━", w + 2);
    strbuf_printf(out, "┛%s\n", st->reset);
    out->failed |= body.failed || item.failed;
    strbuf_finish(&body);
    strbuf_finish(&item);
}

static void claims_summary(const TextCtx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    if (tr->n_claims == 0)
        return;
    strbuf_printf(out, "\n%sClaims%s\n------\n", st->bold, st->reset);
    if (tr->n_claims_failed) {
        failed_claims_box(c, out);
        return;
    }
    if (tr->n_claims == 1)
        text_wrapf(c, out, 0, 2, "%sThe lesson's claim holds.%s", st->green, st->reset);
    else
        text_wrapf(c, out, 0, 2, "%sAll %zu of the lesson's claims hold.%s", st->green, tr->n_claims, st->reset);
}


// The stage of the given named name, or SIZE_MAX.
static size_t given_stage(const Trace *tr, const char *name) {
    for (size_t i = 0; i < tr->n_stages; i++)
        if (tr->stages[i].kind == STAGE_GIVEN && strcmp(tr->stages[i].name, name) == 0)
            return i;
    return SIZE_MAX;
}

// What train: did before the trace: the setup and the loss curve. Each trained given as it was
// before the first step (its stage below shows it trained) is named, and printed when a choice
// of stages (--only) asks for that given: random starting weights are not what a student
// came for.
static void training(const TextCtx *c, StrBuf *out) {
    const TraceTraining *t = c->tr->training;
    const TextStyle *st = &c->st;
    strbuf_printf(out, "\n%sTraining%s\n--------\n", st->bold, st->reset);
    render_train_text(t, c->tr->digits, 4, c->width, out);
    if (!c->opts->shown && t->n_trained && !c->opts->brief) {
        StrBuf names;
        strbuf_init(&names);
        for (size_t k = 0; k < t->n_trained; k++)
            strbuf_printf(&names, "%s%s", k ? ", " : "", t->trained[k].name);
        strbuf_putc(out, '\n');
        text_wrapf(c, out, 4, 6, "before training: %s (--only %s prints one as it started)", strbuf_str(&names),
                   t->trained[0].name);
        out->failed = out->failed || names.failed;
        strbuf_finish(&names);
    }
    for (size_t k = 0; k < t->n_trained && !c->opts->brief; k++) {
        const TraceTrainGiven *g = &t->trained[k];
        size_t at = given_stage(c->tr, g->name);
        if (!c->opts->shown || at == SIZE_MAX || !c->opts->shown[at])
            continue;
        TraceStage s = render_train_before(c->tr, g);
        char shape[64];
        shape_format(&g->before->shape, shape, sizeof(shape));
        strbuf_putc(out, '\n');
        text_wrapf(c, out, 4, 6, "%s%s before training%s  %s (trained, it is the given %s below)", st->bold, g->name,
              st->reset, shape, g->name);
        Drawing draw = TEXT_TABLE_ONLY;
        text_values(c, out, &s, g->before, NULL, 4, &draw);
    }
}

static void header(const TextCtx *c, StrBuf *out) {
    const Trace *tr = c->tr;
    const TextStyle *st = &c->st;
    size_t before = out->len;
    text_wrapf(c, out, 0, 0, "%s%s%s", st->bold, tr->title, st->reset);
    // The underline as wide as the title's longest line.
    size_t underline = textwrap_block_width(out->data ? out->data + before : "");
    strbuf_repeat(out, "=", underline);
    strbuf_putc(out, '\n');
    if (tr->source)
        text_wrapf(c, out, 0, 2, "Source: %s", tr->source);
    char file_name[1024];  // a file's name from the folder (a course's lesson), as it may be shown
    text_wrapf(c, out, 0, 2, "Lesson: %s", safetext_show(file_name, sizeof(file_name), tr->file_name));
    // Givens left out by a choice of stages are still named, so that a formula reads.
    StrBuf hidden;
    strbuf_init(&hidden);
    for (size_t i = 0; i < tr->n_stages; i++)
        if (tr->stages[i].kind == STAGE_GIVEN && !stage_shown(c, i))
            strbuf_printf(&hidden, "%s%s", hidden.len ? ", " : "", tr->stages[i].name);
    if (hidden.len)
        text_wrapf(c, out, 0, 2, "Givens (not shown): %s", strbuf_str(&hidden));
    out->failed = out->failed || hidden.failed;
    strbuf_finish(&hidden);
    if (tr->intro) {
        strbuf_putc(out, '\n');
        textwrap_paragraph(out, tr->intro, 0, c->width);
    }
    if (tr->training)
        training(c, out);
}

size_t render_text_pages(const Trace *tr, const RenderOptions *opts, StrBuf *out, size_t *ends, size_t *stages) {
    static const RenderOptions defaults = {0};
    Notation notation = {0};
    TextCtx c = {.tr = tr, .opts = opts ? opts : &defaults, .st = {"", "", "", "", "", "", ""}, .notation = &notation};
    c.width = c.page_width = c.opts->width ? c.opts->width : RENDER_DEFAULT_WIDTH;
    if (c.opts->colour)
        c.st = (TextStyle){"\033[1m", "\033[2m", "\033[36m", "\033[32m", "\033[33m", "\033[31m", "\033[0m"};
    size_t n = 0;
    header(&c, out);
    if (ends)
        ends[n] = out->len;
    if (stages)
        stages[n] = SIZE_MAX;
    n++;
    for (size_t i = 0; i < tr->n_stages; i++) {
        if (!stage_shown(&c, i))
            continue;
        stage(&c, out, &tr->stages[i]);
        stage_claims(&c, out, i, 4);
        if (ends)
            ends[n] = out->len;
        if (stages)
            stages[n] = i;
        n++;
    }
    if (tr->outro) {
        strbuf_putc(out, '\n');
        textwrap_paragraph(out, tr->outro, 0, c.width);
    }
    document_summary(&c, out);
    claims_summary(&c, out);
    if (ends)
        ends[n] = out->len;
    if (stages)
        stages[n] = SIZE_MAX;
    return n + 1;
}

void render_text(const Trace *tr, const RenderOptions *opts, StrBuf *out) {
    render_text_pages(tr, opts, out, NULL, NULL);
}
