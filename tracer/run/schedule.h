// schedule: the seam through which a faster runner changes how run_plan holds values. The
// reference installs none: it computes every node into a tensor of its own and keeps every
// value to the end of the run, as a textbook reads the computation. The fast layer
// (fast/fast.c) installs one that reads some values in place (a .T that only products read is
// a view of its input) and frees the values nothing reads any more, with the same bits.
//
//     static const Schedule mine = {.start = ..., .value = ..., .ran = ..., .finish = ...};
//     schedule_install(&mine);   // NULL: the reference again
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "plan.h"
#include "tensor.h"
#include "trace.h"
#include "util.h"

// A schedule's state for one run, its own.
typedef struct ScheduleRun ScheduleRun;

// What a node's values are made from: the runner's trace so far (values of earlier nodes in
// trace->tensors), and where an operation's index lists and errors go.
typedef struct ScheduleNode {
    const Plan *plan;
    size_t i;              // the node
    Trace *trace;
    const Tensor **in;     // receives the node's inputs (room for OP_MAX_ARGS)
    Diag *diag;
} ScheduleNode;

typedef struct Schedule {
    // Before the first node: keep (one per node) marks the values read after the run (run.h),
    // explained the nodes whose work is shown. NULL when memory runs out.
    ScheduleRun *(*start)(const Plan *plan, const bool *keep, const bool *explained);
    // Node n->i's values made another way than computed into a tensor of their own: the
    // tensor, with n->in set; NULL with *made false to compute them as the reference does;
    // NULL with *made true and diag set when it fails.
    Tensor *(*value)(ScheduleRun *s, const ScheduleNode *n, bool *made);
    // Node i has run (and its stage, if it is one, is the trace's last): let go of the values
    // nothing reads any more.
    void (*ran)(ScheduleRun *s, Trace *trace, size_t i);
    void (*finish)(ScheduleRun *s);  // accepts NULL
} Schedule;

// Install a schedule for every later run (before the first lesson runs); NULL: the reference.
void schedule_install(const Schedule *schedule);
// The installed schedule, or NULL for the reference.
const Schedule *schedule_installed(void);
