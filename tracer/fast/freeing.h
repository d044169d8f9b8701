// freeing: the values nothing reads any more, let go during the run by the fast layer's
// schedule, so that a lesson that prints only its last stage holds only what is still to be
// read. A node not kept goes once its last reader (plan_last_readers) has run; a view's input
// lives as long as the view. A stage so freed keeps its shape and is marked released.
//
//     Freeing f;
//     freeing_init(&f, plan, keep, modes);   // false: out of memory
//     ... node j runs ...
//     freeing_release(&f, trace, j);
//     freeing_finish(&f);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "in_place.h"
#include "plan.h"
#include "trace.h"

// When each node's values may go: frees[starts[j] .. starts[j + 1]) are the nodes whose last
// reader is node j and that nothing reads after the run.
typedef struct Freeing {
    size_t *starts;    // n_nodes + 1
    size_t *frees;
    size_t *stage_of;  // each node's stage in the trace, SIZE_MAX for none (yet)
} Freeing;

// With keep (one per node: read after the run) and each node's mode. False when memory runs out.
bool freeing_init(Freeing *f, const Plan *plan, const bool *keep, const NodeMode *mode);
// Node j has run (its stage, if it is one, the trace's last): free the values nothing reads
// any more.
void freeing_release(Freeing *f, Trace *t, size_t j);
void freeing_finish(Freeing *f);
