// pipeline: load, check, run and render one lesson.
#include "pipeline.h"

#include "backend.h"
#include "check.h"
#include "claim.h"
#include "lesson_diff.h"
#include "doccheck.h"
#include "files.h"
#include "format.h"
#include "lesson.h"
#include "lesson_download.h"
#include "lesson_outline.h"
#include "lint.h"
#include "narrate.h"
#include "plan.h"
#include "progress.h"
#include "quiz.h"
#include "render.h"
#include "run.h"
#include "save.h"
#include "schedule.h"
#include "trace.h"
#include "train.h"

#include <ctype.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>


// The status of a lesson that did not load: the loader always says why, out of memory included.
static int load_failed(const Diag *diag) {
    ASSERT(diag->status != STATUS_OK);
    return diag->status;
}

// The stage called name, or a usage error that starts with `option` ("--only") and suggests
// the closest stage name; `use` says how to ask for an intermediate ("explain").
static bool find_stage(const Plan *plan, const char *option, const char *use, const char *name, size_t *node,
                       Diag *diag) {
    if (plan_find_stage(plan, name, node))
        return true;
    diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "%s: the lesson has no stage called '%s'", option, name);
    const char *names[512];
    size_t n = 0;
    const char *same_expr = NULL;  // "K.T" is written out as the intermediate scores.1
    for (size_t i = 0; i < plan->n_nodes && n < 512; i++) {
        const PlanNode *stage = &plan->nodes[i];
        if (!stage->is_stage || !stage->name)
            continue;
        names[n++] = stage->name;
        if (!same_expr && stage->stage_kind == STAGE_INTERMEDIATE && stage->expr_text &&
            strcmp(stage->expr_text, name) == 0)
            same_expr = stage->name;
    }
    const char *closest = diag_closest(name, names, n);
    if (same_expr)
        diag_hint(diag, "'%s' is computed as the intermediate stage '%s': %s '%s'", name, same_expr, use, same_expr);
    else if (closest)
        diag_hint(diag, "did you mean '%s'?", closest);
    else
        diag_hint(diag, "stages are the givens, the steps, and intermediates such as weights.1");
    return false;
}

// The plan nodes --only, --from and --to choose (all of them when none is given).
static bool choose_stages(const Plan *plan, const PipelineOptions *opts, bool *chosen, Diag *diag) {
    for (size_t i = 0; i < plan->n_nodes; i++)
        chosen[i] = true;
    if (opts->only) {
        for (size_t i = 0; i < plan->n_nodes; i++)
            chosen[i] = false;
        for (const char *p = opts->only; *p;) {
            size_t len = strcspn(p, ",");
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)len, p);
            size_t node;
            if (len == 0 || len >= sizeof(name)) {
                diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--only '%s': name stages separated by commas",
                           opts->only);
                diag_hint(diag, "as in --only scores,weights");
                return false;
            }
            if (!find_stage(plan, "--only", "--only", name, &node, diag))
                return false;
            chosen[node] = true;
            p += len + (p[len] == ',');
        }
    }
    size_t from = 0, to = plan->n_nodes ? plan->n_nodes - 1 : 0;
    if (opts->from && !find_stage(plan, "--from", "--from", opts->from, &from, diag))
        return false;
    if (opts->to && !find_stage(plan, "--to", "--to", opts->to, &to, diag))
        return false;
    if (from > to) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--from '%s' comes after --to '%s' in the lesson",
                   opts->from, opts->to);
        diag_hint(diag, "swap them: --from %s --to %s", opts->to, opts->from);
        return false;
    }
    for (size_t i = 0; i < plan->n_nodes; i++)
        chosen[i] = chosen[i] && i >= from && i <= to;
    return true;
}

