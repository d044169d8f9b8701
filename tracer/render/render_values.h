// render_values: what the text trace's files share: the context every part reads (the
// trace, the options, the style, the width) and the values of a tensor drawn as a table, a
// picture or bars (render_values.c), for render_text.c, which lays out the rest of the page.
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "format.h"
#include "heatmap.h"
#include "render.h"
#include "trace.h"

typedef struct TextStyle {
    const char *bold, *dim, *cyan, *green, *yellow, *red, *reset;
} TextStyle;

// The notation of the tensor last formatted, chosen once from all its values (notation_of).
typedef struct Notation {
    const Tensor *t;
    FormatStyle style;
    // Drawn as a whole picture (whole_picture) without its table: the columns the table would
    // need, said under the picture's legend.
    size_t pictured_width;
    bool quiet_said;  // the page has said once how to see a quiet stage's values
} Notation;

// What every part of the renderer reads: the trace, the options, the style and the width.
typedef struct TextCtx {
    const Trace *tr;
    const RenderOptions *opts;
    TextStyle st;
    size_t width;       // what this part of the page must fit in
    size_t page_width;  // the whole page's (--width)
    Notation *notation;
    // The tokens the values being drawn are ids of (TraceStage.ids_of): each printed as its
    // token. NULL: numbers.
    const Labels *ids;
    // The stage's own view of its values (TraceStage.view, .digits): its decimals (-1: the
    // lesson's), as percentages, or only its corners.
    int digits;
    bool percent, corners;
} TextCtx;

// Display width of UTF-8 text, as a terminal shows it.
static inline size_t text_width(const char *s) {
    return format_display_width(s, strlen(s));
}

static inline void text_pad(StrBuf *out, size_t n) {
    strbuf_repeat(out, " ", n);
}

// Formatted text wrapped to the width of this part of the page (textwrap_line).
void text_wrapf(const TextCtx *c, StrBuf *out, size_t indent, size_t hang, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

// How a tensor is drawn: numbers in a table, with cells coloured by value, with a shade
// picture beside it, or as bars. One scale per tensor.
typedef enum Picture { PIC_TABLE, PIC_COLOUR, PIC_SHADES, PIC_BARS } Picture;

typedef struct Drawing {
    Picture picture;
    Heatmap heat;
    bool under;  // a shade picture under its table, even where it would fit beside it
    // A picture only where the table cannot show every column: a distribution, which is
    // never cut (its picture, drawn whole, takes the table's place).
    bool whole_only;
    bool picture_only;  // show: picture: the picture drawn whole, never the table
} Drawing;

// A table, with no picture.
extern const Drawing TEXT_TABLE_ONLY;

// How the stage's values are drawn: its show:, the options and the terminal.
Drawing text_drawing_for(const TextCtx *c, const TraceStage *s);
// t's values (the stage's, or its document's with decimals: the places each was printed to),
// from column indent: a number, a vector, a matrix, or one matrix per leading index side by
// side, as draw says, with the legend of its picture under it.
void text_values(const TextCtx *c, StrBuf *out, const TraceStage *s, const Tensor *t, const int *decimals,
                 size_t indent, const Drawing *draw);
