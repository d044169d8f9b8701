// train_draw: the batch one training step sees in a drawn given: ids from the seeded generator
// of init: random (uniform, a second half repeating the first, or shifted copies), the rows a
// lesson writes out, taken in turn, or windows of a text's bytes at places drawn so. Step s's batch depends on s alone, so training is
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
