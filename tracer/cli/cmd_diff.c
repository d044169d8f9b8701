// cmd_diff: tracer --diff ORIGINAL EDITED: 0 the same, 1 different, 2 trouble (either lesson
// broken too).
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int cmd_diff(const Command *cmd) {
    if (cmd->n_lessons < 2)
        return cli_usage_error("--diff compares two lessons: give the original and your edited copy");
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    bool same = false;
    int status = pipeline_diff_files(cmd->lessons[0], cmd->lessons[1], &cmd->opts, &same, &out, &diag);
    cli_print_diagnostics(&diag, cmd->colour_errors);
    if (status != STATUS_OK) {
        strbuf_finish(&out);
        return STATUS_USAGE_ERROR;
    }
    fwrite(strbuf_str(&out), 1, out.len, stdout);
    strbuf_finish(&out);
    if (cli_flush_stdout("the comparison") != STATUS_OK)
        return STATUS_USAGE_ERROR;
    return same ? STATUS_OK : STATUS_LESSON_ERROR;
}
