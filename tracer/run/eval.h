// eval: the value of one node of a plan, from the values of the nodes before it. The runner
// builds the trace with it; the document check re-runs steps on printed numbers with it.
//
//     const Tensor *in[OP_MAX_ARGS];
//     Tensor *v = eval_node(plan, i, values, in, arena, &diag);   // NULL: diag says why
#pragma once

#include "diag.h"
#include "plan.h"
#include "tensor.h"
#include "util.h"

// Compute node i of plan: values holds one tensor per earlier node; in receives the node's
// inputs (room for OP_MAX_ARGS). Index lists built while running go in arena. NULL with a
// located error when a value known only now is wrong (an index out of range), or out of memory.
Tensor *eval_node(const Plan *plan, size_t i, Tensor *const *values, const Tensor **in, Arena *arena, Diag *diag);
// Compute operation node i of plan into out, made by the caller in the node's shape (the fast
// layer passes a view to an operation whose computation reads them). False with a located
// error, as eval_node.
bool eval_op_into(const Plan *plan, size_t i, Tensor *const *values, const Tensor **in, Tensor *out, Arena *arena,
                  Diag *diag);
// The same with the inputs given: in[k] stands for the node's k-th argument, in its place.
bool eval_op_on(const Plan *plan, size_t i, const Tensor *const *in, Tensor *out, Arena *arena, Diag *diag);
