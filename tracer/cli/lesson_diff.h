// lesson_diff: what an edit changed, stage by stage, for `tracer --diff ORIGINAL.yaml EDITED.yaml`.
// Stages are matched by name; the values are compared bit for bit (nan equals nan), so two
// traces are "the same" exactly when every number of every stage is.
//
//     StrBuf out; strbuf_init(&out);
//     bool same = lesson_diff_traces(original, edited, "lessons/01.yaml", "mine.yaml", 4, false, &out);
#pragma once

#include <stdbool.h>

#include "trace.h"
#include "util.h"

// The largest tensor shown whole, before and after side by side (rows x columns, rank <= 2).
#define LESSON_DIFF_SIDE_BY_SIDE_ROWS 8
#define LESSON_DIFF_SIDE_BY_SIDE_COLS 6

// Appends the report to out (numbers with `digits` decimals), with the claims whose verdict
// changed. True when the traces have the same stages with the same shapes and values. With
// colour, it is coloured as git colours a diff (see diff_style): what the original has red,
// what the edit has green, the values that changed within a row in reverse video.
bool lesson_diff_traces(const Trace *a, const Trace *b, const char *a_name, const char *b_name, int digits, bool colour,
                    StrBuf *out);
