// cmd_step: --step: the trace in pages, one stage at a time, in a terminal.
#include <stdio.h>
#include <unistd.h>

#include "cmd.h"
#include "pager.h"

// The trace is traced again at the terminal's new width when the window is resized (unless
// --width fixed it).
int cmd_step(const Command *cmd) {
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "tracer: --step waits for keys in a terminal, but its %s is not one\n",
                isatty(STDIN_FILENO) ? "output" : "input");
        fputs("hint: run it in a terminal, or leave out --step to print the whole trace\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    PipelineOptions opts = cmd->opts;
    size_t at = 1;
    for (;;) {
        Diag diag;
        diag_init(&diag);
        StrBuf out;
        strbuf_init(&out);
        Pages pages = {0};
        int status = pipeline_run_file_pages(cmd->lessons[0], &opts, &out, &pages, &diag);
        cli_print_diagnostics(&diag, cmd->colour_errors);
        // --save writes its files once; a resize only lays the same trace out again.
        if (status == STATUS_OK)
            opts.save_dir = NULL;
        if (status == STATUS_OK)
            status = pager_show(strbuf_str(&out), &pages, opts.colour, &at);
        pipeline_pages_finish(&pages);
        strbuf_finish(&out);
        if (status != PAGER_RESIZED)
            return status;
        if (!cmd->fixed_width)
            opts.width = cli_default_width();
    }
}
