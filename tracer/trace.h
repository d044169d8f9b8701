// trace: what a lesson computed, stage by stage. Renderers read only this: every number,
// label, note and line of shown work is already here.
//
//     Trace *t = trace_create(plan, digits, &diag);   // runs the plan
//     render_text(t, out, colour);
//     trace_destroy(t);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "ops.h"
#include "plan.h"
#include "tensor.h"

typedef struct TraceStage {
    StageKind kind;
    const char *name;     // "Q", "weights.1"
    const char *number;   // "3", "3a"; "" for givens
    const char *expr;     // the stage's own expression text; NULL for givens
    const char *op;       // "matmul", "softmax"; NULL for givens and constants
    const char *op_about; // "matrix product: ..."
    const char *op_line;  // "[3, 4] @ [4, 3] -> [3, 3]"
    const char *say;      // narration (steps)
    const char *about;    // what a given is
    const Tensor *value;  // owned by the trace; data NULL for shape-only
    Labels labels[TENSOR_MAX_RANK];
    const char **notes;   // facts about the result, numbers already in the lesson's digits
    size_t n_notes;
    const char **work;    // shown work: the arithmetic of the explained elements
    size_t n_work;
} TraceStage;

typedef struct Trace {
    Arena *arena;
    const char *title;
    const char *source;  // NULL when absent
    const char *intro;   // NULL when absent
    const char *outro;   // NULL when absent
    const char *file;
    int digits;
    TraceStage *stages;
    size_t n_stages;
    Tensor **tensors;  // every node's value, owned
    size_t n_tensors;
} Trace;

// Run a checked plan with numbers printed to `digits` places. NULL with a located error when
// a value known only while running is wrong (an index out of range) or memory runs out.
// extra: explain requests besides the lesson's own (from the command line).
Trace *trace_create(const Plan *plan, int digits, const ExplainTarget *extra, size_t n_extra, Diag *diag);
void trace_destroy(Trace *trace);  // accepts NULL
