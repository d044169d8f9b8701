// cmd_watch: --watch: trace the lesson, then again each time it is saved.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd.h"
#include "watch.h"

// Ctrl-C is how a watch ends, and it ends well. While waiting for a save, the wait returns and
// main ends as usual; in the middle of a trace, leave at once (nothing is half-written that
// matters: the next run would redraw the screen anyway).
static volatile sig_atomic_t watch_waiting, watch_stopped;

static void stop_watching(int signal_number) {
    (void)signal_number;
    if (watch_waiting) {
        watch_stopped = 1;
        return;
    }
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(STATUS_OK);
}

// Trace, wait for a save, clear the screen, trace again. A broken lesson shows its error in
// place of the trace and the watch goes on; a lesson deleted or renamed away is waited for.
int cmd_watch(const Command *cmd) {
    const char *lesson = cmd->lessons[0];
    PipelineOptions opts = cmd->opts;
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create(lesson, &diag);
    if (!w) {
        cli_print_diagnostics(&diag, cli_colour_stderr());
        return diag.status;
    }
    struct sigaction stop = {.sa_handler = stop_watching};
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, NULL);
    // Clear the screen and its scrollback, so what shows is this run alone.
    const char *clear = isatty(STDOUT_FILENO) ? "\033[H\033[2J\033[3J" : "";
    for (unsigned long run = 1;; run++) {
        fputs(clear, stdout);
        fflush(stdout);
        // The window may have been resized since the last save.
        if (!cmd->fixed_width && !cli_has(cmd, CLI_CHECK))
            opts.width = cli_default_width();
        cmd_trace_with(cmd, lesson, &opts);
        fprintf(stderr, "tracer: watching %s (run %lu): save it to trace again, Ctrl-C to stop\n", lesson, run);
        WatchEvent event;
        for (;;) {
            // SIGINT is blocked from the check of watch_stopped until the wait unblocks it,
            // atomically: a Ctrl-C in between is pending, and ends the wait at once.
            sigset_t interrupt, waiting_mask;
            sigemptyset(&interrupt);
            sigaddset(&interrupt, SIGINT);
            sigprocmask(SIG_BLOCK, &interrupt, &waiting_mask);
            sigdelset(&waiting_mask, SIGINT);
            watch_waiting = 1;
            int status = watch_stopped ? STATUS_OK : watch_wait(w, &waiting_mask, &event, &diag);
            watch_waiting = 0;
            sigprocmask(SIG_UNBLOCK, &interrupt, NULL);
            if (watch_stopped || status != STATUS_OK) {
                if (watch_stopped)
                    fputc('\n', stderr);
                else
                    cli_print_diagnostics(&diag, cli_colour_stderr());
                watch_destroy(w);
                return watch_stopped ? STATUS_OK : status;
            }
            if (event == WATCH_SIGNAL)
                continue;
            if (event == WATCH_SAVED)
                break;
            fputs(clear, stdout);
            fflush(stdout);
            fprintf(stderr, "tracer: %s was deleted or renamed; waiting for it to come back (Ctrl-C to stop)\n",
                    lesson);
        }
    }
}
