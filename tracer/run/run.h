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
// end, because something prints, checks or quotes them after the run. Any other node's values
// are freed as soon as the last node that reads them (plan_last_readers) has run, so a lesson
// that prints only its last stage holds only what is still to be read; a stage so freed keeps
// its shape and is marked released. With keep, a .T or split_heads that only matrix products
// read is not copied but read by them in place, and a product that only merge_heads reads is
// written straight into its result (Trace.n_in_place counts them), when their values are all
// finite; the output is the same to the bit.
Trace *run_plan(const Plan *plan, int digits, const ExplainTarget *extra, size_t n_extra, const bool *keep,
                Diag *diag);