// "name[i, j]", "name row 0" or "name" -> the name and the indices; errors are usage errors
// (status 2) that quote `quoted`, the whole request.
static bool parse_request(const char *text, const char *quoted, char *name, size_t name_cap, ExplainSpec *out,
                          Diag *diag) {
    const char *bracket = strchr(text, '[');
    // "output_0 row 0": a row as a weighted sum, as a lesson's explain: row 0 asks.
    const char *row = strstr(text, " row ");
    if (row && (!bracket || row < bracket))
        bracket = NULL;
    size_t name_len = row ? (size_t)(row - text) : bracket ? (size_t)(bracket - text) : strlen(text);
    while (name_len && text[name_len - 1] == ' ')
        name_len--;
    if (name_len == 0 || name_len >= name_cap) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--explain '%s': name a stage, as in scores[0,1]", quoted);
        return false;
    }
    memcpy(name, text, name_len);
    name[name_len] = '\0';
    ExplainSpec spec = {.kind = EXPLAIN_ALL};
    if (row) {
        char *end;
        errno = 0;
        long v = strtol(row + 5, &end, 10);
        if (end == row + 5 || *end != '\0' || errno) {
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--explain '%s': write a row as %s row 0", quoted,
                       name);
            return false;
        }
        spec.kind = EXPLAIN_ROW;
        spec.n_index = 1;
        spec.index[0] = v;
    }
    if (bracket) {
        spec.kind = EXPLAIN_ELEMENT;
        const char *p = bracket + 1;
        for (;;) {
            while (*p == ' ')
                p++;
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (end == p || errno || spec.n_index == TENSOR_MAX_RANK) {
                diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                           "--explain '%s': indices are whole numbers, as in %s[0, 1]", quoted, name);
                return false;
            }
            spec.index[spec.n_index++] = v;
            p = end;
            while (*p == ' ')
                p++;
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == ']' && p[1] == '\0')
                break;
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--explain '%s': expected ',' or a final ']'",
                       quoted);
            return false;
        }
    }
    *out = spec;
    return true;
}

// "name[i, j]" -> the stage and its indices; errors are usage errors (status 2).
static bool parse_explain(const Plan *plan, const char *text, ExplainTarget *out, Diag *diag) {
    char name[256];
    ExplainSpec spec;
    if (!parse_request(text, text, name, sizeof(name), &spec, diag))
        return false;
    size_t node;
    char option[320];
    snprintf(option, sizeof(option), "--explain '%s'", text);
    if (!find_stage(plan, option, "explain", name, &node, diag))
        return false;
    char message[512], hint[512];
    if (!plan_resolve_explain(plan, node, &spec, out, message, sizeof(message), hint, sizeof(hint))) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--explain '%s': %s", text, message);
        // The checker's hints speak the lesson's explain: syntax; say it as the command line does.
        size_t size = 0;
        shape_size(&plan->nodes[node].shape, &size);
        if (spec.kind == EXPLAIN_ALL && plan->nodes[node].kind != PLAN_GIVEN && size > PLAN_EXPLAIN_ALL_MAX)
            diag_hint(diag, "explain one element, as %s[0,1], or one row, as '%s row 0'", name, name);
        else if (hint[0])
            diag_hint(diag, "%s", hint);
        return false;
    }
    return true;
}

// "W_Q[0, 1]@3" -> one trained weight's update at training step 3 (train_explain.h).
static bool parse_update(const Lesson *lesson, const Plan *plan, const char *text, TrainExplain *out, Diag *diag) {
    const char *at = strrchr(text, '@');
    char request[320], name[256];
    ExplainSpec spec;
    snprintf(request, sizeof(request), "%.*s", (int)(at - text), text);
    if (!parse_request(request, text, name, sizeof(name), &spec, diag))
        return false;
    long step;
    char *end;
    errno = 0;
    step = strtol(at + 1, &end, 10);
    if (!isdigit((unsigned char)at[1]) || *end != '\0' || errno) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "--explain '%s': after '@' comes a training step, a whole number", text);
        diag_hint(diag, "as in %s[0, 1]@3: that weight's update at training step 3", name);
        return false;
    }
    return train_explain_resolve(lesson, plan, text, name, &spec, step, out, diag);
}

// Refuse, before it runs, a lesson that would hold more values at once than opts->memory
// allows, at the node where it would first pass it. keep: as run_plan takes it; base: values
// held besides (the first lesson of --diff); *end: what the run holds at its end.
static const char *const memory_whose[] = {
    [PIPELINE_MEMORY_MACHINE] = "this machine has",
    [PIPELINE_MEMORY_CONTAINER] = "this container may use",
    [PIPELINE_MEMORY_SETTING] = "TRACER_MEMORY allows",
};

