// render: a Trace turned into text for people, JSON for tools or a web page. Renderers read
// the trace only and compute nothing; they write into a StrBuf so that nothing is printed
// until the whole trace is ready.
//
//     RenderOptions ro = {.width = 80};
//     render_text(trace, &ro, &out);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"
#include "util.h"

// The text trace fits a width: the terminal's, or --width.
#define RENDER_DEFAULT_WIDTH 80
#define RENDER_MIN_WIDTH 40
#define RENDER_MAX_WIDTH 400

typedef struct RenderOptions {
    bool colour;        // ANSI colours, for a terminal
    bool truecolour;    // 24-bit colours (COLORTERM=truecolor); else the 256-colour cube
    size_t width;       // columns every line fits in; 0 is RENDER_DEFAULT_WIDTH
    bool heatmap;       // a picture of every tensor, not only of attention weights
    bool brief;         // hide intermediate stages and the givens' values
    const bool *shown;  // one per stage: print it; NULL prints every stage
} RenderOptions;

// Whether the text trace prints the values of a stage of this kind, when the choice of stages
// (RenderOptions.shown) keeps it: --brief hides the intermediate stages and the givens' values.
bool render_text_prints_values(const RenderOptions *opts, StageKind kind, bool chosen);

void render_text(const Trace *trace, const RenderOptions *opts, StrBuf *out);
// The same text in pages, for stepping through it: the header, then one page per stage shown,
// then the close (the outro and the document check; it may be empty). ends (room for
// trace->n_stages + 2) receives where each page ends in out, and stages (the same room, or
// NULL) the index in trace->stages of the stage each page shows (SIZE_MAX for the header and
// the close); returns the number of pages.
size_t render_text_pages(const Trace *trace, const RenderOptions *opts, StrBuf *out, size_t *ends, size_t *stages);
// The trace as JSON; shown (trace->n_stages flags, or NULL for all) keeps only the stages a
// choice of stages (--only, --from, --to) named.
void render_json(const Trace *trace, const bool *shown, StrBuf *out);
// s as a JSON string ("null" for NULL), and a stage's kind as JSON names it: for other
// writers of JSON about a trace (save.c's manifest).
void render_json_string(StrBuf *out, const char *s);
const char *render_stage_kind(StageKind kind);
// `, "kind": "gradient", "of": "loss", "wrt": "W", "expr": "..."` of a stage (of and wrt for a
// gradient stage only).
void render_json_kind(StrBuf *out, const TraceStage *s);
// One self-contained web page: inline style and script, nothing fetched.
void render_html(const Trace *trace, StrBuf *out);
