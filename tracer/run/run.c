// run: a Plan evaluated node by node into a Trace. The kernel computes (through eval and the
// op table); this file keeps the values and collects each stage's notes and shown work.
#include "run.h"

#include <math.h>
#include <string.h>

#include "eval.h"
#include "format.h"
#include "gradcheck.h"
#include "ieee.h"
#include "progress.h"
#include "schedule.h"

typedef struct Runner {
    const Plan *plan;
    Trace *trace;
    Diag *diag;
    // Notes and lines of shown work of the current stage.
    OpNotes notes;
    const char **work;
    size_t n_work, cap_work;
    const ExplainTarget *extra;
    size_t n_extra;
    size_t check_budget;  // what the finite-difference checks of gradients may still do
    IeeeWatch ieee;  // where the first nan was made, and whether its spreading was told
    // The installed schedule (schedule.h) and its state for this run; NULL: the reference,
    // every node computed into a tensor of its own and every value kept.
    const Schedule *schedule;
    ScheduleRun *scheduled;
    Labels labels[TENSOR_MAX_RANK];  // the current stage's: the check's, or what its values say
    // Every node's labels as the run found them (each TENSOR_MAX_RANK axes), and whether they
    // are other than the check's: values upstream chose them (topk's picks, looked-up tokens),
    // and the operations after follow.
    Labels (*node_labels)[TENSOR_MAX_RANK];
    bool *relabelled;
    Labels ids_of, *node_ids;  // the current stage's tokens of ids, and every node's
} Runner;

// The chain rule for one element of a gradient stage: each use's share at that element, with
// the op's own arithmetic where it has one, then their sum.
static void explain_gradient_element(Runner *run, const PlanNode *n, Tensor *const *shares, size_t flat,
                                     OpExplain *e) {
    const Plan *plan = run->plan;
    Tensor *const *values = run->trace->tensors;
    size_t idx[TENSOR_MAX_RANK];
    shape_unflatten(&n->shape, flat, idx);
    StrBuf total;
    strbuf_init(&total);
    for (size_t k = 0; k < n->n_args; k++) {
        const PlanNode *u = &plan->nodes[n->grad_use[k]];
        const char *names[OP_MAX_ARGS];
        const Tensor *in[OP_MAX_ARGS];
        plan_operands(u, values, in);
        for (size_t a = 0; a < u->n_args; a++)
            names[a] = plan->nodes[u->args[a]].display;
        const PlanNode *g = &plan->nodes[n->args[k]];
        StrBuf sb;
        strbuf_init(&sb);
        // one use: the line is the gradient itself; several: one line per share, then the sum
        if (n->n_args == 1)
            op_work_ref(&sb, n->name, idx, n->shape.rank);
        else
            strbuf_printf(&sb, "through %s: ", u->display ? u->display : "?");
        OpGradWork w = {.op = u->op, .input = n->grad_use_input[k], .dout = values[n->args[k]],
                        .dout_name = g->is_stage ? g->name : "1", .out = values[n->grad_use[k]], .out_name = u->name,
                        .in = in, .in_names = names, .n_in = u->n_args, .attrs = &u->attrs, .share = shares[k],
                        .flat = flat, .digits = run->trace->digits, .sb = &sb};
        memcpy(w.index, idx, sizeof(idx));
        if (n->n_args > 1) {
            strbuf_printf(&sb, "(%s)", n->grad_terms[k]);
            op_work_ref(&sb, "", idx, n->shape.rank);
        }
        strbuf_puts(&sb, " = ");
        if (u->op->explain_grad) {
            u->op->explain_grad(&w);
        } else {
            if (n->n_args == 1) {
                strbuf_printf(&sb, "(%s)", n->grad_terms[k]);
                op_work_ref(&sb, "", idx, n->shape.rank);
                strbuf_puts(&sb, " = ");
            }
            op_grad_num(&w, shares[k]->data[flat]);
        }
        op_work_line(e, &sb);
        if (n->n_args > 1) {
            char num[FORMAT_NUMBER_CAP];
            format_number(shares[k]->data[flat], run->trace->digits, num, sizeof(num));
            strbuf_printf(&total, "%s%s", k ? " + " : "", num);
        }
    }
    if (n->n_args > 1) {
        StrBuf sb;
        strbuf_init(&sb);
        op_work_ref(&sb, n->name, idx, n->shape.rank);
        char num[FORMAT_NUMBER_CAP];
        format_number(values[n - plan->nodes]->data[flat], run->trace->digits, num, sizeof(num));
        strbuf_printf(&sb, " = %s = %s", strbuf_str(&total), num);
        sb.failed = sb.failed || total.failed;  // the sum cut short would not add up
        op_work_line(e, &sb);
    }
    strbuf_finish(&total);
}

