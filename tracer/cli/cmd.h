// cmd: the handlers of the command line's modes, one file each (cmd_<mode>.c), named in the
// table of modes (modes.c). Each runs a command already read and checked, its lessons found,
// and returns the exit status.
#pragma once

#include "cli.h"

// The plain trace, --check and --update-golden (cmd_trace.c).
int cmd_trace(const Command *cmd);
int cmd_update_golden(const Command *cmd);
// One trace of lesson with opts in place of cmd->opts: --watch traces again at a new width.
int cmd_trace_with(const Command *cmd, const char *lesson, const PipelineOptions *opts);
int cmd_watch(const Command *cmd);
int cmd_step(const Command *cmd);
int cmd_quiz(const Command *cmd);
int cmd_diff(const Command *cmd);
int cmd_list(const Command *cmd);
int cmd_lint(const Command *cmd);
