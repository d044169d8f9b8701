// lesson_train: a lesson's `train:` section, as written: which stage is the loss, which givens
// are trained, the optimizer and its settings, how many steps, and where each step's batch
// comes from. Checked against the steps later (run/train.c); here only its form.
//
//     train:
//       loss: loss
//       trained: [W_Q, W_K]
//       optimizer: adam
//       lr: 0.01
//       steps: 200
//       data:
//         ids: {draw: repeat, vocab: 16, batch: 64, seed: 1}
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yamldoc.h"

typedef struct Loader Loader;

// The most training steps a lesson may take: a class waits for a lesson, not for a model.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
// The fuzz build (-Dfuzz=true) explores the logic of training, not its length: the course's
// 300-step lessons, run in every mode under the sanitizers, pass the fuzzer's time limit.
#define LESSON_TRAIN_MAX_STEPS 40
#else
#define LESSON_TRAIN_MAX_STEPS 100000
#endif
// The most steps the table under the loss curve lists.
#define LESSON_TRAIN_MAX_SHOWN 16

typedef enum TrainOptimizer {
    TRAIN_SGD,    // PyTorch's SGD: momentum, weight_decay (added to the gradient)
    TRAIN_ADAM,   // PyTorch's Adam: weight_decay added to the gradient
    TRAIN_ADAMW,  // PyTorch's AdamW: weight_decay shrinks the weight itself
} TrainOptimizer;

typedef enum TrainDraw {
    TRAIN_DRAW_UNIFORM,    // every id drawn uniformly from 0 .. vocab - 1
    TRAIN_DRAW_REPEAT,     // the first half drawn so, the second half a copy of it
    TRAIN_DRAW_SHIFTED,    // each row its first s ids over and over, s running through shifts:
    TRAIN_DRAW_SEQUENCES,  // the rows written out, taken in turn, batch rows a step
    TRAIN_DRAW_TEXT,       // windows of a text file's bytes, each at a random place (before a held-out tail)
} TrainDraw;

// One given drawn afresh at every step, [batch, n]; its own values are the example batch that
// the trace shows after training.
typedef struct LessonTrainData {
    const char *name;
    const Node *key, *node;
    TrainDraw draw;
    size_t batch;     // rows a step; 0: the given's own
    uint64_t vocab;   // UNIFORM, REPEAT: ids 0 .. vocab - 1
    uint64_t seed;    // UNIFORM, REPEAT, SHIFTED: the batch of step s is drawn from seed + s
    size_t shift_lo, shift_hi;  // SHIFTED: row r of step s repeats every lo + (r + s) mod (hi - lo + 1)
    double *rows;     // SEQUENCES: n_rows rows of `length` ids
    size_t n_rows, length;
    const Node *rows_node;
    const unsigned char *text;  // TEXT: the file's bytes, each an id from 0 to 255
    size_t text_len;
    const char *text_path;  // TEXT: the file as it is read, and its name as the lesson writes it
    const char *text_name;
    // TEXT with validation: F: the last held bytes of the text are held out; windows are drawn
    // from the first text_len - held only, and the lesson's loss is measured on fixed windows
    // of the tail (train_validation.h). 0: nothing held out.
    double validation;
    const Node *validation_node;
    size_t held;
} LessonTrainData;

typedef struct LessonTrain {
    const Node *node;  // the train: mapping
    const char *loss;
    const Node *loss_node;
    const char **trained;
    const Node **trained_nodes;
    size_t n_trained;
    TrainOptimizer optimizer;
    const Node *optimizer_node;
    double lr, momentum, weight_decay, beta1, beta2, eps;
    double clip;  // the largest global gradient norm; 0: no clipping
    size_t steps;
    const Node *steps_node;
    LessonTrainData *data;
    size_t n_data;
    size_t shown[LESSON_TRAIN_MAX_SHOWN];  // the steps the table lists, increasing
    size_t n_shown;                        // 0: the tracer's choice
} LessonTrain;

// Read `train:` into L->lesson->train; false with a located error.
bool lesson_load_train(Loader *L, const Node *node);
