// lesson_step: the steps and the claims: each expression with its place in the file, and what
// a step asks besides (say:, rows:, cols:, document:, explain:, quiz:, show:, claim:).
#pragma once

#include <stdbool.h>

#include "lesson_loader.h"

// steps: a list of `- name: expression`, each loaded on its own.
bool lesson_load_steps(Loader *L, const NodePair *pair);
// The claims: the steps' claim: keys first, then the items of claims: (node, which may be
// NULL), each loaded on its own.
bool lesson_load_claims(Loader *L, const Node *node);
