// check_names: what a name or a number in an expression stands for: the names visible so far
// (givens, then steps), numbers known before running (literals, True, pi, scalar givens and
// arithmetic on them), and how a node is written where another node uses it.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "check_state.h"

// Makes name stand for node from now on (FAILED_NODE for a given or step that failed). The
// loader has refused a name defined twice, so each name is new here.
bool check_add_name(Checker *c, const char *name, size_t node);
// The node a name stands for, NO_NODE for a name not (yet) defined.
size_t check_find_name(const Checker *c, const char *name);

bool check_is_whole(double v);
// Numbers known before running: literals, True/False/pi/inf, scalar givens, and arithmetic
// on those. False (with no error) when e is not such a number.
bool check_const_eval(Checker *c, const Expr *e, double *out);
// Does node n hold only whole numbers: a count, or a constant whose values are all whole?
bool check_counts_as_integer(const PlanNode *n);
// Has a check_const_eval that failed been explained already: by an error of its own, or by the
// error of a given or step it reads, which failed before? Then nothing more is said.
bool check_already_explained(const Checker *c);
// A constant node for a number or a list literal (nested lists of numbers); NO_NODE on an
// error.
size_t check_add_constant(Checker *c, const Expr *e);

// The node of a name in an expression (a given, an earlier step, or a constant such as pi),
// or NO_NODE with the error: a later step, the step itself, a function, an unknown name.
size_t check_compile_name(Checker *c, const Expr *e);

// How node n is written where it is an input, in shown work and in messages: its name, a
// number, or its expression (in brackets unless it reads as one value). NULL when memory runs
// out.
const char *check_display_name(Checker *c, const PlanNode *n);
