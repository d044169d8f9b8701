// check_call: an operation called in an expression (an operator, or a function with its
// arguments bound to parameters) checked by its shape rule and added to the plan, and
// check_compile, which compiles any expression: a call or an indexing compiles its arguments
// with it in turn.
#pragma once

#include <stddef.h>

#include "check_state.h"
#include "op.h"

// Where an op's arguments stand, to locate the problems its shape rule reports.
typedef struct CallSite {
    const Expr *call;
    const Expr *inputs[OP_MAX_ARGS];
    const Expr *params[OP_MAX_PARAMS];
} CallSite;


// The node of op applied to the nodes inputs[0..n_inputs), its shape from the op's shape rule
// (chk holds the constants and attributes already bound), or NO_NODE with the problem located
// at site. e is the whole expression, whose text the node keeps.
size_t check_add_op(Checker *c, const OpDef *op, const size_t *inputs, size_t n_inputs, OpCheck *chk,
                    const CallSite *site, const Expr *e);

// The node of any expression of the current step (or claim), or NO_NODE with the error.
size_t check_compile(Checker *c, const Expr *e);