// The work for one request on a gradient stage: every element asked for.
static bool explain_gradient(Runner *run, const PlanNode *n, const Tensor *out, const ExplainTarget *t) {
    const Plan *plan = run->plan;
    Tensor *const *values = run->trace->tensors;
    Tensor **shares = util_calloc(n->n_args, sizeof(Tensor *));
    bool ok = shares != NULL;
    // each use's share alone, as the backward pass added them up
    for (size_t k = 0; ok && k < n->n_args; k++) {
        const PlanNode *u = &plan->nodes[n->grad_use[k]];
        const Tensor *in[OP_MAX_ARGS];
        plan_operands(u, values, in);
        shares[k] = tensor_create(&n->shape);
        OpGrad g = {.op = u->op, .din = shares[k], .input = n->grad_use_input[k], .dout = values[n->args[k]],
                    .out = values[n->grad_use[k]], .in = in, .n_in = u->n_args, .attrs = &u->attrs};
        ok = shares[k] && u->op->grad(&g);
    }
    OpExplain e = {.digits = run->trace->digits, .arena = run->trace->arena, .lines = run->work,
                   .n_lines = run->n_work, .cap_lines = run->cap_work};
    size_t rank = out->shape.rank, d = rank ? out->shape.dim[rank - 1] : 1;
    size_t first = 0, count = out->size;
    if (t->kind == EXPLAIN_ELEMENT) {
        first = shape_flatten(&out->shape, t->index);
        count = 1;
    } else if (t->kind == EXPLAIN_ROW) {
        size_t idx[TENSOR_MAX_RANK] = {0};
        memcpy(idx, t->index, t->n_index * sizeof(size_t));
        first = rank ? shape_flatten(&out->shape, idx) / d * d : 0;
        count = d;
    }
    for (size_t f = first; ok && f < first + count; f++)
        explain_gradient_element(run, n, shares, f, &e);
    for (size_t k = 0; shares && k < n->n_args; k++)
        tensor_destroy(shares[k]);
    util_free(shares);
    run->work = e.lines;
    run->n_work = e.n_lines;
    run->cap_work = e.cap_lines;
    return ok && !e.failed;
}

// The work for one request: an element, a row (the op's row form, or each element), or all.
// False when memory runs out.
static bool explain_target(Runner *run, const PlanNode *n, const Tensor *out, const Tensor *const *in,
                           const ExplainTarget *t) {
    if (n->kind == PLAN_GRAD)
        return explain_gradient(run, n, out, t);
    if (n->kind != PLAN_OP)
        return true;  // a step that is only a number: nothing was computed
    const char *names[OP_MAX_ARGS];
    for (size_t k = 0; k < n->n_args; k++)
        names[k] = run->plan->nodes[n->args[k]].display;
    OpExplain e = {.op = n->op, .out = out, .in = in, .n_in = n->n_args, .attrs = &n->attrs,
                   .all = t->kind == EXPLAIN_ALL, .out_name = n->name, .in_names = names,
                   .digits = run->trace->digits, .arena = run->trace->arena,
                   .lines = run->work, .n_lines = run->n_work, .cap_lines = run->cap_work};
    size_t rank = out->shape.rank;
    size_t d = rank ? out->shape.dim[rank - 1] : 1;
    size_t first_row = 0, rows = 1;
    if (t->kind == EXPLAIN_ELEMENT) {
        memcpy(e.index, t->index, sizeof(e.index));
        e.flat = shape_flatten(&out->shape, e.index);
        n->op->explain(&e);
    } else {
        if (t->kind == EXPLAIN_ROW) {
            size_t idx[TENSOR_MAX_RANK] = {0};
            memcpy(idx, t->index, t->n_index * sizeof(size_t));
            first_row = rank ? shape_flatten(&out->shape, idx) / d : 0;
        } else {
            rows = d ? out->size / d : 0;
        }
        for (size_t r = first_row; r < first_row + rows; r++) {
            if (rank == 0) {
                e.flat = 0;
                n->op->explain(&e);
                continue;
            }
            // An op with a row form writes the whole row at once; any other, each element.
            e.row = n->op->row_form;
            for (size_t j = 0; j < (e.row ? 1 : d); j++) {
                e.flat = r * d + j;
                shape_unflatten(&out->shape, e.flat, e.index);
                n->op->explain(&e);
            }
        }
    }
    run->work = e.lines;
    run->n_work = e.n_lines;
    run->cap_work = e.cap_lines;
    return !e.failed;
}

