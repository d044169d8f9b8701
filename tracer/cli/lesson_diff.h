// lesson_diff: what an edit changed, for `tracer --diff ORIGINAL.yaml EDITED.yaml`: first the
// keys of the lesson the edit changed (yamldiff.h: `train.lr: 0.01 -> 0.001`), then, for a
// lesson that trains, the two loss curves on one scale and the last losses, then the claims
// whose verdict turned, then stage by stage what differs (a lesson that trains sums up its
// trained givens in one line and leaves its intermediate stages out). Stages are matched by
// name; the values are compared bit for bit (nan equals nan), so two traces are "the same"
// exactly when every number of every stage is. Every line fits the width.
//
//     LessonDiffSide sides[2] = {{original, original_yaml, "lessons/01.yaml"}, {edited, edited_yaml, "mine.yaml"}};
//     StrBuf out; strbuf_init(&out);
//     bool same = lesson_diff_traces(sides, 4, 80, false, &out);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"
#include "util.h"
#include "yamldoc.h"

// The largest tensor shown whole, before and after side by side (rows x columns, rank <= 2).
#define LESSON_DIFF_SIDE_BY_SIDE_ROWS 8
#define LESSON_DIFF_SIDE_BY_SIDE_COLS 6
// The most keys of the lesson listed as changed; past it, how many more.
#define LESSON_DIFF_KEYS_SHOWN 12
// Two loss curves go side by side when each has at least this many columns, else one above the
// other.
#define LESSON_DIFF_CURVE_COLUMNS 24

typedef struct LessonDiffSide {
    const Trace *trace;
    const Node *yaml;  // the lesson's YAML (its root), for the keys an edit changed; NULL: not compared
    const char *name;  // as the report names it
} LessonDiffSide;

// Appends the report of sides[0] (the original) against sides[1] (the edit) to out, numbers
// with `digits` decimals, every line at most `width` columns. True when the traces have the
// same stages with the same shapes and values. With colour, it is coloured as git colours a
// diff (see text_diff.h): what the original has red, what the edit has green, the values that
// changed within a row in reverse video.
bool lesson_diff_traces(const LessonDiffSide sides[2], int digits, size_t width, bool colour, StrBuf *out);