// Check the lesson within PIPELINE_CHECK_SHARE of the memory a run may use.
static Plan *check_within_memory(const Lesson *lesson, const PipelineOptions *opts, Diag *diag) {
    if (!(opts->memory > 0))
        return check_lesson(lesson, diag);
    char share[64], have[64], limit[160];
    double bytes = opts->memory * PIPELINE_CHECK_SHARE;
    format_bytes(bytes > PIPELINE_CHECK_FLOOR ? bytes : PIPELINE_CHECK_FLOOR, share, sizeof(share));
    format_bytes(opts->memory, have, sizeof(have));
    if (bytes > PIPELINE_CHECK_FLOOR)
        snprintf(limit, sizeof(limit), "%s, %.0f%% of the %s %s", share, PIPELINE_CHECK_SHARE * 100, have,
                 memory_whose[opts->memory_from]);
    else
        snprintf(limit, sizeof(limit), "%s, the least a check is given", share);
    bytes = bytes > PIPELINE_CHECK_FLOOR ? bytes : PIPELINE_CHECK_FLOOR;
    PlanMemory memory = {
        .bytes = (size_t)bytes,  // a share of at most 2^64 bytes
        .limit = limit,
        .raise = opts->memory_from == PIPELINE_MEMORY_SETTING ? "; or raise TRACER_MEMORY" : "",
    };
    return check_lesson_within(lesson, &memory, diag);
}

static bool fits_memory(const Plan *plan, const bool *keep, const PipelineOptions *opts, size_t base, size_t *end,
                        Diag *diag) {
    // main's memory is at most 2^64 bytes, so the room for values fits a size_t.
    size_t limit = opts->memory > 0 ? (size_t)(opts->memory * PIPELINE_MEMORY_SHARE / sizeof(double)) : SIZE_MAX;
    PlanHeld held;
    if (!plan_held_values(plan, keep, base, limit, &held))
        return diag_no_memory(diag);
    *end = held.end;
    if (held.past == SIZE_MAX)
        return true;
    char need[64], have[64];
    format_bytes((double)held.past_held * sizeof(double), need, sizeof(need));
    format_bytes(opts->memory, have, sizeof(have));
    const PlanNode *n = &plan->nodes[held.past];
    char message[256];
    snprintf(message, sizeof(message), "%s %s would hold %s of values at once, more than %.0f%% of the %s %s",
             n->kind == PLAN_GIVEN ? "with this given" : "at this step", base ? "the two lessons" : "the lesson", need,
             PIPELINE_MEMORY_SHARE * 100, have, memory_whose[opts->memory_from]);
    if (n->kind == PLAN_GIVEN)
        diag_error(diag, STATUS_LESSON_ERROR, &plan->lesson->doc->source, n->given->key->line, n->given->key->col,
                   strlen(n->given->name), "%s", message);
    else
        plan_error_at(diag, plan->lesson, n->step, n->expr->start, n->expr->end - n->expr->start, "%s", message);
    // only a run that frees values holds less when it prints less (the reference keeps them all)
    const char *less = !schedule_installed() ? ""
                       : keep                ? "; --only or --brief print less, and so hold less at once"
                       : opts->format != OUTPUT_TEXT || opts->save_dir
                           ? "; the text trace without --save frees the values it does not print"
                           : "";
    diag_hint(diag, "use smaller shapes (a smaller n, or smaller givens)%s%s", less,
              opts->memory_from == PIPELINE_MEMORY_SETTING ? "; or raise TRACER_MEMORY" : "");
    return false;
}

// ---------------------------------------------------------------- the phases of a run
//
// A lesson, once loaded, goes through the phases of `phases` below, in that order; the first
// that fails stops it with its located error in diag. What each phase makes, the next ones
// read from the LessonRun they share.

typedef struct LessonRun {
    Lesson *lesson;
    const PipelineOptions *opts;
    bool choose;          // --only, --from and --to choose stages (the diff does not)
    bool free_unprinted;  // the values nothing reads after the run are freed during it
    Diag *diag;
    Narrator *narrator;
    Plan *plan;
    ExplainTarget *targets;  // the command line's --explain of the trace's values, resolved
    size_t n_targets;
    TrainExplain *updates;   // the command line's --explain of a training update (W[i, j]@s)
    size_t n_updates;
    int digits;
    bool *chosen;   // per node (and one more): the stages --only, --from and --to keep
    bool *keep;     // per node (and one more): values read after the run; NULL: keep every one
    size_t *held;   // values held besides, before the run and after it
    TraceTraining *training;  // what train: did, until the trace takes it
    Trace *trace;
} LessonRun;

