// cmd_list: --list: the course, or the stages of one lesson.
#include <stdio.h>

#include "cmd.h"
#include "course.h"

int cmd_list(const Command *cmd) {
    Diag diag;
    diag_init(&diag);
    StrBuf out;
    strbuf_init(&out);
    int status = cmd->n_lessons ? pipeline_list_stages(cmd->lessons[0], &out, &diag) : course_list(&out, &diag);
    if (status == STATUS_OK) {
        fwrite(strbuf_str(&out), 1, out.len, stdout);
        status = cli_flush_stdout("the list");
    } else
        cli_print_diagnostics(&diag, cli_colour_stderr());
    strbuf_finish(&out);
    return status;
}
