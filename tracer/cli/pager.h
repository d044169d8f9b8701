// pager: the text trace one stage at a time in a terminal (--step), for a class following along.
// Part of the tracer program, not of the library: it reads keys and writes to the terminal.
//
//     size_t at = 1;
//     Pages pages;
//     pipeline_run_file_pages(path, &opts, &out, &pages, &diag);
//     if (pager_show(strbuf_str(&out), &pages, colour, &at) == PAGER_RESIZED)
//         ...trace again at the terminal's new width and step on from `at`...
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "pipeline.h"

// Page 0 is the header, the last page the close, the pages between one stage each; screen k
// (1-based) shows page k, with the header on the first and the close on the last. Shows the
// first screen, then waits: Enter or space the next stage, b the one before, a step's number
// as the trace prints it ("6", "1a") and Enter that step, q quits; a stage taller than the
// terminal scrolls with the arrows (or j and k) and the page keys. The status line names the
// stage in the lesson's own numbering: "step 6 of 7" (7 steps in the lesson, whichever are
// shown), "step 1a of 7", "given K, before step 1 of 7". stdin and stdout must be a terminal.
// *at is the screen to start at and, on return, the screen shown last. Returns an exit status,
// or PAGER_RESIZED when the terminal changed width: the caller traces again at the new width
// and calls again with the same *at.
#define PAGER_RESIZED (-1)
int pager_show(const char *text, const Pages *pages, bool colour, size_t *at);
