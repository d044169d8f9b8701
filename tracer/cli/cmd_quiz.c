// cmd_quiz: --quiz: the questions, then the conversation.
#include <stdio.h>
#include <unistd.h>

#include "ask.h"
#include "cmd.h"

int cmd_quiz(const Command *cmd) {
    Diag diag;
    diag_init(&diag);
    Quiz *quiz = NULL;
    const PipelineOptions *opts = &cmd->opts;
    int status = pipeline_quiz_file(cmd->lessons[0], opts, cmd->quiz_seed, &quiz, &diag);
    if (status == STATUS_OK)
        status = ask_quiz(quiz, stdin, stdout, !isatty(STDIN_FILENO), opts->width, opts->colour, &diag);
    if (status != STATUS_OK)
        diag_print(&diag, stderr, cmd->colour_errors);
    quiz_destroy(quiz);
    return status;
}
