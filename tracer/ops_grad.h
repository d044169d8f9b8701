// ops_grad: the derivative of each operation of the op table, for the backward pass of
// grad(y, x). An operation's derivative says, given the gradient of y with respect to the
// operation's result (dout), how much of it reaches each tensor input (a vector-Jacobian
// product, computed by kernel_grad), and how a learner writes that term.
//
//     const OpGradDef *d = ops_grad(node->op);      // NULL: the op has no derivative
//     if (d && !(d->no_grad & (1u << k)))           // input k carries a gradient
//         d->grad(&(OpGrad){.din = dx, .input = k, .dout = dy, ...});   // dx += ...
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ops.h"
#include "tensor.h"

// One input's share of the gradient of one use of an operation.
typedef struct OpGrad {
    const OpDef *op;
    Tensor *din;                // the input's gradient so far: the share is added to it
    size_t input;               // which tensor argument
    const Tensor *dout;         // the gradient with respect to the result
    const Tensor *out;          // the result
    const Tensor *const *in;    // the tensor arguments
    size_t n_in;
    const OpAttrs *attrs;
} OpGrad;

typedef struct OpGradDef {
    // Adds the share of input g->input; false only when memory runs out.
    bool (*grad)(OpGrad *g);
    // Bit k set: input k carries no gradient (indices, positions, targets).
    unsigned no_grad;
    // How the share of input k is written, for the stage's formula: %g is the gradient of the
    // result, %y the result, %0 %1 %2 the inputs. NULL entries: "the gradient through OP".
    const char *formula[3];
} OpGradDef;

// The derivative of op, or NULL when it has none (argmax, numel, the builders without
// tensor inputs).
const OpGradDef *ops_grad(const OpDef *op);
