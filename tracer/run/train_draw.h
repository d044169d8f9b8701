// train_draw: the batch one training step sees in a drawn given: ids from the seeded generator
// of init: random (uniform, a second half repeating the first, or shifted copies), the rows a
// lesson writes out, taken in turn, or windows of a text's bytes at places drawn so (before a tail held out for validation,
// whose windows are fixed). Step s's batch depends on s alone, so training is
// the same bits however it is run.
//
//     Tensor *ids = ...;                 // [batch, n], allocated once
//     train_draw_batch(ids, &spec->data[0], s);
#pragma once

#include <stddef.h>

#include "lesson_train.h"
#include "tensor.h"

// out [batch, n] = the batch of training step `step` for the drawn given d.
void train_draw_batch(Tensor *out, const LessonTrainData *d, size_t step);

// The most batches a validation loss is measured on, each a forward pass at every measure.
#define TRAIN_VALIDATION_MAX_BATCHES 8

// How many batches of `rows` windows of n bytes the held-out tail of d gives: as many as fit
// in it without overlap, at least 1 and at most TRAIN_VALIDATION_MAX_BATCHES.
size_t train_validation_batches(const LessonTrainData *d, size_t rows, size_t n);

// out [rows, n] = validation batch b of `batches`: the batches' rows x batches windows are
// spread evenly over the tail, the first at its start and the last at its end (so they do not
// overlap when it has room for them all), row r of batch b the window b x rows + r.
void train_validation_batch(Tensor *out, const LessonTrainData *d, size_t b, size_t batches);
