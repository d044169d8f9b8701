// pipeline: the whole path from a lesson to rendered output, for main, the fuzz target and
// the tests: load -> check -> run -> render. Nothing is written to out unless every stage
// succeeded, so a broken lesson never leaves a half-printed trace.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "util.h"

typedef enum OutputFormat {
    OUTPUT_TEXT,
    OUTPUT_JSON,
    OUTPUT_HTML,
} OutputFormat;

typedef struct PipelineOptions {
    OutputFormat format;
    int digits;  // -1: the lesson's digits, or 4
    bool colour;
    // --explain requests: "scores[0,1]" (an element), "scores[0]" (a row), "scores" (all).
    const char *const *explain;
    size_t n_explain;
} PipelineOptions;

// Read and trace the lesson at path. Returns a STATUS_* code; on failure diag says why.
int pipeline_run_file(const char *path, const PipelineOptions *opts, StrBuf *out, Diag *diag);
// The same from bytes already in memory (path only names them in messages).
int pipeline_run_bytes(const char *path, const char *bytes, size_t len, const PipelineOptions *opts,
                       StrBuf *out, Diag *diag);
