// progress_line: the progress of long work (base/progress.h) as one line on a terminal's
// standard error, redrawn in place with a carriage return and wiped when the work ends, so
// that nothing of it stays on the screen above the trace. The program installs it only when
// standard error is a terminal: a pipe, a file, a test or a golden file gets nothing.
//
//     if (isatty(STDERR_FILENO))
//         progress_line_install(stderr);
//     ... training draws "training 400/800  loss 1.3205  250 steps/s" on stderr ...
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "progress.h"

// Room for the longest line progress_line_format writes.
#define PROGRESS_LINE_CAP 512

// The line a report is shown as, cut to `width` columns:
//     edited: training 400/800  loss 1.3205  250 steps/s
void progress_line_format(const ProgressReport *report, size_t width, char *buf, size_t cap);
// Install a sink (progress_install) that draws on `terminal`, one column short of its width
// (a line that fills the last column would wrap on some terminals).
void progress_line_install(FILE *terminal);
// The sink progress_line_install installs, for a caller that sets its clock first (a test).
// There is one terminal: a second call draws on the new one.
ProgressSink progress_line_sink(FILE *terminal);