// Every explain request for node i, from the lesson and the command line. False when memory
// runs out.
static bool explain_requests(Runner *run, size_t i, const Tensor *out, const Tensor *const *in) {
    const PlanNode *n = &run->plan->nodes[i];
    const ExplainTarget *lists[2] = {run->plan->explains, run->extra};
    size_t counts[2] = {run->plan->n_explains, run->n_extra};
    for (size_t l = 0; l < 2; l++)
        for (size_t k = 0; k < counts[l]; k++)
            if (lists[l][k].node == i && !explain_target(run, n, out, in, &lists[l][k]))
                return diag_no_memory(run->diag);
    return true;
}

// Node i's values: computed into a tensor of their own, unless the installed schedule makes
// them another way (read in place, schedule.h).
static Tensor *node_value(Runner *run, size_t i, const Tensor **in) {
    if (run->scheduled) {
        bool made = false;
        ScheduleNode node = {.plan = run->plan, .i = i, .trace = run->trace, .in = in, .diag = run->diag};
        Tensor *out = run->schedule->value(run->scheduled, &node, &made);
        if (made)
            return out;
    }
    return eval_node(run->plan, i, run->trace->tensors, in, run->trace->arena, run->diag);
}

// Whether two lists of labels say the same (both absent, or the same words in order).
static bool same_labels(const Labels *a, const Labels *b) {
    if (!a->items || !b->items)
        return !a->items && !b->items;
    if (a->n != b->n)
        return false;
    for (size_t k = 0; k < a->n; k++)
        if (a->items[k] != b->items[k] && strcmp(a->items[k], b->items[k]) != 0)
            return false;
    return true;
}

// Node i's labels (run->labels, the check's to start with), once its values are known. Where
// an input's were chosen by values upstream, its shape rule runs again on them, and each axis
// whose label the rule gave (not a step's rows: or cols:) takes the new one; then the node's
// own values choose where they can (OpDef.value_labels), and its ids keep or find their tokens.
// False when memory runs out.
static bool run_labels(Runner *run, size_t i, const Tensor *const *in, const Tensor *out) {
    const PlanNode *n = &run->plan->nodes[i];
    const Labels *in_labels[OP_MAX_ARGS], *check_labels[OP_MAX_ARGS];
    bool upstream = false;
    for (size_t k = 0; k < n->n_args; k++) {
        in_labels[k] = run->node_labels[n->args[k]];
        check_labels[k] = run->plan->nodes[n->args[k]].labels;
        upstream = upstream || run->relabelled[n->args[k]];
    }
    Labels ruled[TENSOR_MAX_RANK], moved[TENSOR_MAX_RANK];
    if (upstream && plan_relabel(run->plan, i, check_labels, ruled, run->trace->arena) &&
        plan_relabel(run->plan, i, in_labels, moved, run->trace->arena))
        for (size_t a = 0; a < n->shape.rank; a++)
            if (same_labels(&n->labels[a], &ruled[a]))
                run->labels[a] = moved[a];
    if (n->op->value_labels) {
        OpLabels labels = {.op = n->op, .out = out, .in = in, .in_labels = in_labels[0], .attrs = &n->attrs,
                           .out_labels = run->labels, .arena = run->trace->arena};
        if (!n->op->value_labels(&labels))
            return false;
    }
    if (n->n_args > 0)
        run->ids_of = plan_ids_of(n->op, &n->attrs, &run->plan->nodes[n->args[0]].shape, &run->node_ids[n->args[0]],
                                  in_labels[0]);
    return true;
}