static bool no_memory(LessonRun *r) {
    return diag_no_memory(r->diag);
}

static bool prepare_narration(LessonRun *r) {
    return (r->narrator = narrate_prepare(r->lesson, r->diag)) != NULL;
}

static bool check_names_and_shapes(LessonRun *r) {
    return (r->plan = check_within_memory(r->lesson, r->opts, r->diag)) != NULL;
}

static bool check_narration(LessonRun *r) {
    return narrate_check(r->narrator, r->plan, r->diag);
}

static bool warn_of_likely_slips(LessonRun *r) {
    lint_plan(r->plan, r->diag);
    return true;
}

// An --explain with '@' asks for a training update, which training writes out as it goes.
static bool resolve_update_requests(LessonRun *r) {
    const PipelineOptions *opts = r->opts;
    if (!opts->n_explain)
        return true;
    if (!(r->updates = util_calloc(opts->n_explain, sizeof(TrainExplain))))
        return no_memory(r);
    for (size_t i = 0; i < opts->n_explain; i++) {
        if (!strchr(opts->explain[i], '@'))
            continue;
        if (!parse_update(r->lesson, r->plan, opts->explain[i], &r->updates[r->n_updates], r->diag))
            return false;
        r->updates[r->n_updates++].digits = opts->digits;  // --digits when given; else in full
    }
    return true;
}

// The lessons whose givens a given's trained: takes train first (or read their training back
// from the cache), and those givens then hold the trained values.
static bool train_the_models(LessonRun *r) {
    Lesson *lesson = r->lesson;
    for (size_t i = 0; i < lesson->n_models; i++) {
        Lesson *m = lesson->models[i];
        if (!m->train)
            continue;
        Plan *plan = check_within_memory(m, r->opts, r->diag);
        TraceTraining *training = plan ? train_lesson(m, plan, NULL, 0, r->opts->train_cache, r->diag) : NULL;
        plan_destroy(plan);
        if (!training)
            return false;
        trace_training_destroy(training);
    }
    for (size_t i = 0; i < lesson->n_givens; i++) {
        LessonGiven *g = &lesson->givens[i];
        for (size_t k = 0; g->model && k < g->model->n_givens; k++) {
            const LessonGiven *src = &g->model->givens[k];
            if (strcmp(src->name, g->name) == 0 && src->init == GIVEN_VALUES) {
                g->init = GIVEN_VALUES;
                g->values = src->values;
            }
        }
    }
    return true;
}

// A lesson with train: trains first; its trained givens then hold their trained values.
static bool train_the_model(LessonRun *r) {
    if (!r->lesson->train)
        return true;
    return (r->training = train_lesson(r->lesson, r->plan, r->updates, r->n_updates, r->opts->train_cache, r->diag)) !=
           NULL;
}

static bool resolve_explain_requests(LessonRun *r) {
    const PipelineOptions *opts = r->opts;
    r->digits = opts->digits >= 0 ? opts->digits : r->lesson->digits >= 0 ? r->lesson->digits : LESSON_DEFAULT_DIGITS;
    if (!opts->n_explain)
        return true;
    if (!(r->targets = util_calloc(opts->n_explain, sizeof(ExplainTarget))))
        return no_memory(r);
    for (size_t i = 0; i < opts->n_explain; i++)
        if (!strchr(opts->explain[i], '@') &&
            !parse_explain(r->plan, opts->explain[i], &r->targets[r->n_targets++], r->diag))
            return false;
    return true;
}

static bool choose_printed_stages(LessonRun *r) {
    if (!r->choose)
        return true;
    if (!(r->chosen = util_calloc(r->plan->n_nodes + 1, sizeof(bool))))
        return no_memory(r);
    return choose_stages(r->plan, r->opts, r->chosen, r->diag);
}

// What each reader of the trace reads once the plan has run, marking the nodes whose values it
// reads: the text trace the caller prints, and the phases after the run (the table below).
static void text_reads(const LessonRun *r, bool *keep) {
    RenderOptions ro = {.brief = r->opts->brief};
    for (size_t i = 0; i < r->plan->n_nodes; i++) {
        const PlanNode *n = &r->plan->nodes[i];
        keep[i] = keep[i] || (n->is_stage && render_text_prints_values(&ro, n->stage_kind, r->chosen[i]));
    }
}

