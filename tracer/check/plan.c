// plan: the checked lesson's nodes, and what the stages after the checker ask of them.
#include "plan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

Plan *plan_create(const Lesson *lesson) {
    Plan *plan = util_calloc(1, sizeof(Plan));
    if (!plan)
        return NULL;
    plan->lesson = lesson;
    plan->arena = arena_create();
    if (!plan->arena) {
        util_free(plan);
        return NULL;
    }
    return plan;
}

void plan_destroy(Plan *plan) {
    if (!plan)
        return;
    arena_destroy(plan->arena);
    util_free(plan->nodes);
    util_free(plan);
}

// The slot of name: the one that holds its stage, or the empty one where it would go.
static size_t stage_slot(const Plan *plan, const char *name) {
    size_t mask = plan->cap_stage_slots - 1, at = util_hash_string(name) & mask;
    while (plan->stage_slots[at] && strcmp(plan->nodes[plan->stage_slots[at] - 1].name, name) != 0)
        at = (at + 1) & mask;
    return at;
}

bool plan_index_stages(Plan *plan) {
    size_t cap = 16;
    while (cap < 2 * (plan->n_nodes + 1))
        cap *= 2;
    if (!(plan->stage_slots = arena_array(plan->arena, cap, sizeof(size_t))))
        return false;
    plan->cap_stage_slots = cap;
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        size_t at;
        if (n->is_stage && n->name && !plan->stage_slots[at = stage_slot(plan, n->name)])
            plan->stage_slots[at] = i + 1;
    }
    return true;
}

void plan_operands(const PlanNode *n, Tensor *const *values, const Tensor **in) {
    ASSERT(n->n_args <= OP_MAX_ARGS);
    for (size_t k = 0; k < n->n_args; k++)
        in[k] = values[n->args[k]];
    if (n->n_args < OP_MAX_ARGS)
        in[n->n_args] = NULL;
}

const PlanNode *plan_find_stage(const Plan *plan, const char *name, size_t *index) {
    ASSERT(plan->stage_slots);  // indexed by the checker
    size_t slot = plan->stage_slots[stage_slot(plan, name)];
    if (!slot)
        return NULL;
    if (index)
        *index = slot - 1;
    return &plan->nodes[slot - 1];
}

// The most steps plan_last_readers spends following gradient stages' checks from x to y (a
// lesson of thousands of gradient stages would otherwise take time quadratic in its length);
// past it, a gradient stage is taken to read every node before it, which is always safe.
#define PLAN_LIVENESS_WORK ((size_t)1 << 22)

// Gradient node j reads what the backward pass and its finite-difference check read: the
// gradients it gathers (its arguments), each use with that use's inputs, and, for a stage,
// what the check reads (gradcheck.c): x, y, and for its forward passes from x to y the inputs
// that do not move of every operation that moves with x. dirty: a flag per node, all false
// before and after. False when *work does not cover the walk from x to y (nothing marked).
static bool gradient_reads(const Plan *plan, size_t j, bool *dirty, size_t *work, size_t *last) {
    const PlanNode *n = &plan->nodes[j];
    for (size_t k = 0; k < n->n_args; k++) {
        const PlanNode *use = &plan->nodes[n->grad_use[k]];
        last[n->grad_use[k]] = j;
        for (size_t a = 0; a < use->n_args; a++)
            last[use->args[a]] = j;
    }
    if (!n->is_stage)
        return true;
    size_t v = n->grad_wrt, y = n->grad_of;
    if (y - v + 1 > *work)
        return false;
    *work -= y - v + 1;
    dirty[v] = true;
    last[v] = last[y] = j;  // y's value is the loss the differences are measured against
    for (size_t u = v + 1; u <= y; u++) {
        const PlanNode *m = &plan->nodes[u];
        for (size_t a = 0; m->kind == PLAN_OP && a < m->n_args; a++)
            dirty[u] = dirty[u] || dirty[m->args[a]];
        for (size_t a = 0; dirty[u] && a < m->n_args; a++)
            if (!dirty[m->args[a]])
                last[m->args[a]] = j;
    }
    memset(dirty + v, 0, (y - v + 1) * sizeof(bool));
    return true;
}

