// claim: whether each of a lesson's claims holds on the values a run computed, and if not,
// where and by how much, in words a learner reads under the stage:
//
//     Trace *t = run_plan(plan, digits, NULL, 0, NULL, &diag);
//     if (!t || !claim_judge(plan, t, &diag)) ...   // false only when memory runs out
//     ... t->claims[0].holds, t->claims[0].detail ("at [0, 3] 0.2462 != 0.2404 (largest difference 0.0058)")
#pragma once

#include <stdbool.h>

#include "diag.h"
#include "plan.h"
#include "trace.h"

// Fill trace->claims from the plan's claims. A claim holds when every value of its result is
// true (nonzero); a claim that fails is information for the trace, never an error.
bool claim_judge(const Plan *plan, Trace *trace, Diag *diag);
// Mark in keep (one per plan node) the nodes whose values claim_judge reads: each claim's truth
// value and, through its comparisons, the values it says are unequal.
void claim_needs(const Plan *plan, bool *keep);
