// text_diff: a unified diff of two texts, for `tracer --check` against a golden file. The first
// hunk starts at the header of the stage where the texts first differ, so a teacher sees
// which stage changed before reading numbers.
#pragma once

#include <stdbool.h>

#include "util.h"

// git's colours for a diff (the defaults of its color.diff), for --check and --diff alike: the
// names of what is compared bold, a hunk's header cyan, what was there before red, what is
// there now green, and within a changed line only the numbers that changed in reverse video.
// Without colour every field is "", so the text is the same bytes as with no styling at all.
typedef struct TextDiffStyle {
    const char *names, *hunk, *before, *after, *changed, *changed_end, *reset;
} TextDiffStyle;
TextDiffStyle text_diff_style(bool colour);
// The two lines that open a diff: "--- a_name" and "+++ b_name".
void text_diff_names(StrBuf *out, const char *a_name, const char *b_name, bool colour);

// true when a and b are equal; otherwise appends the diff to out and returns false. With
// colour, the diff is coloured as git colours one: removed lines red, added lines green, and
// the numbers that changed within a line highlighted.
bool text_diff_unified(const char *a, const char *b, const char *a_name, const char *b_name, bool colour, StrBuf *out);
// The stages of two text traces whose text differs, one line each ("  Step 6 weights:
// changed"), then the opening or closing text when that differs; nothing when equal.
void text_diff_stage_summary(const char *a, const char *b, const char *a_name, const char *b_name, StrBuf *out);
