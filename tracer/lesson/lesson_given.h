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
// given: each given loaded on its own, so that every broken one is reported.
bool lesson_load_givens(Loader *L, const Node *node);