static Tensor *node_tensor(Runner *run, size_t i) {
    const PlanNode *n = &run->plan->nodes[i];
    const Tensor *in[OP_MAX_ARGS];
    Tensor *out = node_value(run, i, in);
    if (out && n->kind == PLAN_GRAD && n->is_stage) {
        // the values so far, this gradient's included, for the check to read
        run->trace->tensors[i] = out;
        char note[OP_MESSAGE_MAX];
        bool ok = gradcheck_note(run->plan, run->trace, i, run->trace->tensors, &run->check_budget, run->diag, note,
                                 sizeof(note)) &&
                  explain_requests(run, i, out, in);
        run->trace->tensors[i] = NULL;
        const char *copy = ok ? arena_strdup(run->trace->arena, note) : NULL;
        if (!copy) {
            tensor_destroy(out);
            if (ok)
                diag_out_of_memory(run->diag);
            return NULL;
        }
        run->notes.lines[run->notes.n_lines++] = copy;
    }
    if (!out || n->kind != PLAN_OP || !n->has_values)
        return out;
    // A count is exact only while a double can hold every whole number up to it. Arithmetic on
    // whole numbers that passes it (n * 1e16) gives values like any other; a count by nature
    // (numel, arange) that passes it would print a wrong count, and is refused.
    for (size_t k = 0; out->is_count && k < out->size; k++)
        if (fabs(out->data[k]) > TENSOR_EXACT_COUNT && isfinite(out->data[k]) &&
            n->op->integers != INTEGERS_ALWAYS) {
            out->is_count = false;
        } else if (fabs(out->data[k]) > TENSOR_EXACT_COUNT && isfinite(out->data[k])) {
            plan_error_at(run->diag, run->plan->lesson, n->step, n->expr->start, n->expr->end - n->expr->start,
                          "this count, about %.3g, is past 2^53 = 9,007,199,254,740,992, where doubles stop "
                          "holding every whole number: it would not be exact",
                          out->data[k]);
            diag_hint(run->diag, "count something smaller, or in parts that each stay below 2^53");
            tensor_destroy(out);
            return NULL;
        }
    run->notes = (OpNotes){.op = n->op, .out = out, .in = in, .n_in = n->n_args, .attrs = &n->attrs,
                           .digits = run->trace->digits, .arena = run->trace->arena};
    if (n->op->notes)
        n->op->notes(&run->notes);
    if (!run_labels(run, i, in, out)) {
        tensor_destroy(out);
        diag_out_of_memory(run->diag);
        return NULL;
    }
    // Where IEEE arithmetic leaves the page (an overflow, a nan), the stage says why, unless
    // the operation's own notes already speak of it (the mean of an empty axis, a softmax row
    // with no finite score).
    const char *ieee = NULL;
    if (run->notes.failed ||
        (n->is_stage && !ieee_note(&run->ieee, n->op, out, in, n->n_args, n->name, run->trace->arena, &ieee))) {
        tensor_destroy(out);
        diag_out_of_memory(run->diag);
        return NULL;
    }
    for (size_t k = 0; ieee && k < run->notes.n_lines; k++)
        if (strstr(run->notes.lines[k], "nan") || strstr(run->notes.lines[k], "inf"))
            ieee = NULL;
    if (ieee && run->notes.n_lines < OP_MAX_NOTES)
        run->notes.lines[run->notes.n_lines++] = ieee;
    if (!explain_requests(run, i, out, in)) {
        tensor_destroy(out);
        return NULL;
    }
    return out;
}

static bool add_stage(Runner *run, const PlanNode *n, const Tensor *value) {
    Trace *t = run->trace;
    TraceStage *s = &t->stages[t->n_stages++];
    memset(s, 0, sizeof(*s));
    s->kind = n->stage_kind;
    s->name = n->name;
    s->number = n->number;
    s->expr = n->kind == PLAN_GIVEN ? NULL : n->expr_text;
    s->op = n->op ? n->op->name : NULL;
    s->op_about = !n->op ? NULL : n->op_about ? n->op_about : n->op->about;
    // softmax(x, axis=0) makes each column a distribution, not each last-axis row.
    s->distribution = n->op && n->op->distribution && (size_t)n->attrs.axis + 1 == n->shape.rank;
    s->op_line = n->op_line;
    if (n->stage_kind == STAGE_STEP) {
        s->aliases = n->step->aliases;
        s->n_aliases = n->step->n_aliases;
    }
    s->say = n->stage_kind == STAGE_STEP ? n->step->say : n->say;
    s->show = n->stage_kind == STAGE_STEP ? n->step->show : n->given ? n->given->show : PICTURE_DEFAULT;
    // The intermediates of a quiet step, of one shown as a picture and of one that shows its
    // result alone fold away; the other views are the step's own stage's.
    bool folds = n->step && (n->step->view == VIEW_QUIET || n->step->view == VIEW_RESULT ||
                             n->step->view == VIEW_PICTURE);
    s->view = n->stage_kind == STAGE_STEP ? n->step->view
              : n->given                  ? n->given->view
              : folds                     ? VIEW_QUIET
                                          : VIEW_FULL;
    s->digits = n->stage_kind == STAGE_STEP ? n->step->digits : -1;
    s->about = n->given ? n->given->about : NULL;
    s->value = value;
    memcpy(s->labels, run->labels, sizeof(s->labels));
    s->ids_of = run->ids_of;
    if (run->notes.n_lines) {
        s->notes = arena_array(t->arena, run->notes.n_lines, sizeof(char *));
        if (!s->notes)
            return false;
        memcpy(s->notes, run->notes.lines, run->notes.n_lines * sizeof(char *));
        s->n_notes = run->notes.n_lines;
    }
    s->work = run->work;
    s->n_work = run->n_work;
    s->node = (size_t)(n - run->plan->nodes);
    s->names_gradient = n->renames && run->plan->nodes[n->args[0]].kind == PLAN_GRAD;
    if (n->kind == PLAN_GRAD) {
        s->of = run->plan->nodes[n->grad_of].name;
        s->wrt = run->plan->nodes[n->grad_wrt].name;
        s->op = "gradient";
    }
    return true;
}

