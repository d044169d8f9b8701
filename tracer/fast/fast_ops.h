// fast_ops: what the fast layer knows of each operation, keyed by the operation's entry in the
// op table, as ggml's CPU backend keeps its own knowledge of each op. An operation's entry
// (ops/op.h) says what it is for a learner; this table says which results are the same values
// in another layout, readable in place, and which computations read values in place.
//
//     const FastOp *f = fast_op(node->op);
//     if (f->view) f->view(&x->shape, x_step, &node->attrs, step);   // .T: the steps swapped
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "op.h"

typedef struct FastOp {
    // The same values in another layout (.T, split_heads): the steps with which the result
    // reads its input's values in place, given the steps of those values.
    void (*view)(const Shape *in, const size_t *in_step, const OpAttrs *attrs, size_t *step);
    // merge_heads: where each value of its input lies among the result's row-major values, so
    // that a product whose only reader it is can write its values straight there.
    void (*input_steps)(const Shape *in, size_t *step);
    // The computation takes views (tensor.h) for its inputs and its result (@).
    bool reads_views;
} FastOp;

// What the fast layer knows of op: an entry with nothing set for an operation it has no
// knowledge of. Never NULL.
const FastOp *fast_op(const OpDef *op);

// The steps of a.T reading a's values in place, given their steps.
void fast_transpose_steps(const Shape *a, const size_t *a_step, size_t *step);
// The steps of split_heads(x, heads) reading x's values in place, given their steps.
void fast_split_heads_steps(const Shape *x, const size_t *x_step, size_t heads, size_t *step);
// Where each value of merge_heads' input x (..., heads, n, d_head) lies in its result.
void fast_merge_heads_input_steps(const Shape *x, size_t *step);
