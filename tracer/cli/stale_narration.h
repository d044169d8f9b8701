// stale_narration: --lint's check that the narration follows the numbers. A student edits a
// given and runs the lesson again: every number the narration states about the computation
// must follow. Narration quotes the trace through placeholders ({scores[1]}, {shape(X)}); a
// number typed as fixed text goes stale. The check traces the lesson, then edits of it (each
// given's values changed in turn, and one more row for each label list that labels givens),
// and reports each number of fixed text that equals a value of the trace, at the number's
// own precision, which an edit changes:
//
//     StaleReport report;
//     int status = stale_lint_file("lessons/02_the_cat_sat.yaml", &opts, &report, &diag);
//     // diag: the lesson's warnings, and an error at each stale number (with a hint)
//
// What counts as a number that states a value: "0.62" and "40%" (judged to their last digit:
// "1.00" equals 0.9996, "40%" 0.3984); a whole number only equal to an exact whole value; a
// single digit only after '=' ("sqrt(d_k) = 2"), as "row 0", "two heads" and "sum to 1" are
// not about whatever value happens to be 0, 2 or 1. Words in double quotes quote the document
// or name a token, and a paragraph that says it works from "printed numbers" quotes the
// document's own numbers, which no edit changes: neither is read.
#pragma once

#include <stddef.h>

#include "diag.h"
#include "pipeline.h"

typedef struct StaleReport {
    size_t numbers;       // numbers of fixed text read
    size_t edits;         // edits of the lesson traced and compared
    size_t edits_failed;  // edits that do not run (a given used as an index, say): not compared
    size_t stale;         // numbers an edit changes
    StrBuf failed;        // one line per edit that does not run: what it was, and why it stops
} StaleReport;

// The whole lint of the lesson at path: its warnings, and the stale numbers of its narration,
// each an error in diag at the number. STATUS_OK when the lesson traces and no number is stale
// (diag may still hold warnings); STATUS_LESSON_ERROR with stale numbers or a lesson that does
// not trace; STATUS_USAGE_ERROR when it cannot be read or memory runs out. Finish report with
// stale_report_finish whatever the status.
int stale_lint_file(const char *path, const PipelineOptions *opts, StaleReport *report, Diag *diag);
void stale_report_finish(StaleReport *report);

// The edits are drawn from this seed: the same findings on every machine and run.
#define STALE_SEED 0x5eedu
