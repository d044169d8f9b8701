// run: a Plan evaluated node by node into a Trace. The kernel computes (through eval and the
// op table); this file keeps the values and collects each stage's notes and shown work.
#include "run.h"

#include <math.h>
#include <string.h>

#include "eval.h"
#include "format.h"
#include "gradcheck.h"
#include "ieee.h"

// How a node gets its values: see "values read in place" below.
typedef enum NodeMode {
    MODE_COMPUTE,
    MODE_VIEW,  // a view of its input
    MODE_INTO,  // a product written into its merge_heads reader's result
} NodeMode;

typedef struct InPlace {
    NodeMode *mode;    // by node
    size_t *merge;     // MODE_INTO: the merge_heads node it writes into
    Tensor **pending;  // a merge_heads result its product has already written, by node
} InPlace;

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
    InPlace in_place;  // which nodes are read in place; all NULL: every node computed
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
        const char *names[EXPR_MAX_ARGS];
        const Tensor *in[EXPR_MAX_ARGS];
        for (size_t a = 0; a < u->n_args; a++) {
            names[a] = plan->nodes[u->args[a]].display;
            in[a] = values[u->args[a]];
        }
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
        const Tensor *in[EXPR_MAX_ARGS];
        for (size_t a = 0; a < u->n_args; a++)
            in[a] = values[u->args[a]];
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
    const char *names[EXPR_MAX_ARGS];
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

// ---------------------------------------------------------------- values read in place

// How a node gets its values. A layout operation (.T, split_heads) that nothing prints, read
// only by matrix products, is a view of its input's values (tensor.h); a product that nothing
// prints, read only by merge_heads, writes its values straight into merge_heads' result. The
// bits are the same either way (the product sums each element in the same order wherever it
// reads and writes), and so are the notes: a node is read in place only when its values are
// all finite, where a layout operation or a product has nothing to note; otherwise it is
// computed as any other.

static bool all_finite(const double *v, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return false;
    return true;
}

// Each node's NodeMode (and merge), given the nodes kept to the end and those whose work is
// shown. One walk from the last node back, counting each node's readers as it passes them: a
// node's readers all come after it, so its counts are complete when the walk reaches it. False
// when memory runs out.
static bool plan_modes(const Plan *plan, const bool *keep, const bool *explained, InPlace *ip) {
    size_t n = plan->n_nodes, gradient = 0;  // one past the latest gradient, which reads all before it
    for (size_t j = 0; j < n; j++)
        if (plan->nodes[j].kind == PLAN_GRAD)
            gradient = j + 1;
    // how many nodes read each node, how many of those in place
    size_t *readers = util_calloc(n + 1, sizeof(size_t)), *in_place = util_calloc(n + 1, sizeof(size_t));
    bool ok = readers && in_place;
    for (size_t k = 0; ok && k < n; k++)
        ip->merge[k] = SIZE_MAX;
    for (size_t k = n; ok && k-- > 0;) {
        const PlanNode *v = &plan->nodes[k];
        ip->mode[k] = MODE_COMPUTE;
        if (k >= gradient && v->kind == PLAN_OP && v->has_values && !v->is_count && !keep[k] && !explained[k]) {
            const PlanNode *x = v->n_args ? &plan->nodes[v->args[0]] : NULL;
            if (v->op->view && x && x->shape.rank >= 2 && !x->is_count && readers[k] && in_place[k] == readers[k])
                ip->mode[k] = MODE_VIEW;
            else if (v->op->reads_views && readers[k] == 1 && ip->merge[k] != SIZE_MAX)
                ip->mode[k] = MODE_INTO;
        }
        bool reads_in_place = ip->mode[k] == MODE_VIEW || (v->kind == PLAN_OP && v->op->reads_views && !explained[k]);
        bool merges = v->kind == PLAN_OP && v->op->input_steps && v->has_values && !explained[k];
        for (size_t a = 0; a < v->n_args; a++) {
            readers[v->args[a]]++;
            in_place[v->args[a]] += reads_in_place;
            if (merges)
                ip->merge[v->args[a]] = k;
        }
    }
    util_free(readers);
    util_free(in_place);
    return ok;
}

// Node i in place: a view of its input, when that holds only finite values. NULL (and *done
// false) to compute it as usual instead.
static Tensor *view_value(Runner *run, size_t i, const Tensor **in, bool *done) {
    const PlanNode *n = &run->plan->nodes[i];
    const Tensor *x = run->trace->tensors[n->args[0]];
    in[0] = x;
    // a view's values were all finite when it was made
    if (!x->view && !all_finite(x->data, x->size)) {
        *done = false;
        return NULL;
    }
    size_t x_step[TENSOR_MAX_RANK], step[TENSOR_MAX_RANK];
    tensor_steps(x, x_step);
    n->op->view(&x->shape, x_step, &n->attrs, step);
    Tensor *out = tensor_create_view(&n->shape, x->view ? x->view : x->data, step);
    if (!out)
        diag_out_of_memory(run->diag);
    return out;
}

