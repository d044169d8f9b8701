// check_index: an indexing, x[...], as numpy writes it: whole numbers, slices, None, one list
// of indices or one tensor of them, checked against the tensor's axes.
#pragma once

#include <stddef.h>

#include "check_state.h"

// The node of the indexing e (EXPR_INDEX), or NO_NODE with the error.
size_t check_compile_index(Checker *c, const Expr *e);