bool plan_last_readers(const Plan *plan, size_t *last) {
    bool *dirty = util_calloc(plan->n_nodes + 1, sizeof(bool));
    if (!dirty)
        return false;
    size_t work = PLAN_LIVENESS_WORK, all_before = 0;  // nodes before it live until it
    for (size_t j = 0; j < plan->n_nodes; j++) {
        const PlanNode *n = &plan->nodes[j];
        last[j] = j;
        for (size_t a = 0; a < n->n_args; a++)
            last[n->args[a]] = j;
        if (n->kind == PLAN_GRAD && !gradient_reads(plan, j, dirty, &work, last))
            all_before = j;
    }
    for (size_t k = 0; k < all_before; k++)
        if (last[k] < all_before)
            last[k] = all_before;
    util_free(dirty);
    return true;
}

// The values node k holds while it is held: none for a shape-only node.
static size_t node_values(const PlanNode *node) {
    size_t size = 0;
    if (node->has_values)
        shape_size(&node->shape, &size);
    return size;
}

bool plan_held_values(const Plan *plan, const bool *keep, size_t base, size_t limit, PlanHeld *held) {
    size_t n = plan->n_nodes;
    *held = (PlanHeld){.peak = base, .end = base, .past = SIZE_MAX};
    size_t *last = util_calloc(n + 1, sizeof(size_t));
    size_t *freed = util_calloc(n + 1, sizeof(size_t));  // freed[j]: the values that go after node j
    bool ok = last && freed && plan_last_readers(plan, last);
    if (ok) {
        for (size_t k = 0; k < n; k++)
            if (keep && !keep[k])
                freed[last[k]] += node_values(&plan->nodes[k]);
        // Every tensor with values holds at most TENSOR_MAX_VALUES and the checker holds them
        // all together to PLAN_MAX_TOTAL_VALUES: past a base that small, no sum here overflows.
        size_t now = base;
        for (size_t j = 0; j < n; j++) {
            now += node_values(&plan->nodes[j]);
            if (now > held->peak)
                held->peak = now;
            if (now > limit && held->past == SIZE_MAX) {
                held->past = j;
                held->past_held = now;
            }
            now -= freed[j];
        }
        held->end = now;
    }
    util_free(last);
    util_free(freed);
    return ok;
}

