// render_train: what training did, as text: the setup, the loss curve drawn with block
// characters in the trace's width, and a table of the loss at chosen steps; and the stage
// that draws a trained given as it was before training.
//
//     render_train_text(trace->training, 4, 80, out);
#pragma once

#include <stddef.h>

#include "trace.h"
#include "util.h"

// Rows of the loss curve: each row holds eight heights of a block character.
#define RENDER_TRAIN_CHART_ROWS 8

// The training record as text, each line indented by `indent` and fitted to `width`; numbers
// with `digits` decimals.
void render_train_text(const TraceTraining *t, int digits, size_t indent, size_t width, StrBuf *out);
// The same without the curve, for the web page, which draws it as a picture (render_train_svg).
void render_train_text_without_chart(const TraceTraining *t, int digits, size_t indent, size_t width,
                                     StrBuf *out);
// The curve of `done` losses (at least one) drawn from lo (the bottom row's first eighth) to hi
// (the top row), each line indented by `indent` and fitted to `width`: --diff draws two on one
// scale.
void render_train_chart(const double *losses, size_t done, double lo, double hi, int digits, size_t indent,
                        size_t width, StrBuf *out);
// The loss curve as an inline SVG picture (a line from step 0 to the last), for the web page.
void render_train_svg(const TraceTraining *t, int digits, StrBuf *out);
// The stage a trained given's values before training are drawn as, in text and on the page:
// the given's own name and labels, with the values it started from.
TraceStage render_train_before(const Trace *tr, const TraceTrainGiven *g);
// The step each column of a chart `columns` wide shows, of `steps` steps: column k shows
// step k * steps / columns (every step when there is room for each).
size_t render_train_column_step(size_t k, size_t columns, size_t steps);
