// main: the command line. Reads it with the tables of cli.c and modes.c, finds the lessons in
// the course, and runs the mode's handler (cmd_<mode>.c).
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "course.h"
#include "modes.h"
#include "progress_line.h"
// config.h says whether the fast layer is built; without it the program would quietly run the
// reference alone.
#ifndef TRACER_FAST
#error "TRACER_FAST comes from config.h"
#endif
#if TRACER_FAST
#include "fast.h"
#endif

// TRACER_MEMORY: a size such as 512M, 2G, 1.5GiB or 1073741824 (bytes); K, M, G and T count
// in 1024s, with iB or B after them or not. 0 when it is not one.
static double parse_memory(const char *text) {
    size_t digits = strspn(text, "0123456789.");
    char *end;
    double bytes = strtod(text, &end);
    if (digits == 0 || end != text + digits)  // no sign, no exponent, no hexadecimal
        return 0;
    static const char units[] = "KMGT";
    const char *unit = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (unit) {
        bytes = ldexp(bytes, 10 * (int)(unit - units + 1));
        end++;
        if (tolower((unsigned char)end[0]) == 'i' && toupper((unsigned char)end[1]) == 'B')
            end += 2;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    return *end || !(bytes >= 1) || bytes > 0x1p64 ? 0 : bytes;
}

// The memory a run may use (opts->memory): TRACER_MEMORY when set; else the machine's
// physical memory, or its container's limit when that is lower (cgroup v2's memory.max, v1's
// memory.limit_in_bytes; "max" is no limit). False after saying what is wrong with TRACER_MEMORY.
static bool memory_limit(PipelineOptions *opts) {
    const char *setting = getenv("TRACER_MEMORY");
    if (setting && setting[0]) {
        opts->memory = parse_memory(setting);
        opts->memory_from = PIPELINE_MEMORY_SETTING;
        if (opts->memory > 0)
            return true;
        fprintf(stderr,
                "tracer: TRACER_MEMORY must be a size such as 512M, 2G, 1.5GiB or 1073741824 (bytes), not '%s'\n",
                setting);
        fputs("hint: K, M, G and T count in 1024s; leave TRACER_MEMORY unset to use all of this machine's memory\n",
              stderr);
        return false;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    static const char *const limits[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    bool container;
    opts->memory = cli_memory_within(pages > 0 && page > 0 ? (double)pages * (double)page : 0, limits,
                                     ARRAY_LEN(limits), &container);
    opts->memory_from = container ? PIPELINE_MEMORY_CONTAINER : PIPELINE_MEMORY_MACHINE;
    return true;
}

// Where trainings are kept (train_cache.h): TRACER_CACHE when set (off: nowhere), else
// $XDG_CACHE_HOME/tracer, else ~/.cache/tracer. NULL: nowhere.
static const char *train_cache_folder(void) {
    static char folder[4096];
    const char *setting = getenv("TRACER_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (setting && setting[0])
        n = strcmp(setting, "off") == 0 ? -1 : snprintf(folder, sizeof(folder), "%s", setting);
    else if (xdg && xdg[0] == '/')
        n = snprintf(folder, sizeof(folder), "%s/tracer", xdg);
    else if (home && home[0] == '/')
        n = snprintf(folder, sizeof(folder), "%s/.cache/tracer", home);
    return n > 0 && (size_t)n < sizeof(folder) ? folder : NULL;
}

int main(int argc, char **argv) {
#if TRACER_FAST
    fast_install();
#endif
    Command cmd;
    int status = cli_parse(argc, argv, modes, modes_count, &cmd);
    if (status != STATUS_OK || !cmd.mode)  // a usage error, or --help or --version done
        return status;
    if (cmd.n_lessons && !memory_limit(&cmd.opts))
        return STATUS_USAGE_ERROR;
    cmd.opts.train_cache = train_cache_folder();
    // Long work (training, a large lesson) shows how far it has come, on a terminal only.
    if (isatty(STDERR_FILENO))
        progress_line_install(stderr);
    // A lesson of the course may be named by number or name, the original of --diff too.
    char *paths[CLI_MAX_LESSONS] = {NULL};
    Diag diag;
    diag_init(&diag);
    for (size_t i = 0; i < cmd.n_lessons && status == STATUS_OK; i++) {
        status = course_lesson_path(cmd.lessons[i], &paths[i], &diag);
        cmd.lessons[i] = paths[i];
    }
    if (status != STATUS_OK)
        cli_print_diagnostics(&diag, cmd.colour_errors);
    else
        status = cmd.mode->run(&cmd);
    for (size_t i = 0; i < CLI_MAX_LESSONS; i++)
        util_free(paths[i]);
    return status;
}
