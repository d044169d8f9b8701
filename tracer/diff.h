// diff: a unified diff of two texts, for `tracer --check` against a golden file. The first
// hunk starts at the header of the stage where the texts first differ, so a teacher sees
// which stage changed before reading numbers.
#pragma once

#include <stdbool.h>

#include "util.h"

// true when a and b are equal; otherwise appends the diff to out and returns false. With
// colour, the diff is coloured as git colours one: removed lines red, added lines green, and
// the numbers that changed within a line highlighted.
bool diff_unified(const char *a, const char *b, const char *a_name, const char *b_name, bool colour, StrBuf *out);
// The stages of two text traces whose text differs, one line each ("  Step 6 weights:
// changed"), then the opening or closing text when that differs; nothing when equal.
void diff_stage_summary(const char *a, const char *b, const char *a_name, const char *b_name, StrBuf *out);
