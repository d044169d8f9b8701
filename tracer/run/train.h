// train: a lesson's train: section (lesson_train.h) run before its trace. The lesson's own
// plan, checked once, is the model; every step draws its batches into the drawn givens, runs
// the plan forward to the loss and back (the op table's derivatives, summed in the order
// grad() sums them), and moves each trained given by the optimizer's rule, PyTorch's to the
// letter. No parsing or checking happens per step, and every tensor is made once, before the
// first step.
//
//     TraceTraining *t = train_lesson(lesson, plan, NULL, 0, cache_dir, &diag);  // NULL: diag says why
//     ... trace the lesson: its trained givens now hold their trained values ...
//     trace->training = t;   // the trace owns it from here
#pragma once

#include "diag.h"
#include "lesson.h"
#include "plan.h"
#include "trace.h"
#include "train_explain.h"

// Check lesson->train against plan (the loss a single number that each trained given
// reaches through derivatives), train, and give each trained given its trained values
// (lesson->givens[k] then holds them as values:). The record of the training, or NULL with
// a located error. A loss that stops being finite ends training with a note in the record,
// not an error: the steps before it are kept. explain: the updates to write out, each at its
// step (train_explain.h), into the record's updates in the same order. cache_dir: where
// trainings are kept (train_cache.h), read instead of training again when the same one is
// there and stored when it is not; NULL: none. (trace_training_destroy frees the record.)
TraceTraining *train_lesson(Lesson *lesson, const Plan *plan, const TrainExplain *explain, size_t n_explain,
                            const char *cache_dir, Diag *diag);