// The installed schedule's state for a run that keeps only keep, or NULL (and *ok true) when
// no schedule is installed or every value is kept. *ok false when memory runs out.
static ScheduleRun *schedule_start(const Schedule *schedule, const Plan *plan, const ExplainTarget *extra,
                                   size_t n_extra, const bool *keep, bool *ok) {
    *ok = true;
    if (!schedule || !keep)
        return NULL;
    bool *explained = util_calloc(plan->n_nodes + 1, sizeof(bool));
    ScheduleRun *s = NULL;
    if (explained) {
        for (size_t k = 0; k < plan->n_explains; k++)
            explained[plan->explains[k].node] = true;
        for (size_t k = 0; k < n_extra; k++)
            explained[extra[k].node] = true;
        s = schedule->start(plan, keep, explained);
    }
    util_free(explained);
    *ok = s != NULL;
    return s;
}

Trace *run_plan(const Plan *plan, int digits, const ExplainTarget *extra, size_t n_extra, const bool *keep,
                Diag *diag) {
    const Schedule *schedule = schedule_installed();
    ScheduleRun *scheduled = NULL;
    bool started = false;
    Progress progress = {0};  // shown on a terminal while a large lesson runs (progress.h)
    Trace *t = util_calloc(1, sizeof(Trace));
    if (!t) {
        diag_out_of_memory(diag);
        return NULL;
    }
    const Lesson *lesson = plan->lesson;
    t->arena = arena_create();
    t->tensors = util_calloc(plan->n_nodes, sizeof(Tensor *));
    if (!t->arena || !t->tensors ||
        !(t->stages = arena_array(t->arena, plan->n_nodes, sizeof(TraceStage))))
        goto oom;
    scheduled = schedule_start(schedule, plan, extra, n_extra, keep, &started);
    if (!started)
        goto oom;
    t->title = lesson->title;
    t->source = lesson->source;
    t->intro = lesson->intro;
    t->outro = lesson->outro;
    t->file = lesson->path;
    t->file_name = strrchr(lesson->path, '/') ? strrchr(lesson->path, '/') + 1 : lesson->path;
    t->digits = digits;
    t->doc_first_slip = -1;
    t->doc_first_hidden_slip = -1;
    Runner run = {.plan = plan, .trace = t, .diag = diag, .extra = extra, .n_extra = n_extra,
                  .check_budget = BACKWARD_CHECK_LESSON_WORK, .schedule = schedule, .scheduled = scheduled};
    run.node_labels = arena_array(t->arena, plan->n_nodes + 1, sizeof(*run.node_labels));
    run.relabelled = arena_array(t->arena, plan->n_nodes + 1, sizeof(bool));
    run.node_ids = arena_array(t->arena, plan->n_nodes + 1, sizeof(Labels));
    if (!run.node_labels || !run.relabelled || !run.node_ids)
        goto oom;
    progress_begin(&progress, "computing", NULL, plan->n_nodes, NULL);
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        run.notes.n_lines = 0;
        run.work = NULL;
        run.n_work = run.cap_work = 0;
        memcpy(run.labels, n->labels, sizeof(run.labels));
        run.ids_of = n->ids_of;
        Tensor *value = node_tensor(&run, i);
        if (!value)
            goto fail;
        memcpy(run.node_labels[i], run.labels, sizeof(run.labels));
        run.node_ids[i] = run.ids_of;
        run.relabelled[i] = memcmp(run.labels, n->labels, sizeof(run.labels)) != 0;
        t->tensors[i] = value;
        t->n_tensors = i + 1;
        if (n->is_stage && !add_stage(&run, n, value))
            goto oom;
        if (scheduled)
            schedule->ran(scheduled, t, i);
        progress_update(&progress, i + 1, 0, n->is_stage ? n->name : NULL);
    }
    progress_end(&progress);
    if (scheduled)
        schedule->finish(scheduled);
    return t;
oom:
    diag_out_of_memory(diag);
fail:
    progress_end(&progress);
    if (diag->status == STATUS_OK)
        diag_out_of_memory(diag);
    if (scheduled)
        schedule->finish(scheduled);
    trace_destroy(t);
    return NULL;
}
