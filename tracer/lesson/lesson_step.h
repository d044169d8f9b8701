// lesson_step: the steps and the claims: each expression with its place in the file, and what
// a step asks besides (say:, rows:, cols:, document:, explain:, quiz:, show:, claim:).
#pragma once

#include <stdbool.h>

#include "lesson_loader.h"

// steps: a list of `- name: expression`, each loaded on its own.
bool lesson_load_steps(Loader *L, const NodePair *pair);
// One item of a list of steps: a step, or a block's application (`- use: layer`), appended
// to lesson->steps; false with a located error.
bool lesson_load_step(Loader *L, const Node *item);
// The result name of a step item (its key that is not say:, rows:, ...), or NULL.
const char *lesson_step_name(const Node *item);
// The step of an application's replace: that stands in for stage `original`: named `name`,
// its expression `value` read in `scope`.
bool lesson_load_replacement(Loader *L, const Node *key, const Node *value, const char *name, const char *original,
                             const LessonScope *scope);
// Room for one more step at the end of lesson->steps (zeroed), or NULL when memory runs out.
LessonStep *lesson_next_step(Loader *L);
// The claims: the steps' claim: keys first, then the items of claims: (node, which may be
// NULL), each loaded on its own.
bool lesson_load_claims(Loader *L, const Node *node);

// show: WORD, a step's or a given's: the picture it asks for and how much of it to show;
// false with a located error for a word that is none of them.
bool lesson_parse_show(Loader *L, const Node *node, PictureKind *show, StageView *view);
