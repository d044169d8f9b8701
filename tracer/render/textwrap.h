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
// Narration, reflowed: the lines of a paragraph (up to a blank line) joined and wrapped to
// width; a list item ("- ", "* ", "1. ", "2) ") with the lines set in under it joined and
// wrapped under the item's text; a line set in by spaces (a formula, code) or a table row
// ('|') kept as it is, its indent kept on its continuation lines if it must wrap. A numbered
// line starts an item only at the start of a paragraph, in a list, or after a line that ends
// a sentence or in ':'; elsewhere it is a sentence going on ("of variance" / "1. A dot ...").
// A wrapped line never starts with a lone '-' or '=' (a list item, an underline) while an
// earlier space will do: the word before it goes down with it.
void textwrap_paragraph(StrBuf *out, const char *text, size_t indent, size_t width);
// Lines already laid out, each indented, none wrapped, without trailing spaces.
void textwrap_indent(StrBuf *out, const char *text, size_t indent);
// The width of the widest line of text.
size_t textwrap_block_width(const char *text);
// Blocks of lines next to each other (at most 256), each padded to its own width plus
// TEXTWRAP_GAP.
void textwrap_side_by_side(StrBuf *out, const StrBuf *blocks, size_t n, size_t indent);
