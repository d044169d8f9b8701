// run: a checked Plan evaluated stage by stage into a Trace (trace.h), with every note and
// every line of shown work the lesson and the command line ask for.
//
//     Trace *t = run_plan(plan, 4, NULL, 0, NULL, &diag);   // NULL: diag says why
//     ...
//     trace_destroy(t);
#pragma once

#include <stddef.h>

#include "diag.h"
#include "plan.h"
#include "trace.h"

// Run a checked plan with numbers printed to `digits` places. NULL with a located error when
// a value known only while running is wrong (an index out of range) or memory runs out.
// extra: explain requests besides the lesson's own (from the command line). The document
// check (doccheck.h) is a separate pass over the result.
// keep (one per plan node, or NULL for all): the nodes whose values the trace must hold to the
// end, because something prints, checks or quotes them after the run. The reference keeps
// every value and computes every node into a tensor of its own whatever keep says; an
// installed schedule (schedule.h: the fast layer's) may free any other node's values once
// its last reader (plan_last_readers) has run, the stage keeping its shape and marked
// released, and may read values in place (Trace.n_in_place counts them), to the same bits.
Trace *run_plan(const Plan *plan, int digits, const ExplainTarget *extra, size_t n_extra, const bool *keep,
                Diag *diag);
