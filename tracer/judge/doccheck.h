// doccheck: the numbers a document printed (a lesson's document: keys), checked against a
// trace that has run: chained against the exact values, and locally against the same
// operation applied to the document's own printed inputs.
//
//     Trace *t = run_plan(plan, digits, NULL, 0, NULL, &diag);
//     if (!t || !doccheck_trace(plan, t, &diag)) ...   // false only when memory runs out
#pragma once

#include <stdbool.h>

#include "diag.h"
#include "plan.h"
#include "trace.h"

// Compare every stage that carries document values; fills stage->document and the summary.
bool doccheck_trace(const Plan *plan, Trace *trace, Diag *diag);
// Mark in keep (one per plan node) the nodes whose values doccheck_trace reads: the givens and
// steps the document printed, and what the local check of each such step reads.
void doccheck_needs(const Plan *plan, bool *keep);
