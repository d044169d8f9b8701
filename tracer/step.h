// step: the text trace one stage at a time in a terminal, for a class following along.
// Part of the tracer program, not of the library: it reads keys and writes to the terminal.
//
//     Pages pages;
//     pipeline_run_file_pages(path, &opts, &out, &pages, &diag);
//     step_through(strbuf_str(&out), pages.ends, pages.n, colour);
#pragma once

#include <stdbool.h>
#include <stddef.h>

// Page 0 is the header, the last page the close, the pages between one stage each. Shows the
// header and the first stage, then waits: Enter or space the next stage, b the one before, a
// number and Enter that step, q quits; a stage taller than the terminal scrolls with the
// arrows (or j and k) and the page keys. stdin and stdout must be a terminal. Returns an exit
// status.
int step_through(const char *text, const size_t *ends, size_t n_pages, bool colour);
