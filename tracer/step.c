// step: key by key through the pages of a trace. The terminal is put in non-canonical mode
// without echo while stepping, and restored on every way out, a signal included.
#include "step.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "diag.h"

static struct termios saved;
static volatile sig_atomic_t raw_on;

static void restore(void) {
    if (raw_on) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
        raw_on = 0;
    }
}

// Ctrl-C and friends leave the terminal as they found it, then end the program as usual.
static void on_signal(int sig) {
    restore();
    signal(sig, SIG_DFL);
    raise(sig);
}

static bool raw_mode(void) {
    if (tcgetattr(STDIN_FILENO, &saved) != 0)
        return false;
    struct termios raw = saved;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0)
        return false;
    raw_on = 1;
    return true;
}

static void page(const char *text, const size_t *ends, size_t k) {
    size_t start = k ? ends[k - 1] : 0;
    fwrite(text + start, 1, ends[k] - start, stdout);
}

// The screen for step k (1-based) of n: the header before the first stage, the close after
// the last, then the status line with what was typed so far.
static void show(const char *text, const size_t *ends, size_t n_pages, size_t k, const char *typed,
                 const char *note, bool colour) {
    size_t n = n_pages - 2;
    fputs("\033[H\033[2J", stdout);
    if (k == 1)
        page(text, ends, 0);
    page(text, ends, k);
    if (k == n)
        page(text, ends, n_pages - 1);
    fputs(colour ? "\n\033[7m" : "\n", stdout);
    printf(" step %zu of %zu ", k, n);
    fputs(colour ? "\033[0m" : "", stdout);
    if (note[0])
        printf("  %s", note);
    else if (typed[0])
        printf("  go to step %s (Enter)", typed);
    else
        printf("  Enter/space next, b back, a number and Enter jumps, q quits");
    fflush(stdout);
}

int step_through(const char *text, const size_t *ends, size_t n_pages, bool colour) {
    if (n_pages < 3) {  // no stage chosen: the header and the close are the whole trace
        fputs(text, stdout);
        return STATUS_OK;
    }
    if (!raw_mode()) {
        fputs("tracer: --step cannot read single keys from this terminal\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    size_t n = n_pages - 2, k = 1;
    char typed[16] = "", note[96] = "";
    for (;;) {
        show(text, ends, n_pages, k, typed, note, colour);
        note[0] = '\0';
        unsigned char key;
        ssize_t got = read(STDIN_FILENO, &key, 1);
        if (got <= 0 || key == 'q' || key == 'Q' || key == 4)  // 4: Ctrl-D
            break;
        size_t len = strlen(typed);
        if (key >= '0' && key <= '9') {
            if (len + 1 < sizeof(typed) && (len || key != '0')) {
                typed[len] = (char)key;
                typed[len + 1] = '\0';
            }
        } else if ((key == 127 || key == 8) && len) {
            typed[len - 1] = '\0';
        } else if (key == '\r' || key == '\n' || key == ' ') {
            if (len) {
                unsigned long want = strtoul(typed, NULL, 10);
                if (want >= 1 && want <= n)
                    k = want;
                else
                    snprintf(note, sizeof(note), "there is no step %s: the steps are 1 to %zu", typed, n);
                typed[0] = '\0';
            } else if (k < n) {
                k++;
            } else {
                snprintf(note, sizeof(note), "that was the last step: b goes back, q quits");
            }
        } else if (key == 'b' || key == 'B') {
            typed[0] = '\0';
            if (k > 1)
                k--;
        }
    }
    restore();
    fputs("\n", stdout);
    return STATUS_OK;
}
