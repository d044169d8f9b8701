// yamldiff: what an edit changed in a lesson's YAML, key by key, for --diff to say first. Two
// trees of yamldoc are walked together: a mapping's keys matched by name, a list's items by
// place, or by name where every item is a mapping named by its first key (the steps, the
// claims), so that a step inserted or deleted is one change, not a shift of all after it. A
// change is named by its path from the top of the lesson, its values written in YAML's flow
// style when they are short:
//
//     train.lr: 0.01 -> 0.001
//     given.Q_0.values[2]: 0.5 -> 0.9
//     steps.A1.say: changed                  (a paragraph: too long to show)
//     train.clip: added: 1.0
//     steps.X2: removed
#pragma once

#include <stddef.h>

#include "util.h"
#include "yamldoc.h"

// The longest value shown, in columns; a longer one (a paragraph, a matrix) is only named.
#define YAMLDIFF_SHOWN_MAX 40

typedef enum YamlChangeKind {
    YAML_CHANGED,
    YAML_ADDED,    // only the edited lesson has it
    YAML_REMOVED,  // only the original has it
} YamlChangeKind;

typedef struct YamlChange {
    YamlChangeKind kind;
    const char *path;    // "train.lr", "given.ids.values[0][3]", "steps.A1.say"
    const char *before;  // the original's value in flow style, or NULL: absent or too long
    const char *after;   // the edited lesson's, the same way
} YamlChange;

typedef struct YamlDiff {
    Arena *arena;  // holds the paths and values
    YamlChange *changes;
    size_t n, cap;
} YamlDiff;

// The changes from a to b (either may be NULL: an empty file), in b's order, each key only
// the original has after the keys beside it. NULL when memory runs out.
YamlDiff *yamldiff_create(const Node *a, const Node *b);
void yamldiff_destroy(YamlDiff *d);  // accepts NULL
