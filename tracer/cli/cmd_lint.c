// cmd_lint: --lint: the lesson's warnings and the stale numbers of its narration, then a line
// that sums them up.
#include <stdio.h>

#include "cmd.h"
#include "stale_narration.h"

int cmd_lint(const Command *cmd) {
    const char *lesson = cmd->lessons[0];
    Diag diag;
    diag_init(&diag);
    StaleReport report;
    int status = stale_lint_file(lesson, &cmd->opts, &report, &diag);
    cli_print_diagnostics(&diag, cli_colour_stderr());
    bool traced = status == STATUS_OK || (status == STATUS_LESSON_ERROR && report.stale > 0);
    if (traced) {
        // An edit that does not run (an index past its axis) is not compared: say which.
        if (report.edits_failed)
            printf("%s: not compared, as the edited lesson stops:\n%s", lesson, strbuf_str(&report.failed));
        size_t warnings = diag.n_warnings + diag.warnings_dropped;
        printf("%s: %zu stale %s in the narration (%zu %s of fixed text, %zu %s of the givens compared), "
               "%zu %s\n",
               lesson, report.stale, report.stale == 1 ? "number" : "numbers", report.numbers,
               report.numbers == 1 ? "number" : "numbers", report.edits, report.edits == 1 ? "edit" : "edits",
               warnings, warnings == 1 ? "warning" : "warnings");
        if (status == STATUS_OK && warnings)
            status = STATUS_LESSON_ERROR;
    }
    stale_report_finish(&report);
    int written = cli_flush_stdout("the lint");
    return written != STATUS_OK ? written : status;
}
