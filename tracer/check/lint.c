// lint: consistency warnings on a checked plan.
#include "lint.h"

#include <string.h>

#include "format.h"

// A key matrix by its name: K, or K_something (K_cache, K_1).
static bool names_keys(const char *name) {
    return name && name[0] == 'K' && (name[1] == '\0' || name[1] == '_');
}

// d_k scales the scores by sqrt(d_k) because the keys are d_k wide; after an edit to one of
// them the two can part, and the scaling no longer means what the formula says.
static void lint_d_k(const Plan *plan, Diag *diag) {
    const PlanNode *d_k = NULL;
    for (size_t i = 0; i < plan->n_nodes && !d_k; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (n->kind == PLAN_GIVEN && strcmp(n->name, "d_k") == 0 && n->shape.rank == 0 && n->given->values)
            d_k = n;
    }
    if (!d_k)
        return;
    double value = d_k->given->values[0];
    for (size_t i = 0; i < plan->n_nodes; i++) {
        const PlanNode *n = &plan->nodes[i];
        if (!n->is_stage || n->stage_kind == STAGE_INTERMEDIATE || !names_keys(n->name) || n->shape.rank < 1)
            continue;
        size_t width = n->shape.dim[n->shape.rank - 1];
        if ((double)width == value)
            continue;
        char v[64], shape[64];
        format_short(value, v, sizeof(v));
        shape_format(&n->shape, shape, sizeof(shape));
        const Node *at = d_k->given->value;
        diag_warning(diag, plan->lesson->path, at->line, at->col,
                     "d_k is %s, but %s has %zu columns (shape %s): the scores are divided by sqrt(%s), not by "
                     "the square root of the keys' width",
                     v, n->name, width, shape, v);
        return;  // one warning says it; the other key matrices are usually the same width
    }
}

void lint_plan(const Plan *plan, Diag *diag) {
    lint_d_k(plan, diag);
}
