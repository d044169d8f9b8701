// run: a Plan evaluated node by node into a Trace. The kernel computes; this file builds the
// tensors, calls the op table and collects notes.
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "backward.h"
#include "format.h"
#include "trace.h"

typedef struct Runner {
    const Plan *plan;
    Trace *trace;
    Diag *diag;
    const PlanNode *node;  // the node being computed
    // Notes of the current stage, collected before they are copied into the arena.
    const char *notes[8];
    size_t n_notes;
    // Lines of shown work of the current stage.
    const char **work;
    size_t n_work, cap_work;
    bool failed;  // out of memory while collecting
    const ExplainTarget *extra;
    size_t n_extra;
} Runner;

bool op_run_error(OpRun *r, int input, const char *fmt, ...) {
    Runner *run = r->where;
    const PlanNode *n = run->node;
    const Expr *e = n->expr;
    if (input >= 0 && e) {
        if (e->kind == EXPR_CALL && (size_t)input < e->n_args)
            e = e->args[input];
        else if (e->kind == EXPR_INDEX && input == 1 && n->attrs.index_input >= 0)
            e = e->args[1 + n->attrs.index_input];
    }
    char message[sizeof(run->diag->message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    if (input == -2 || !e || !n->step)
        diag_out_of_memory(run->diag);
    else
        plan_error_at(run->diag, run->plan->lesson, n->step, e->start, e->end - e->start, "%s", message);
    return false;
}

void op_run_hint(OpRun *r, const char *fmt, ...) {
    Runner *run = r->where;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->diag->hint, sizeof(run->diag->hint), fmt, ap);
    va_end(ap);
}

static const char *display_name(Runner *run, const PlanNode *n);

const char *op_run_name(OpRun *r, int input) {
    Runner *run = r->where;
    const PlanNode *n = run->node;
    if (input < 0 || (size_t)input >= n->n_args)
        return "?";
    const char *name = display_name(run, &run->plan->nodes[n->args[input]]);
    return name ? name : "?";
}

void op_note(OpNotes *n, const char *fmt, ...) {
    Runner *run = n->sink;
    if (run->n_notes == ARRAY_LEN(run->notes))
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    const char *copy = arena_strdup(run->trace->arena, text);
    if (copy)
        run->notes[run->n_notes++] = copy;
}

void op_work_failed(OpExplain *e) {
    ((Runner *)e->sink)->failed = true;
}

void op_work(OpExplain *e, const char *fmt, ...) {
    Runner *run = e->sink;
    if (run->n_work == run->cap_work) {
        size_t cap = run->cap_work ? run->cap_work * 2 : 16;
        const char **work = arena_array(run->trace->arena, cap, sizeof(char *));
        if (!work) {
            run->failed = true;
            return;
        }
        if (run->n_work)
            memcpy(work, run->work, run->n_work * sizeof(char *));
        run->work = work;
        run->cap_work = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    StrBuf sb;
    strbuf_init(&sb);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    const char *line = sb.failed ? NULL : arena_strdup(run->trace->arena, strbuf_str(&sb));
    strbuf_finish(&sb);
    if (!line) {
        run->failed = true;
        return;
    }
    run->work[run->n_work++] = line;
}

// Text that reads as one value: a name, a number, f(...), x[...], (...), or anything
// without spaces. Anything else is bracketed before it is indexed or combined.
static bool is_atomic(const char *text) {
    if (!strchr(text, ' '))
        return true;
    const char *p = text;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        p++;
    if (*p != '(' && *p != '[')
        return false;
    // The bracket opened at p must close at the very end.
    int depth = 0;
    for (const char *q = p; *q; q++) {
        if (*q == '(' || *q == '[')
            depth++;
        else if (*q == ')' || *q == ']')
            if (--depth == 0)
                return q[1] == '\0';
    }
    return false;
}

// How an input is written in shown work: its name, a number, or its expression in brackets.
static const char *display_name(Runner *run, const PlanNode *n) {
    if (n->kind == PLAN_GIVEN || (n->is_stage && n->stage_kind == STAGE_STEP))
        return n->name;
    const char *text = n->expr_text;
    char buf[64];
    if (n->kind == PLAN_CONSTANT) {
        if (n->shape.rank == 0) {
            format_short(n->values[0], buf, sizeof(buf));
            text = buf;
        } else if (n->expr && n->step) {
            text = arena_strndup(run->trace->arena, n->step->expr + n->expr->start, n->expr->end - n->expr->start);
        }
    }
    if (!text)
        return "?";
    if (is_atomic(text))
        return arena_strdup(run->trace->arena, text);
    return arena_printf(run->trace->arena, "(%s)", text);
}

static void unflatten(const Shape *s, size_t flat, size_t *idx) {
    for (size_t i = s->rank; i-- > 0;) {
        idx[i] = s->dim[i] ? flat % s->dim[i] : 0;
        flat = s->dim[i] ? flat / s->dim[i] : 0;
    }
}

static size_t flatten(const Shape *s, const size_t *idx) {
    size_t f = 0;
    for (size_t i = 0; i < s->rank; i++)
        f = f * s->dim[i] + idx[i];
    return f;
}

// The work for one request: an element, a row (the op's row form, or each element), or all.
static bool explain_target(Runner *run, const PlanNode *n, const Tensor *out, const Tensor *const *in,
                           const ExplainTarget *t) {
    if (!n->op || !n->op->explain)
        return true;
    const char *names[64];
    for (size_t k = 0; k < n->n_args; k++) {
        names[k] = display_name(run, &run->plan->nodes[n->args[k]]);
        if (!names[k])
            return false;
    }
    OpExplain e = {.op = n->op, .out = out, .in = in, .n_in = n->n_args, .attrs = &n->attrs, .all = t->kind == EXPLAIN_ALL,
                   .out_name = n->name, .in_names = names, .digits = run->trace->digits, .sink = run};
    size_t rank = out->shape.rank;
    size_t d = rank ? out->shape.dim[rank - 1] : 1;
    size_t first_row = 0, rows = 1;
    if (t->kind == EXPLAIN_ELEMENT) {
        memcpy(e.index, t->index, sizeof(e.index));
        e.flat = flatten(&out->shape, e.index);
        n->op->explain(&e);
        return !run->failed;
    }
    if (t->kind == EXPLAIN_ROW) {
        size_t idx[TENSOR_MAX_RANK] = {0};
        memcpy(idx, t->index, t->n_index * sizeof(size_t));
        first_row = rank ? flatten(&out->shape, idx) / d : 0;
    } else {
        rows = d ? out->size / d : 0;
    }
    for (size_t r = first_row; r < first_row + rows; r++) {
        if (rank == 0) {
            e.flat = 0;
            n->op->explain(&e);
            continue;
        }
        e.row = true;
        e.flat = r * d;
        unflatten(&out->shape, e.flat, e.index);
        if (n->op->explain(&e))
            continue;
        e.row = false;
        for (size_t j = 0; j < d; j++) {
            e.flat = r * d + j;
            unflatten(&out->shape, e.flat, e.index);
            n->op->explain(&e);
        }
    }
    return !run->failed;
}

static Tensor *given_tensor(const LessonGiven *g) {
    if (g->init == GIVEN_SHAPE_ONLY)
        return tensor_create_shape_only(&g->shape);
    Tensor *t = tensor_create(&g->shape);
    if (!t)
        return NULL;
    switch (g->init) {
    case GIVEN_VALUES:
        memcpy(t->data, g->values, t->size * sizeof(double));
        break;
    case GIVEN_ZEROS:
        break;
    case GIVEN_ONES:
        kernel_fill(t, 1.0);
        break;
    case GIVEN_IDENTITY:
        kernel_identity(t);
        break;
    case GIVEN_RANDOM:
        kernel_fill_random(t, g->distribution, g->scale, g->seed);
        break;
    case GIVEN_SHAPE_ONLY:
        break;
    }
    return t;
}

// The value of node i from the values of earlier nodes: no notes, no explanations.
static Tensor *compute_node(Runner *run, size_t i, Tensor *const *values, const Tensor **in) {
    const PlanNode *n = &run->plan->nodes[i];
    switch (n->kind) {
    case PLAN_GIVEN: {
        Tensor *t = given_tensor(n->given);
        if (t)
            t->is_count = n->is_count;
        return t;
    }
    case PLAN_CONSTANT: {
        Tensor *t = tensor_create(&n->shape);
        if (t) {
            memcpy(t->data, n->values, t->size * sizeof(double));
            t->is_count = n->is_count;
        }
        return t;
    }
    case PLAN_GRAD:
        return backward_gradient(run->plan, i, values);
    case PLAN_OP:
        break;
    }
    Tensor *out = n->has_values ? tensor_create(&n->shape) : tensor_create_shape_only(&n->shape);
    if (!out)
        return NULL;
    out->is_count = n->is_count;
    if (!n->has_values)
        return out;
    for (size_t k = 0; k < n->n_args; k++)
        in[k] = values[n->args[k]];
    OpRun r = {.op = n->op, .out = out, .in = in, .n_in = n->n_args, .attrs = &n->attrs,
               .arena = run->trace->arena, .diag = run->diag, .where = run};
    if (!n->op->compute(&r)) {
        tensor_destroy(out);
        return NULL;
    }
    return out;
}

Tensor *run_node(const Plan *plan, Trace *trace, size_t i, Tensor *const *values, Diag *diag) {
    Runner run = {.plan = plan, .trace = trace, .diag = diag, .node = &plan->nodes[i]};
    const Tensor *in[64];
    return compute_node(&run, i, values, in);
}

static Tensor *node_tensor(Runner *run, size_t i) {
    const PlanNode *n = &run->plan->nodes[i];
    const Tensor *in[64];
    Tensor *out = compute_node(run, i, run->trace->tensors, in);
    if (out && n->kind == PLAN_GRAD && n->is_stage) {
        // the values so far, this gradient's included, for the check to read
        run->trace->tensors[i] = out;
        char note[512];
        bool ok = backward_check(run->plan, run->trace, i, run->trace->tensors, run->diag, note, sizeof(note));
        run->trace->tensors[i] = NULL;
        const char *copy = ok ? arena_strdup(run->trace->arena, note) : NULL;
        if (!copy) {
            tensor_destroy(out);
            if (ok)
                diag_out_of_memory(run->diag);
            return NULL;
        }
        run->notes[run->n_notes++] = copy;
    }
    if (!out || n->kind != PLAN_OP || !n->has_values)
        return out;
    // A count is exact only while a double can hold every whole number up to it.
    const double exact_limit = 9007199254740992.0;  // 2^53
    for (size_t k = 0; out->is_count && k < out->size; k++)
        if (fabs(out->data[k]) > exact_limit && isfinite(out->data[k])) {
            plan_error_at(run->diag, run->plan->lesson, n->step, n->expr->start, n->expr->end - n->expr->start,
                          "this count, about %.3g, is past 2^53 = 9,007,199,254,740,992, where doubles stop "
                          "holding every whole number: it would not be exact",
                          out->data[k]);
            diag_hint(run->diag, "count something smaller, or in parts that each stay below 2^53");
            tensor_destroy(out);
            return NULL;
        }
    if (n->op->notes) {
        OpNotes notes = {.out = out, .in = in, .n_in = n->n_args, .attrs = &n->attrs,
                         .digits = run->trace->digits, .sink = run};
        n->op->notes(&notes);
    }
    const ExplainTarget *lists[2] = {run->plan->explains, run->extra};
    size_t counts[2] = {run->plan->n_explains, run->n_extra};
    for (size_t l = 0; l < 2; l++)
        for (size_t k = 0; k < counts[l]; k++)
            if (lists[l][k].node == i && !explain_target(run, n, out, in, &lists[l][k])) {
                tensor_destroy(out);
                diag_out_of_memory(run->diag);
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
    s->op_line = n->op_line;
    s->say = n->stage_kind == STAGE_STEP ? n->step->say : n->say;
    s->about = n->given ? n->given->about : NULL;
    s->value = value;
    memcpy(s->labels, n->labels, sizeof(s->labels));
    if (run->n_notes) {
        s->notes = arena_array(t->arena, run->n_notes, sizeof(char *));
        if (!s->notes)
            return false;
        memcpy(s->notes, run->notes, run->n_notes * sizeof(char *));
        s->n_notes = run->n_notes;
    }
    s->work = run->work;
    s->n_work = run->n_work;
    s->node = (size_t)(n - run->plan->nodes);
    if (n->kind == PLAN_GRAD) {
        s->of = run->plan->nodes[n->grad_of].name;
        s->wrt = run->plan->nodes[n->grad_wrt].name;
        s->op = "gradient";
    }
    return true;
}

Trace *trace_create(const Plan *plan, int digits, const ExplainTarget *extra, size_t n_extra, Diag *diag) {
    Trace *t = util_calloc(1, sizeof(Trace));
    if (!t) {
        diag_out_of_memory(diag);
        return NULL;
    }
    const Lesson *lesson = plan->lesson;
    t->arena = arena_create();
    t->tensors = util_calloc(plan->n_nodes ? plan->n_nodes : 1, sizeof(Tensor *));
    if (!t->arena || !t->tensors ||
        !(t->stages = arena_array(t->arena, plan->n_nodes ? plan->n_nodes : 1, sizeof(TraceStage))))
        goto oom;
    t->title = lesson->title;
    t->source = lesson->source;
    t->intro = lesson->intro;
    t->outro = lesson->outro;
    t->file = lesson->path;
    t->file_name = strrchr(lesson->path, '/') ? strrchr(lesson->path, '/') + 1 : lesson->path;
    t->digits = digits;
    Runner run = {.plan = plan, .trace = t, .diag = diag, .extra = extra, .n_extra = n_extra};
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        run.node = n;
        run.n_notes = 0;
        run.work = NULL;
        run.n_work = run.cap_work = 0;
        Tensor *value = node_tensor(&run, i);
        if (!value)
            goto fail;
        t->tensors[i] = value;
        t->n_tensors = i + 1;
        if (n->is_stage && !add_stage(&run, n, value))
            goto oom;
    }
    if (!doccheck_run(plan, t, diag))
        goto fail;
    return t;
oom:
    diag_out_of_memory(diag);
fail:
    if (diag->status == STATUS_OK)
        diag_out_of_memory(diag);
    trace_destroy(t);
    return NULL;
}

void trace_destroy(Trace *t) {
    if (!t)
        return;
    for (size_t i = 0; i < t->n_tensors; i++)
        tensor_destroy(t->tensors[i]);
    util_free(t->tensors);
    for (size_t i = 0; i < t->n_doc_tensors; i++)
        tensor_destroy(t->doc_tensors[i]);
    util_free(t->doc_tensors);
    arena_destroy(t->arena);
    util_free(t);
}
