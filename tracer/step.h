// step: the text trace one stage at a time in a terminal, for a class following along.
// Part of the tracer program, not of the library: it reads keys and writes to the terminal.
//
//     size_t at = 1;
//     Pages pages;
//     pipeline_run_file_pages(path, &opts, &out, &pages, &diag);
//     if (step_through(strbuf_str(&out), pages.ends, pages.n, colour, &at) == STEP_RESIZED)
//         ...trace again at the terminal's new width and step on from `at`...
#pragma once

#include <stdbool.h>
#include <stddef.h>

// Page 0 is the header, the last page the close, the pages between one stage each. Shows the
// header and the first stage, then waits: Enter or space the next stage, b the one before, a
// number and Enter that step, q quits; a stage taller than the terminal scrolls with the
// arrows (or j and k) and the page keys. stdin and stdout must be a terminal. *step is the
// step to start at (1-based) and, on return, the step shown last. Returns an exit status, or
// STEP_RESIZED when the terminal changed width: the caller traces again at the new width and
// calls again with the same *step.
#define STEP_RESIZED (-1)
int step_through(const char *text, const size_t *ends, size_t n_pages, bool colour, size_t *step);
