// render: a Trace turned into text for people, JSON for tools or a web page. Renderers read
// the trace only and compute nothing; they write into a StrBuf so that nothing is printed
// until the whole trace is ready.
#pragma once

#include <stdbool.h>

#include "trace.h"
#include "util.h"

typedef struct RenderOptions {
    bool colour;  // ANSI colours, for a terminal
} RenderOptions;

void render_text(const Trace *trace, const RenderOptions *opts, StrBuf *out);
void render_json(const Trace *trace, StrBuf *out);
// One self-contained web page: inline style and script, nothing fetched.
void render_html(const Trace *trace, StrBuf *out);
