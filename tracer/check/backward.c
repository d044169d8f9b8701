// backward: the way from x to y, the gradient nodes' values, and their finite-difference check.
#include "backward.h"

#include <math.h>
#include <string.h>

#include "util.h"

// Does input k of node n carry a gradient back to its argument? Unknown derivatives count as
// carrying one, so that the way through them is found and refused.
static bool carries_gradient(const PlanNode *n, size_t k) {
    return n->kind == PLAN_GRAD || !(n->op->no_grad & (1u << k));
}

static bool has_derivative(const PlanNode *n) {
    return n->kind == PLAN_OP && n->op->grad;
}

BackwardPath backward_path(const Plan *plan, size_t n_nodes, size_t y, const size_t *wrt, size_t n_wrt,
                           bool *on, size_t *blocker) {
    ASSERT(y < n_nodes);
    bool *depends = util_calloc(n_nodes, sizeof(bool));
    if (!depends)
        return BACKWARD_OUT_OF_MEMORY;
    // on: first, what y needs (backwards from y); then kept where it also depends on an x
    memset(on, 0, n_nodes * sizeof(bool));
    on[y] = true;
    for (size_t u = y + 1; u-- > 0;) {
        const PlanNode *n = &plan->nodes[u];
        if (!on[u] || (n->kind != PLAN_OP && n->kind != PLAN_GRAD))
            continue;
        for (size_t k = 0; k < n->n_args; k++)
            if (carries_gradient(n, k))
                on[n->args[k]] = true;
    }
    size_t first = y;
    for (size_t i = 0; i < n_wrt; i++) {
        depends[wrt[i]] = true;
        first = wrt[i] < first ? wrt[i] : first;
    }
    for (size_t v = first; v <= y; v++) {
        const PlanNode *n = &plan->nodes[v];
        if (n->kind == PLAN_GRAD && depends[n->grad_of])
            depends[v] = true;
        if (n->kind == PLAN_OP || n->kind == PLAN_GRAD)
            for (size_t k = 0; k < n->n_args && !depends[v]; k++)
                depends[v] = carries_gradient(n, k) && depends[n->args[k]];
    }
    for (size_t v = 0; v < n_nodes; v++)
        on[v] = on[v] && depends[v];
    util_free(depends);
    if (!on[y])
        return BACKWARD_NO_PATH;
    // Every operation that passes a gradient from the way on to the way needs a derivative.
    for (size_t u = first; u <= y; u++) {
        const PlanNode *n = &plan->nodes[u];
        if (!on[u] || (n->kind != PLAN_OP && n->kind != PLAN_GRAD))
            continue;
        for (size_t k = 0; k < n->n_args; k++)
            if (carries_gradient(n, k) && on[n->args[k]] && !has_derivative(n)) {
                *blocker = u;
                return BACKWARD_NO_DERIVATIVE;
            }
    }
    return BACKWARD_OK;
}

Tensor *backward_gradient(const Plan *plan, size_t i, Tensor *const *values) {
    const PlanNode *n = &plan->nodes[i];
    ASSERT(n->kind == PLAN_GRAD);
    Tensor *d = tensor_create(&n->shape);
    if (!d)
        return NULL;
    if (n->n_args == 0) {
        kernel_fill(d, 1.0);  // d y / d y
        return d;
    }
    for (size_t k = 0; k < n->n_args; k++) {
        const PlanNode *use = &plan->nodes[n->grad_use[k]];
        const Tensor *in[EXPR_MAX_ARGS];
        ASSERT(use->n_args <= ARRAY_LEN(in));
        for (size_t a = 0; a < use->n_args; a++)
            in[a] = values[use->args[a]];
        OpGrad g = {.op = use->op, .din = d, .input = n->grad_use_input[k], .dout = values[n->args[k]],
                    .out = values[n->grad_use[k]], .in = in, .n_in = use->n_args, .attrs = &use->attrs};
        if (!use->op->grad(&g)) {
            tensor_destroy(d);
            return NULL;
        }
    }
    return d;
}
