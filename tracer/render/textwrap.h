// textwrap: text laid out for a terminal of a given width. Lines wrap at spaces with a hanging
// indent; narration keeps its author's lines while they fit and is reflowed where they do not;
// blocks of lines that are already laid out (boxed matrices) are indented as they are or set
// side by side. Widths are display columns (format_display_width): 猫 takes two, a colour
// escape none.
//
//     textwrap_line(out, "note: rows sum to 1, 1 and 1", 28, 4, 10, 24);
//     // "    note: rows sum to 1,\n          1 and 1\n"
#pragma once

#include <stddef.h>

#include "util.h"

// The fewest columns a wrapped line gets, however deep its indent: words stay readable.
#define TEXTWRAP_MIN_COLUMNS 20
// Columns between blocks set side by side.
#define TEXTWRAP_GAP 4

// One line of text (no newline in it) wrapped to `width`: the first line indented by
// `indent`, the rest by `hang`. A word longer than a whole line is cut where the line ends.
// Trailing spaces are dropped; an empty line is a lone newline.
void textwrap_line(StrBuf *out, const char *s, size_t len, size_t indent, size_t hang, size_t width);
// Narration: lines kept while they fit; a block of lines (up to a blank line, or a line that
// starts a block of its own: a list item, or a line set in by spaces) with a line too wide is
// reflowed as one paragraph. A line set in by spaces keeps its indent on its continuation lines.
void textwrap_paragraph(StrBuf *out, const char *text, size_t indent, size_t width);
// Lines already laid out, each indented, none wrapped, without trailing spaces.
void textwrap_indent(StrBuf *out, const char *text, size_t indent);
// The width of the widest line of text.
size_t textwrap_block_width(const char *text);
// Blocks of lines next to each other (at most 256), each padded to its own width plus
// TEXTWRAP_GAP.
void textwrap_side_by_side(StrBuf *out, const StrBuf *blocks, size_t n, size_t indent);
