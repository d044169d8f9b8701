// narrate: narration that quotes the trace. A placeholder in say:, about:, intro: or outro:
// ({scores[1]}, {weights[0, 1]:.2f}, {tokens[argmax(weights[0])]}, {shape(X)}) is an
// expression in the lesson's own language, checked and computed like a step and then written
// into the text, so the narration follows every edit of the numbers.
//
//     Narrator *n = narrate_prepare(lesson, &diag);   // placeholders become hidden steps
//     Plan *plan = plan_create(lesson, &diag);        // ... checked like any step
//     narrate_check(n, plan, &diag);                  // a number where a number is needed
//     Trace *t = trace_create(plan, ...);             // ... and computed with the rest
//     narrate_apply(n, plan, t, &diag);               // the text written, hidden stages dropped
//     narrate_destroy(n);
//
// Hidden steps come after every step of the lesson, so they never change a stage's number.
#pragma once

#include <stdbool.h>

#include "diag.h"
#include "lesson.h"
#include "plan.h"
#include "trace.h"

typedef struct Narrator Narrator;

// Split every narration of the lesson and append one hidden step per placeholder. NULL with a
// located error when a placeholder does not parse (or memory runs out).
Narrator *narrate_prepare(Lesson *lesson, Diag *diag);
// Every placeholder that must give one number gives one. False with a located error.
bool narrate_check(const Narrator *n, const Plan *plan, Diag *diag);
// Write the narration of the trace with the computed values, and drop the hidden stages.
bool narrate_apply(const Narrator *n, const Plan *plan, Trace *trace, Diag *diag);
// Mark in keep (one per plan node) the hidden steps whose values narrate_apply writes.
void narrate_needs(const Narrator *n, const Plan *plan, bool *keep);
void narrate_destroy(Narrator *n);  // accepts NULL