// Product i written into the result of its one reader, merge_heads, made here and held until
// that node runs. When a value is not finite the product gets values of its own instead.
static Tensor *into_value(Runner *run, size_t i, const Tensor **in) {
    const Plan *plan = run->plan;
    const PlanNode *n = &plan->nodes[i];
    size_t q = run->in_place.merge[i];
    size_t step[TENSOR_MAX_RANK];
    plan->nodes[q].op->input_steps(&n->shape, step);
    Tensor *merged = tensor_create(&plan->nodes[q].shape);
    Tensor *out = merged ? tensor_create_view(&n->shape, merged->data, step) : NULL;
    Tensor *own = NULL;
    if (!out) {
        tensor_destroy(merged);
        diag_out_of_memory(run->diag);
        return NULL;
    }
    if (!eval_op_into(plan, i, run->trace->tensors, in, out, run->trace->arena, run->diag))
        goto fail;
    if (all_finite(merged->data, merged->size)) {
        run->in_place.pending[q] = merged;
        run->trace->n_in_place++;
        return out;
    }
    if (!(own = tensor_from_view(out))) {
        diag_out_of_memory(run->diag);
        goto fail;
    }
    tensor_destroy(out);
    tensor_destroy(merged);
    return own;
fail:
    tensor_destroy(out);
    tensor_destroy(merged);
    return NULL;
}

// Node i's values, computed, read in place or already written by the product it merges.
static Tensor *node_value(Runner *run, size_t i, const Tensor **in) {
    const PlanNode *n = &run->plan->nodes[i];
    const InPlace *ip = &run->in_place;
    if (ip->pending && ip->pending[i]) {
        Tensor *out = ip->pending[i];
        ip->pending[i] = NULL;
        for (size_t k = 0; k < n->n_args; k++)
            in[k] = run->trace->tensors[n->args[k]];
        return out;
    }
    if (ip->mode && ip->mode[i] == MODE_VIEW) {
        bool done = true;
        Tensor *out = view_value(run, i, in, &done);
        run->trace->n_in_place += out != NULL;
        if (done)
            return out;
    }
    if (ip->mode && ip->mode[i] == MODE_INTO)
        return into_value(run, i, in);
    return eval_node(run->plan, i, run->trace->tensors, in, run->trace->arena, run->diag);
}

