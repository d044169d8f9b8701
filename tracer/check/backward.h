// backward: reverse-mode differentiation over a lesson's own graph, for grad(y, x).
//
// The checker lays the backward pass out as plan nodes of kind PLAN_GRAD, one per node on a
// differentiable way from the x's to y, in backward order: each gathers the shares its uses
// pass back (each operation's .grad in the op table). Running them is running the plan; this
// module finds the way at check time and computes a gradient node at run time (gradcheck.h
// checks it).
//
//     bool *on = ...;   // plan->n_nodes entries
//     size_t blocker;
//     if (backward_path(plan, n_nodes, y, wrt, n_wrt, on, &blocker) == BACKWARD_NO_PATH) ...
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "plan.h"
#include "tensor.h"

typedef enum BackwardPath {
    BACKWARD_OK,
    BACKWARD_NO_PATH,        // y does not depend on any of the x's through a gradient
    BACKWARD_NO_DERIVATIVE,  // the way passes through an operation without a derivative
    BACKWARD_OUT_OF_MEMORY,
} BackwardPath;

// Marks on[v] for every node v among the first n_nodes that lies on a differentiable way from
// one of wrt[0..n_wrt) to y (y and the x's included). Indices, positions and targets carry no
// gradient, so a way through them does not count. NO_DERIVATIVE: *blocker is the first node
// on the way without a derivative (argmax, or a gradient: second derivatives are not traced).
BackwardPath backward_path(const Plan *plan, size_t n_nodes, size_t y, const size_t *wrt, size_t n_wrt,
                           bool *on, size_t *blocker);

// The value of gradient node i (PLAN_GRAD) from the values of earlier nodes; NULL when memory
// runs out.
Tensor *backward_gradient(const Plan *plan, size_t i, Tensor *const *values);
