// train_explain: one weight's update shown with its numbers, as `--explain W_Q[0, 1]@3` asks:
// the request checked against the lesson's train: section, and the optimizer's arithmetic for
// that weight at that step (optimizer.h) written out as lines of the training record.
//
//     TrainExplain q;
//     if (!train_explain_resolve(lesson, plan, "W_Q[0,1]@3", "W_Q", &spec, 3, &q, &diag)) ...
//     ... training calls train_explain_write at step 3 ...
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "lesson.h"
#include "optimizer.h"
#include "plan.h"
#include "trace.h"

// One update to show: element `element` (flat) of trained given `trained` at training step
// `step` (from 0).
typedef struct TrainExplain {
    const char *text;  // as the command line wrote it
    size_t trained;    // the index of the given in train:'s trained list
    size_t index[TENSOR_MAX_RANK];
    size_t rank;
    size_t element;
    size_t step;
    int digits;  // the numbers of the work with --digits' decimals; -1: each in full, exact
} TrainExplain;

// What clipping did at the step: the global gradient norm and the scale every gradient took.
typedef struct TrainClip {
    double clip;   // the largest norm allowed; 0: no clipping
    double norm;   // sqrt of the sum of every squared entry of every trained given's gradient
    double scale;  // clip / (norm + 1e-6)
    bool applied;  // scale < 1: every gradient was multiplied by it
} TrainClip;

// Resolve the request `text` (the given `name`, its indices in spec, the step) against the
// lesson's train:; false with a usage error in diag when it names no trained weight or no step.
bool train_explain_resolve(const Lesson *lesson, const Plan *plan, const char *text, const char *name,
                           const ExplainSpec *spec, long step, TrainExplain *out, Diag *diag);
// The words of `out->element` (already set) from what the optimizer did: `raw_g` the gradient
// before clipping; false when memory runs out.
bool train_explain_write(const TrainExplain *q, const LessonTrain *spec, const OptimizerRule *r,
                         const OptimizerWork *k, double raw_g, const TrainClip *clip, Arena *arena, TraceUpdate *out);
// The element's name as the trace prints it: "W_Q[0, 1]"; NULL when memory runs out.
const char *train_explain_element(const TrainExplain *q, const LessonTrain *spec, Arena *arena);
