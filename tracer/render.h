// render: a Trace turned into text for people or JSON for tools. Renderers read the trace
// only and compute nothing; they write into a StrBuf so that nothing is printed until the
// whole trace is ready.
#pragma once

#include <stdbool.h>

#include "trace.h"
#include "util.h"

typedef struct RenderOptions {
    bool colour;  // ANSI colours, for a terminal
} RenderOptions;

void render_text(const Trace *trace, const RenderOptions *opts, StrBuf *out);
void render_json(const Trace *trace, StrBuf *out);
// s as a JSON string ("null" for NULL), and a stage's kind as JSON names it: for other
// writers of JSON about a trace (save.c's manifest).
void render_json_string(StrBuf *out, const char *s);
const char *render_stage_kind(StageKind kind);
