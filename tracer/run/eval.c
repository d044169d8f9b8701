// eval: one plan node computed: a given's values, a constant, or an operation through its
// entry in the op table, whose refusal is located here in the lesson.
#include "eval.h"

#include <string.h>

#include "backward.h"

// A given's values; NULL with diag set when they could not be made.
static Tensor *given_tensor(const Plan *plan, const LessonGiven *g, Diag *diag) {
    Tensor *t = g->init == GIVEN_SHAPE_ONLY ? tensor_create_shape_only(&g->shape) : tensor_create(&g->shape);
    if (!t) {
        diag_out_of_memory(diag);
        return NULL;
    }
    GivenFileProblem problem;
    switch (g->init) {
    case GIVEN_VALUES:
        memcpy(t->data, g->values, t->size * sizeof(double));
        break;
    case GIVEN_ZEROS:
    case GIVEN_SHAPE_ONLY:
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
    case GIVEN_FILE:
        if (!g->file.tensor) {
            t->data[0] = g->file.number;  // a number of a .json file
        } else if (!given_file_widen(&g->file, t->data, &problem)) {
            given_file_report(&problem, &plan->lesson->doc->source, diag);
            tensor_destroy(t);
            return NULL;
        }
        break;
    }
    return t;
}

// A problem the operation reported while running, under the argument it is about (or the
// whole expression of the node).
static void locate_problem(const Plan *plan, const PlanNode *n, const OpProblem *p, Diag *diag) {
    if (p->out_of_memory) {
        diag_out_of_memory(diag);
        return;
    }
    ASSERT(p->at.kind == OP_TARGET_INPUT);  // what a computation refuses is always one of its inputs
    const Expr *e = n->args_at[p->at.index];
    plan_error_at(diag, plan->lesson, n->step, e->start, e->end - e->start, "%s", p->message);
    if (p->hint[0])
        diag_hint(diag, "%s", p->hint);
}

Tensor *eval_node(const Plan *plan, size_t i, Tensor *const *values, const Tensor **in, Arena *arena, Diag *diag) {
    const PlanNode *n = &plan->nodes[i];
    Tensor *out = NULL;
    switch (n->kind) {
    case PLAN_GIVEN:
        if (!(out = given_tensor(plan, n->given, diag)))
            return NULL;
        break;
    case PLAN_CONSTANT:
        if ((out = tensor_create(&n->shape)))
            memcpy(out->data, n->values, out->size * sizeof(double));
        break;
    case PLAN_OP:
        out = n->has_values ? tensor_create(&n->shape) : tensor_create_shape_only(&n->shape);
        break;
    case PLAN_GRAD:
        out = backward_gradient(plan, i, values);
        break;
    }
    if (!out) {
        diag_out_of_memory(diag);
        return NULL;
    }
    out->is_count = n->is_count;
    if (n->kind != PLAN_OP || !n->has_values)
        return out;  // a gradient is complete (and never a count)
    if (!eval_op_into(plan, i, values, in, out, arena, diag)) {
        tensor_destroy(out);
        return NULL;
    }
    return out;
}

bool eval_op_into(const Plan *plan, size_t i, Tensor *const *values, const Tensor **in, Tensor *out, Arena *arena,
                  Diag *diag) {
    const PlanNode *n = &plan->nodes[i];
    plan_operands(n, values, in);
    return eval_op_on(plan, i, in, out, arena, diag);
}

bool eval_op_on(const Plan *plan, size_t i, const Tensor *const *in, Tensor *out, Arena *arena, Diag *diag) {
    const PlanNode *n = &plan->nodes[i];
    ASSERT(n->kind == PLAN_OP && n->has_values);
    const char *names[OP_MAX_ARGS];
    for (size_t k = 0; k < n->n_args; k++)
        names[k] = plan->nodes[n->args[k]].display;
    OpProblem problem;
    op_problem_clear(&problem);
    OpRun r = {.op = n->op, .out = out, .in = in, .in_names = names, .n_in = n->n_args, .attrs = &n->attrs,
               .arena = arena, .problem = &problem};
    if (!n->op->compute(&r)) {
        locate_problem(plan, n, &problem, diag);
        return false;
    }
    return true;
}
