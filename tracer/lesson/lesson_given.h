// lesson_given: what a lesson is given: the label lists under labels: (which givens and steps
// name for their rows and columns) and the tensors under given:, written out, or a shape with
// an init:.
#pragma once

#include <stdbool.h>

#include "lesson_loader.h"

// labels: a mapping of names to lists of words.
bool lesson_load_labels(Loader *L, const Node *node);
// rows: tokens (a list under labels:) or rows: [The, cat, sat] (inline); key names it in errors.
bool lesson_parse_label_ref(Loader *L, const char *key, const Node *node, const LabelList **out);
// The ids of a text: given's text (gt) as its values, one axis, and its tokens as the labels of
// that axis. False when out of memory.
bool lesson_set_given_ids(Arena *arena, LessonGiven *g, const GivenText *gt);
// A given with times: is made at most this many times (one per layer of a model).
#define GIVEN_MAX_TIMES 1000

// given: each given loaded on its own, so that every broken one is reported. A given with
// times: N is N givens, one per layer:
//
//     ln_1_weight{i}: {file: model.safetensors, tensor: "h.{i-1}.ln_1.weight", times: n_layer}
//
// is ln_1_weight1 .. ln_1_weightN, layer k's tensor h.(k-1).ln_1.weight in given k.
bool lesson_load_givens(Loader *L, const Node *node);
// The number a given holds, when it is a single number known at load (written, or a number of
// a config.json): for times:.
bool lesson_given_number(const Lesson *lesson, const char *name, double *out);