static Tensor *node_tensor(Runner *run, size_t i) {
    const PlanNode *n = &run->plan->nodes[i];
    const Tensor *in[EXPR_MAX_ARGS];
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
    s->op_about = n->op ? n->op->about : NULL;
    s->distribution = n->op && n->op->distribution;
    s->op_line = n->op_line;
    s->say = n->stage_kind == STAGE_STEP ? n->step->say : n->say;
    s->show = n->stage_kind == STAGE_STEP ? n->step->show : PICTURE_DEFAULT;
    s->about = n->given ? n->given->about : NULL;
    s->value = value;
    memcpy(s->labels, n->labels, sizeof(s->labels));
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

// When each node's values may go: frees[starts[j] .. starts[j + 1]) are the nodes whose last
// reader is node j and that nothing reads after the run.
typedef struct Liveness {
    size_t *starts;  // n_nodes + 1
    size_t *frees;
    size_t *stage_of;  // each node's stage in the trace, SIZE_MAX for none
} Liveness;

static void liveness_finish(Liveness *l) {
    util_free(l->starts);
    util_free(l->frees);
    util_free(l->stage_of);
    *l = (Liveness){0};
}

// Bucket the nodes not kept by their last reader (a counting sort); a view's input lives as
// long as the view. False when memory runs out.
static bool liveness_init(Liveness *l, const Plan *plan, const bool *keep, const NodeMode *mode) {
    size_t n = plan->n_nodes;
    *l = (Liveness){0};
    size_t *last = util_calloc(n + 1, sizeof(size_t));
    size_t *cursor = util_calloc(n + 1, sizeof(size_t));
    l->starts = util_calloc(n + 1, sizeof(size_t));
    l->frees = util_calloc(n + 1, sizeof(size_t));
    l->stage_of = util_calloc(n + 1, sizeof(size_t));
    bool ok = last && cursor && l->starts && l->frees && l->stage_of;
    if (ok) {
        plan_last_readers(plan, last);
        for (size_t k = n; k-- > 0;) {
            size_t in = mode[k] == MODE_VIEW ? plan->nodes[k].args[0] : k;
            if (last[in] < last[k])
                last[in] = last[k];
        }
        for (size_t k = 0; k < n; k++) {
            l->stage_of[k] = SIZE_MAX;
            if (!keep[k])
                l->starts[last[k] + 1]++;
        }
        for (size_t j = 0; j < n; j++)
            cursor[j] = l->starts[j + 1] += l->starts[j];
        for (size_t k = n; k-- > 0;)
            if (!keep[k])
                l->frees[--cursor[last[k]]] = k;
    }
    util_free(cursor);
    util_free(last);
    if (!ok)
        liveness_finish(l);
    return ok;
}

// Node j has run: free the values nothing reads any more.
static void liveness_release(const Liveness *l, Trace *t, size_t j) {
    for (size_t f = l->starts[j]; f < l->starts[j + 1]; f++) {
        size_t k = l->frees[f];
        if (!t->tensors[k]->data && !t->tensors[k]->view)
            continue;  // shape-only: nothing to free
        tensor_release_values(t->tensors[k]);
        if (l->stage_of[k] != SIZE_MAX)
            t->stages[l->stage_of[k]].released = true;
    }
}

// With keep: which nodes are read in place, and room for the merges written ahead. False
// when memory runs out.
static bool plan_in_place(const Plan *plan, const ExplainTarget *extra, size_t n_extra, const bool *keep,
                          InPlace *ip) {
    size_t n = plan->n_nodes;
    bool *explained = util_calloc(n + 1, sizeof(bool));
    ip->mode = util_calloc(n + 1, sizeof(NodeMode));
    ip->merge = util_calloc(n + 1, sizeof(size_t));
    ip->pending = util_calloc(n + 1, sizeof(Tensor *));
    bool ok = explained && ip->mode && ip->merge && ip->pending;
    if (ok) {
        for (size_t k = 0; k < plan->n_explains; k++)
            explained[plan->explains[k].node] = true;
        for (size_t k = 0; k < n_extra; k++)
            explained[extra[k].node] = true;
        ok = plan_modes(plan, keep, explained, ip);
    }
    util_free(explained);
    return ok;
}

// Free the modes, and any merge written ahead that a failed run never reached.
static void in_place_finish(const Plan *plan, InPlace *ip) {
    for (size_t k = 0; ip->pending && k < plan->n_nodes; k++)
        tensor_destroy(ip->pending[k]);
    util_free(ip->pending);
    util_free(ip->merge);
    util_free(ip->mode);
    *ip = (InPlace){0};
}

Trace *run_plan(const Plan *plan, int digits, const ExplainTarget *extra, size_t n_extra, const bool *keep,
                Diag *diag) {
    Liveness live = {0};
    InPlace ip = {0};
    Trace *t = util_calloc(1, sizeof(Trace));
    if (!t) {
        diag_out_of_memory(diag);
        return NULL;
    }
    const Lesson *lesson = plan->lesson;
    t->arena = arena_create();
    t->tensors = util_calloc(plan->n_nodes, sizeof(Tensor *));
    if (!t->arena || !t->tensors ||
        !(t->stages = arena_array(t->arena, plan->n_nodes, sizeof(TraceStage))) ||
        (keep && (!plan_in_place(plan, extra, n_extra, keep, &ip) || !liveness_init(&live, plan, keep, ip.mode))))
        goto oom;
    t->title = lesson->title;
    t->source = lesson->source;
    t->intro = lesson->intro;
    t->outro = lesson->outro;
    t->file = lesson->path;
    t->file_name = strrchr(lesson->path, '/') ? strrchr(lesson->path, '/') + 1 : lesson->path;
    t->digits = digits;
    t->doc_first_slip = -1;
    Runner run = {.plan = plan, .trace = t, .diag = diag, .extra = extra, .n_extra = n_extra,
                  .check_budget = BACKWARD_CHECK_LESSON_WORK, .in_place = ip};
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        run.notes.n_lines = 0;
        run.work = NULL;
        run.n_work = run.cap_work = 0;
        Tensor *value = node_tensor(&run, i);
        if (!value)
            goto fail;
        t->tensors[i] = value;
        t->n_tensors = i + 1;
        if (n->is_stage) {
            if (keep)
                live.stage_of[i] = t->n_stages;
            if (!add_stage(&run, n, value))
                goto oom;
        }
        if (keep)
            liveness_release(&live, t, i);
    }
    in_place_finish(plan, &ip);
    liveness_finish(&live);
    return t;
oom:
    diag_out_of_memory(diag);
fail:
    if (diag->status == STATUS_OK)
        diag_out_of_memory(diag);
    in_place_finish(plan, &ip);
    liveness_finish(&live);
    trace_destroy(t);
    return NULL;
}