static void document_reads(const LessonRun *r, bool *keep) {
    doccheck_needs(r->plan, keep);
}

static void claims_read(const LessonRun *r, bool *keep) {
    claim_needs(r->plan, keep);
}

static void narration_reads(const LessonRun *r, bool *keep) {
    narrate_needs(r->narrator, r->plan, keep);
}

static bool refuse_what_does_not_fit(LessonRun *r) {
    size_t end;
    if (!fits_memory(r->plan, r->keep, r->opts, *r->held, &end, r->diag))
        return false;
    *r->held = end;
    return true;
}

static bool run_the_plan(LessonRun *r) {
    r->trace = run_plan(r->plan, r->digits, r->targets, r->n_targets, r->keep, r->diag);
    if (r->trace) {
        r->trace->training = r->training;
        r->training = NULL;
    }
    return r->trace != NULL;
}

static bool compare_with_the_document(LessonRun *r) {
    return doccheck_trace(r->plan, r->trace, r->diag);
}

static bool judge_the_claims(LessonRun *r) {
    return claim_judge(r->plan, r->trace, r->diag);
}

static bool write_the_narration(LessonRun *r) {
    return narrate_apply(r->narrator, r->plan, r->trace, r->diag);
}

static bool keep_what_is_read_later(LessonRun *r);

typedef struct Phase {
    bool (*run)(LessonRun *r);  // false: stop, with diag saying why
    // What the phase reads of the trace once the plan has run (NULL: nothing); every value it
    // reads is kept to the end, all others may be freed once their last reader has run.
    void (*reads)(const LessonRun *r, bool *keep);
} Phase;

static const Phase phases[] = {
    {prepare_narration, NULL},
    {check_names_and_shapes, NULL},
    {check_narration, NULL},
    {warn_of_likely_slips, NULL},
    {resolve_update_requests, NULL},
    {train_the_models, NULL},
    {train_the_model, NULL},
    {resolve_explain_requests, NULL},
    {choose_printed_stages, NULL},
    {keep_what_is_read_later, NULL},
    {refuse_what_does_not_fit, NULL},
    {run_the_plan, NULL},
    {compare_with_the_document, document_reads},
    {judge_the_claims, claims_read},
    {write_the_narration, narration_reads},
    // then the caller prints the trace: text_reads
};

// Only a run that frees values (the fast layer's schedule, schedule.h) needs to know what is
// read later; the reference keeps every value, and its memory is counted so.
static bool keep_what_is_read_later(LessonRun *r) {
    if (!r->choose || !r->free_unprinted || !schedule_installed())
        return true;
    if (!(r->keep = util_calloc(r->plan->n_nodes + 1, sizeof(bool))))
        return no_memory(r);
    text_reads(r, r->keep);
    for (size_t p = 0; p < ARRAY_LEN(phases); p++)
        if (phases[p].reads)
            phases[p].reads(r, r->keep);
    return true;
}

// Check and run a lesson (with the command line's explain requests) into *plan and *trace,
// its narration written with the values it quotes: every phase in order. With chosen (the
// diff passes NULL), it receives a flag per node (and one more): the stages --only, --from
// and --to keep. With free_unprinted, the values of what the text trace does not print are
// freed once nothing else reads them; otherwise every value is kept. *held: the values held
// besides, before (so that the lesson is refused if it does not fit beside them) and after.
static bool trace_lesson(Lesson *lesson, const PipelineOptions *opts, bool free_unprinted, Plan **plan,
                         Trace **trace, bool **chosen, size_t *held, Diag *diag) {
    LessonRun r = {.lesson = lesson, .opts = opts, .choose = chosen != NULL, .free_unprinted = free_unprinted,
                   .diag = diag, .held = held};
    bool ok = true;
    for (size_t p = 0; ok && p < ARRAY_LEN(phases); p++)
        ok = phases[p].run(&r);
    *plan = r.plan;
    *trace = r.trace;
    if (chosen)
        *chosen = r.chosen;
    util_free(r.keep);
    util_free(r.targets);
    util_free(r.updates);
    trace_training_destroy(r.training);
    narrate_destroy(r.narrator);
    return ok;
}