int plan_error_at(Diag *diag, const Lesson *lesson, const LessonStep *step, size_t pos, size_t width,
                  const char *fmt, ...) {
    if (diag->status != STATUS_OK)
        return diag->status;
    size_t line, col;
    lesson_expr_position(step, pos, &line, &col);
    if (!step->expr_exact)
        width = 1;
    char message[sizeof(diag->message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    if (step->scope)  // the same text serves every application: say which one failed
        return diag_error(diag, STATUS_LESSON_ERROR, &lesson->doc->source, line, col, width, "%s (%s)", message,
                          step->scope->where);
    return diag_error(diag, STATUS_LESSON_ERROR, &lesson->doc->source, line, col, width, "%s", message);
}

bool plan_resolve_explain(const Plan *plan, size_t node, const ExplainSpec *spec, ExplainTarget *out,
                          char *message, size_t message_cap, char *hint, size_t hint_cap) {
    const PlanNode *n = &plan->nodes[node];
    const Shape *s = &n->shape;
    char shape[64];
    shape_format(s, shape, sizeof(shape));
    hint[0] = '\0';
    memset(out, 0, sizeof(*out));
    out->node = node;
    if (n->kind == PLAN_GIVEN) {
        snprintf(message, message_cap, "'%s' is given: its values come from the lesson, not from a computation",
                 n->name);
        snprintf(hint, hint_cap, "explain a step that uses it");
        return false;
    }
    if (!n->has_values) {
        snprintf(message, message_cap, "'%s' has only a shape %s, no values to work out", n->name, shape);
        return false;
    }
    if (spec->kind == EXPLAIN_ALL) {
        size_t size;
        shape_size(s, &size);
        if (size > PLAN_EXPLAIN_ALL_MAX) {
            snprintf(message, message_cap, "'%s' has %zu values, too many to explain all of them (at most %d)",
                     n->name, size, PLAN_EXPLAIN_ALL_MAX);
            snprintf(hint, hint_cap, "explain one element, as [0, 1], or one row, as row 0");
            return false;
        }
        out->kind = EXPLAIN_ALL;
        return true;
    }
    size_t want = spec->n_index;
    if (s->rank == 0 && spec->n_index > 0) {  // an element or a row (row 0 has one index)
        snprintf(message, message_cap, "'%s' is a single number (shape []): it has no rows or elements to pick",
                 n->name);
        snprintf(hint, hint_cap, "leave out the indices: its one value is the whole of it");
        return false;
    }
    if (spec->kind == EXPLAIN_ROW && s->rank != 2 && s->rank != 1) {
        snprintf(message, message_cap, "'row' needs a matrix, but '%s' has shape %s", n->name, shape);
        snprintf(hint, hint_cap, "give the indices of the row instead, as [0, 1] for a rank-3 tensor");
        return false;
    }
    if (spec->kind == EXPLAIN_ROW && s->rank == 1) {
        // The one row of a vector is the vector itself: row 0 (or -1, counting from the end).
        if (spec->index[0] != 0 && spec->index[0] != -1) {
            snprintf(message, message_cap, "'%s' is a vector (shape %s): its one row is row 0, not row %ld", n->name,
                     shape, spec->index[0]);
            snprintf(hint, hint_cap, "explain row 0 for the whole vector, or one element by its index");
            return false;
        }
        want = 0;
    }
    if (want != s->rank && want + 1 != s->rank) {
        snprintf(message, message_cap, "%zu indices do not fit '%s', which has shape %s", spec->n_index, n->name,
                 shape);
        snprintf(hint, hint_cap, "give %zu indices for one element or %zu for one row", s->rank, s->rank - 1);
        return false;
    }
    for (size_t i = 0; i < want; i++) {
        long v = spec->index[i], dim = (long)s->dim[i];
        long w = v < 0 ? v + dim : v;
        if (w < 0 || w >= dim) {
            snprintf(message, message_cap, "index %ld is out of range for axis %zu of '%s' (shape %s)", v, i,
                     n->name, shape);
            if (dim == 0)
                snprintf(hint, hint_cap, "axis %zu is empty: '%s' has no element to explain", i, n->name);
            else
                snprintf(hint, hint_cap, "valid indices are 0 to %ld", dim - 1);
            return false;
        }
        out->index[i] = (size_t)w;
    }
    out->n_index = want;
    out->kind = want == s->rank ? EXPLAIN_ELEMENT : EXPLAIN_ROW;
    return true;
}

bool plan_relabel(const Plan *plan, size_t node, const Labels *const *in_labels, Labels out[TENSOR_MAX_RANK],
                  Arena *arena) {
    const PlanNode *n = &plan->nodes[node];
    ASSERT(n->kind == PLAN_OP && n->constants && n->n_args <= OP_MAX_ARGS);
    OpProblem problem = {0};
    OpCheck chk = {.op = n->op, .n_inputs = n->n_args, .attrs = n->attrs, .arena = arena, .problem = &problem};
    memcpy(chk.constants, n->constants, sizeof(chk.constants));
    memcpy(chk.present, n->present, sizeof(chk.present));
    for (size_t i = 0; i < n->n_args; i++) {
        chk.shapes[i] = &plan->nodes[n->args[i]].shape;
        chk.labels[i] = in_labels[i];
    }
    // The shapes are the check's, which the rule accepted: only the labels can differ.
    if (!n->op->infer(&chk))
        return false;
    memcpy(out, chk.out_labels, sizeof(chk.out_labels));
    return true;
}

Labels plan_ids_of(const OpDef *op, const OpAttrs *attrs, const Shape *in_shape, const Labels *in_ids,
                   const Labels *in_labels) {
    if (op->keeps_ids)
        return *in_ids;
    if (!op->ids_along_last || in_shape->rank == 0)
        return (Labels){0};
    // argmax along another axis, or over a whole matrix, picks positions of something else.
    int last = (int)in_shape->rank - 1;
    for (size_t p = 0; p < OP_MAX_PARAMS; p++)
        if (op->params[p].kind == PARAM_AXIS && !(attrs->axis == last || (attrs->axis == KERNEL_ALL_AXES && last == 0)))
            return (Labels){0};
    return in_labels[last];
}
