// modes: the table of the command line's modes, as git's commands[]: for each, the option that
// chooses it, what it does, its handler (cmd_<mode>.c), its lessons, and the options it takes.
// main reads the command line with it (cli_parse); the plain trace comes last, chosen when no
// other mode's option is given.
#pragma once

#include "cli.h"

extern const CliMode modes[];
extern const size_t modes_count;