// The text trace in pages, each named by the stage it shows (copied: the trace goes first).
static bool paginate(const Trace *trace, const RenderOptions *ro, StrBuf *out, Pages *pages) {
    size_t room = trace->n_stages + 2;
    size_t *stages = NULL;
    if (!(pages->arena = arena_create()) || !(pages->ends = arena_array(pages->arena, room, sizeof(size_t))) ||
        !(pages->number = arena_array(pages->arena, room, sizeof(char *))) ||
        !(pages->name = arena_array(pages->arena, room, sizeof(char *))) ||
        !(stages = arena_array(pages->arena, room, sizeof(size_t))))
        return false;
    pages->n = render_text_pages(trace, ro, out, pages->ends, stages);
    for (size_t k = 0; k < pages->n; k++) {
        if (stages[k] == SIZE_MAX)
            continue;
        const TraceStage *s = &trace->stages[stages[k]];
        if (!(pages->number[k] = arena_strdup(pages->arena, s->number)) ||
            !(pages->name[k] = arena_strdup(pages->arena, s->name)))
            return false;
    }
    for (size_t i = 0; i < trace->n_stages; i++)
        pages->steps += trace->stages[i].kind == STAGE_STEP;
    return true;
}

void pipeline_pages_finish(Pages *pages) {
    arena_destroy(pages->arena);
    *pages = (Pages){0};
}

static int run_lesson(Lesson *lesson, const PipelineOptions *opts, StrBuf *out, Pages *pages, Diag *diag) {
    int status = STATUS_OK;
    Plan *plan = NULL;
    Trace *trace = NULL;
    bool *chosen = NULL, *shown = NULL;
    StrBuf text;
    strbuf_init(&text);
    backend_set_threads(opts->threads);
    // JSON, the web page and --save write every stage: only the text trace leaves some out.
    bool free_unprinted = opts->format == OUTPUT_TEXT && !opts->save_dir && !opts->keep_every_stage;
    size_t held = 0;
    if (!trace_lesson(lesson, opts, free_unprinted, &plan, &trace, &chosen, &held, diag))
        goto done;
    bool choosing = opts->only || opts->from || opts->to;
    if (opts->claims_failed)
        *opts->claims_failed = trace->n_claims_failed;
    // The files first: when they cannot be written, nothing is printed either.
    if (opts->save_dir && save_trace(trace, opts->save_dir, diag) != STATUS_OK)
        goto done;
    // With a sink the trace streams out in constant memory; without one it is rendered apart
    // first, so that running out of memory half-way leaves out untouched.
    StrBuf *dst = out->sink ? out : &text;
    if (choosing && opts->format != OUTPUT_HTML) {
        shown = util_calloc(trace->n_stages + 1, sizeof(bool));
        if (!shown) {
            diag_out_of_memory(diag);
            goto done;
        }
        for (size_t i = 0; i < trace->n_stages; i++)
            shown[i] = chosen[trace->stages[i].node];
    }
    if (opts->format == OUTPUT_JSON) {
        render_json(trace, shown, dst);
    } else if (opts->format == OUTPUT_HTML) {
        render_html(trace, dst);
    } else {
        RenderOptions ro = {.colour = opts->colour,
                            .truecolour = opts->truecolour,
                            .width = opts->width,
                            .heatmap = opts->heatmap,
                            .brief = opts->brief,
                            .shown = shown};
        if (pages) {
            if (!paginate(trace, &ro, dst, pages)) {
                diag_out_of_memory(diag);
                goto done;
            }
        } else {
            render_text(trace, &ro, dst);
        }
    }
    if (dst == &text && !text.failed)
        strbuf_append(out, strbuf_str(&text), text.len);
    strbuf_flush(out);
    if (out->failed && out->sink_errno)
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot write the trace: %s", strerror(out->sink_errno));
    else if (out->failed || text.failed)
        diag_out_of_memory(diag);
done:
    status = diag->status;
    if (status != STATUS_OK && pages)
        pipeline_pages_finish(pages);
    strbuf_finish(&text);
    util_free(shown);
    util_free(chosen);
    trace_destroy(trace);
    plan_destroy(plan);
    lesson_destroy(lesson);
    return status;
}

// The lesson at path, with the command line's text in place of its own (--text).
static Lesson *load_lesson(const char *path, const PipelineOptions *opts, Diag *diag) {
    Lesson *lesson = lesson_load_file(path, diag);
    if (lesson && opts->text && lesson_replace_text(lesson, opts->text, diag) != STATUS_OK) {
        lesson_destroy(lesson);
        return NULL;
    }
    return lesson;
}

