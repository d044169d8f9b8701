// check_state: the state of one check (the Checker) that the checker's files share, and what
// they all do with it: place an error in the step being checked, add a plan node, and keep the
// lesson within its size limits. Internal to the checker (check.h is its interface).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "expr.h"
#include "lesson.h"
#include "plan.h"

// The most values all the stages of one lesson may hold together (8 GiB of doubles: a GPT-2
// block at n = 4096, whose four stages of attention scores hold 6 GiB, fits).
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PLAN_MAX_TOTAL_VALUES ((size_t)1 << 16)  // see TENSOR_MAX_VALUES
#else
#define PLAN_MAX_TOTAL_VALUES ((size_t)1 << 30)
#endif
#define NO_NODE ((size_t)-1)
// The node of a name whose given or step failed: anything that uses it fails quietly, since
// its error is already reported and a second one would only repeat it.
#define FAILED_NODE ((size_t)-2)

typedef struct Checker {
    const Lesson *lesson;
    Plan *plan;
    Diag *diag;
    const LessonStep *step;  // the step being compiled
    const LessonGiven *given;  // the given being checked; NULL for a step or a claim
    const PlanMemory *memory;  // what the plan may take; NULL: no limit
    size_t step_number;      // 1-based
    size_t first_node;       // the step's first node
    size_t total_values;
    size_t total_multiply_adds;  // of the matrix products so far
    size_t backward_work;        // stages visited and laid out by the backward passes so far
    bool uses_failed;  // the current step uses a name whose given or step failed
    bool past_limit;   // the lesson as a whole is too large: later errors would only repeat it
    // Names visible so far: givens, then each step once compiled.
    const char **names;
    size_t *name_node;
    size_t n_names;
    // The names hashed (open addressing; entry i + 1 for names[i], 0 empty), so that a
    // lesson of 100,000 steps that all use X is not 10^10 comparisons.
    size_t *name_slots;
    size_t cap_slots;  // a power of two, at least twice the names
    bool claiming;     // compiling a claim: its operations are worked out, not shown as stages
    // The backward passes laid out so far, one per differentiated y.
    struct Backward *backwards;
    size_t n_backwards;
} Checker;

// An error under the whole of e, or under e's operator or name; both return false.
bool check_expr_error(Checker *c, const Expr *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool check_token_error(Checker *c, const Expr *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// A new node at the end of the plan, its index in *index; NULL with an error when memory runs
// out or the plan would pass c->memory.
PlanNode *check_new_node(Checker *c, PlanKind kind, size_t *index);
// Refuse a lesson whose tensors together would pass PLAN_MAX_TOTAL_VALUES, with the error at
// e in the current step, or at the given g's name. Returns false.
bool check_total_too_big(Checker *c, const Expr *e, const LessonGiven *g);
// Refuse tensors too large to hold, saying how much they would need; counts those with values
// against PLAN_MAX_TOTAL_VALUES.
bool check_size(Checker *c, const Expr *e, const Shape *shape, bool has_values);