int pipeline_quiz_file(const char *path, const PipelineOptions *opts, uint64_t seed, Quiz **quiz, Diag *diag) {
    *quiz = NULL;
    Plan *plan = NULL;
    Trace *trace = NULL;
    ExplainTarget *targets = NULL;
    Lesson *lesson = load_lesson(path, opts, diag);
    if (!lesson)
        return load_failed(diag);
    backend_set_threads(opts->threads);
    if (!(plan = check_within_memory(lesson, opts, diag)))
        goto done;
    // Room for every node, and for each element of every row a quiz: mark asks.
    size_t cap = plan->n_nodes;
    for (size_t i = 0; i < plan->n_quizzes; i++) {
        const Shape *s = &plan->nodes[plan->quizzes[i].node].shape;
        cap += s->rank ? s->dim[s->rank - 1] : 1;
    }
    bool marked;
    size_t n = SIZE_MAX;
    if ((targets = util_calloc(cap, sizeof(ExplainTarget))))  // cap >= 1: a lesson has steps
        n = quiz_targets(plan, seed, targets, cap, &marked);
    if (n == SIZE_MAX) {
        diag_out_of_memory(diag);
        goto done;
    }
    // Only the quiz's own requests: each stage's work is then the work of its questions.
    plan->n_explains = 0;
    int digits = opts->digits >= 0 ? opts->digits : lesson->digits >= 0 ? lesson->digits : LESSON_DEFAULT_DIGITS;
    size_t held = 0;
    if (fits_memory(plan, NULL, opts, 0, &held, diag) && (trace = run_plan(plan, digits, targets, n, NULL, diag)))
        *quiz = quiz_create(plan, trace, targets, n, marked, diag);
done:;
    int status = diag->status;
    util_free(targets);
    trace_destroy(trace);
    plan_destroy(plan);
    lesson_destroy(lesson);
    return status;
}

int pipeline_trace_lesson(Lesson *lesson, const PipelineOptions *opts, Plan **plan, Trace **trace, Diag *diag) {
    backend_set_threads(opts->threads);
    size_t held = 0;
    if (!trace_lesson(lesson, opts, false, plan, trace, NULL, &held, diag)) {
        trace_destroy(*trace);
        plan_destroy(*plan);
        *plan = NULL;
        *trace = NULL;
    }
    return diag->status;
}

int pipeline_run_file(const char *path, const PipelineOptions *opts, StrBuf *out, Diag *diag) {
    Lesson *lesson = load_lesson(path, opts, diag);
    if (!lesson)
        return load_failed(diag);
    return run_lesson(lesson, opts, out, NULL, diag);
}

int pipeline_run_file_pages(const char *path, const PipelineOptions *opts, StrBuf *out, Pages *pages, Diag *diag) {
    *pages = (Pages){0};
    Lesson *lesson = load_lesson(path, opts, diag);
    if (!lesson)
        return load_failed(diag);
    return run_lesson(lesson, opts, out, pages, diag);
}

int pipeline_run_bytes(const char *path, const char *bytes, size_t len, const PipelineOptions *opts,
                       StrBuf *out, Diag *diag) {
    Lesson *lesson = lesson_create(path, bytes, len, diag);
    if (!lesson)
        return load_failed(diag);
    return run_lesson(lesson, opts, out, NULL, diag);
}

int pipeline_diff_files(const char *original, const char *edited, const PipelineOptions *opts, bool *same,
                        StrBuf *out, Diag *diag) {
    const char *paths[2] = {original, edited};
    Lesson *lessons[2] = {NULL, NULL};
    Plan *plans[2] = {NULL, NULL};
    Trace *traces[2] = {NULL, NULL};
    backend_set_threads(opts->threads);
    size_t held = 0;  // the first lesson's values stay while the second one runs
    static const char *const parts[2] = {"original", "edited"};  // what a long training's progress says
    for (size_t i = 0; i < 2; i++) {
        progress_part(parts[i]);
        lessons[i] = load_lesson(paths[i], opts, diag);
        if (!lessons[i]) {
            ASSERT(diag->status != STATUS_OK);  // the loader says why
            goto done;
        }
        if (!trace_lesson(lessons[i], opts, false, &plans[i], &traces[i], NULL, &held, diag))
            goto done;
    }
    // The edited lesson's digits, unless the command line says otherwise.
    int digits = traces[1]->digits;
    LessonDiffSide sides[2];
    for (size_t i = 0; i < 2; i++)
        sides[i] = (LessonDiffSide){.trace = traces[i], .yaml = lessons[i]->doc->root, .name = paths[i]};
    *same = lesson_diff_traces(sides, digits, opts->width ? opts->width : RENDER_DEFAULT_WIDTH, opts->colour, out);
    if (out->failed)
        diag_out_of_memory(diag);
done:
    progress_part(NULL);
    for (size_t i = 0; i < 2; i++) {
        trace_destroy(traces[i]);
        plan_destroy(plans[i]);
        lesson_destroy(lessons[i]);
    }
    return diag->status;
}

// The columns --list's lines fit in: a terminal of 80, one left free.
#define LIST_WIDTH 79

// Memory ran out after diag had its first error: the error now is that.
static int out_of_memory_instead(Diag *diag) {
    diag_init(diag);
    return diag_out_of_memory(diag);
}

// --list of a lesson refused only because the files it downloads are not there: its givens and
// steps as its YAML writes them (lesson_outline.h), under a line that says why there are no
// shapes. Any other problem of the file is left to the loader's error, kept in diag.
static int list_without_files(const char *path, StrBuf *out, Diag *diag) {
    char *bytes = NULL;
    size_t len = 0;
    int err = files_read(path, 0, YAMLDOC_MAX_BYTES, &bytes, &len);
    if (err == ENOMEM)
        return out_of_memory_instead(diag);
    if (err || len > YAMLDOC_MAX_BYTES) {
        util_free(bytes);
        return load_failed(diag);
    }
    Diag quiet;
    diag_init(&quiet);
    YamlDoc *doc = yamldoc_create(path, bytes, len, &quiet);
    util_free(bytes);
    const char *files = strstr(diag->message, "': ");
    StrBuf list;
    strbuf_init(&list);
    bool listed = doc && files && lesson_outline(doc, &list);
    bool no_memory = quiet.out_of_memory || (doc && files && !listed);
    yamldoc_destroy(doc);
    if (listed) {
        strbuf_printf(out, "(its shapes come from files that are not here:\n %s;\n its givens and steps, as "
                           "the lesson writes them:)\n%s",
                      files + 3, strbuf_str(&list));
        diag_init(diag);
    }
    no_memory |= list.failed || out->failed;
    strbuf_finish(&list);
    if (no_memory)
        return out_of_memory_instead(diag);
    return listed ? STATUS_OK : load_failed(diag);
}

int pipeline_list_stages(const char *path, StrBuf *out, Diag *diag) {
    Lesson *lesson = lesson_load_file(path, diag);
    if (!lesson && lesson_download_missing(diag))
        return list_without_files(path, out, diag);
    if (!lesson)
        return load_failed(diag);
    Plan *plan = check_lesson(lesson, diag);
    if (plan) {
        size_t name_width = 0, shape_width = 0;
        char shape[64];
        for (size_t i = 0; i < plan->n_nodes; i++) {
            const PlanNode *node = &plan->nodes[i];
            if (!node->is_stage || !node->name)
                continue;
            shape_format(&node->shape, shape, sizeof(shape));
            name_width = strlen(node->name) > name_width ? strlen(node->name) : name_width;
            shape_width = strlen(shape) > shape_width ? strlen(shape) : shape_width;
        }
        for (size_t i = 0; i < plan->n_nodes; i++) {
            const PlanNode *node = &plan->nodes[i];
            if (!node->is_stage || !node->name)
                continue;
            shape_format(&node->shape, shape, sizeof(shape));
            // An expression longer than the rest of 79 columns is cut, "..." marking the cut.
            const char *expr = node->expr_text ? node->expr_text : "given";
            size_t room = name_width + shape_width + 4 < LIST_WIDTH ? LIST_WIDTH - name_width - shape_width - 4 : 0;
            bool cut = strlen(expr) > room && room > 20;
            strbuf_printf(out, "%-*s  %-*s  %.*s%s\n", (int)name_width, node->name, (int)shape_width, shape,
                          cut ? (int)(room - 3) : (int)strlen(expr), expr, cut ? "..." : "");
        }
        if (out->failed)
            diag_out_of_memory(diag);
    }
    int status = diag->status;
    plan_destroy(plan);
    lesson_destroy(lesson);
    return status;
}
