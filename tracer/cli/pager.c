// pager: key by key through the pages of a trace. The terminal is put in non-canonical mode
// without echo while stepping, and restored on every way out, a signal included.
#include "pager.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "diag.h"

static struct termios saved;
static volatile sig_atomic_t raw_on, resized;

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

static void on_resize(int sig) {
    (void)sig;
    resized = 1;
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
    // Without SA_RESTART, a resize interrupts the wait for a key, so the screen follows at once.
    sa.sa_handler = on_resize;
    sigaction(SIGWINCH, &sa, NULL);
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0)
        return false;
    raw_on = 1;
    return true;
}

// The text of screen k (1-based) of n: the header before the first stage, the close after the
// last.
static void screen_text(const char *text, const Pages *pages, size_t k, const char **start, const char **end) {
    size_t n = pages->n - 2;
    size_t from = k == 1 ? 0 : pages->ends[k - 1], to = k == n ? pages->ends[pages->n - 1] : pages->ends[k];
    *start = text + from;
    *end = text + to;
}

// What the status line calls the stage of screen k, in the numbers the trace prints: "step 6
// of 7", "step 1a of 7" (a part of step 1), "given K, before step 1 of 7".
static void stage_label(const Pages *pages, size_t k, char *buf, size_t cap) {
    // Every lesson has a step (the loader refuses one without), so there is a step 1.
    if (pages->number[k][0])
        snprintf(buf, cap, " step %s of %zu ", pages->number[k], pages->steps);
    else
        snprintf(buf, cap, " given %.40s, before step 1 of %zu ", pages->name[k], pages->steps);
}

// The screen that shows the stage numbered `want` ("6", "1a"), or 0 when none does.
static size_t screen_numbered(const Pages *pages, const char *want) {
    for (size_t k = 1; k + 1 < pages->n; k++)
        if (strcmp(pages->number[k], want) == 0)
            return k;
    return 0;
}

// Whether a stage shown is numbered `prefix`... ("1a" begins "1a", "27.30" begins "27."): a
// letter or a point typed after digits is then part of the number, and otherwise a key (b
// goes back, q quits).
static bool number_begins(const Pages *pages, const char *prefix) {
    for (size_t k = 1; k + 1 < pages->n; k++)
        if (strncmp(pages->number[k], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

// Where the typed number leads: its screen, or 0 and why not in note.
static size_t jump(const Pages *pages, const char *typed, char *note, size_t cap) {
    size_t k = screen_numbered(pages, typed);
    if (k)
        return k;
    bool whole = strspn(typed, "0123456789") == strlen(typed);
    unsigned long long want = strtoull(typed, NULL, 10);
    if (whole && want >= 1 && want <= pages->steps)
        snprintf(note, cap, "step %s is not shown: --only, --from or --to left it out", typed);
    else
        snprintf(note, cap, "there is no step %s: the steps are 1 to %zu", typed, pages->steps);
    return 0;
}

static size_t count_lines(const char *s, const char *end) {
    size_t n = 0;
    for (; s < end; s++)
        n += *s == '\n';
    return n;
}

static const char *skip_lines(const char *s, const char *end, size_t lines) {
    while (lines > 0 && s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        s = nl ? nl + 1 : end;
        lines--;
    }
    return s;
}

// The terminal's size, asked each time so that a resized window is used at once; 80 x 24
// when it cannot say.
static struct winsize terminal_size(void) {
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row < 4 || ws.ws_col < 20)
        ws = (struct winsize){.ws_row = 24, .ws_col = 80};
    return ws;
}

static size_t terminal_rows(void) {
    return terminal_size().ws_row;
}

// One screen: the lines of step k from line `top` that fit above the status line, then the
// status line. Returns the top line actually shown (held within the text).
static size_t show(const char *text, const Pages *pages, size_t k, size_t top, const char *typed, const char *note,
                   bool colour) {
    const char *start, *end;
    screen_text(text, pages, k, &start, &end);
    size_t lines = count_lines(start, end), room = terminal_rows() - 2;  // a blank line and the status
    size_t last_top = lines > room ? lines - room : 0;
    top = top > last_top ? last_top : top;
    const char *from = skip_lines(start, end, top), *to = skip_lines(from, end, room);
    fputs("\033[H\033[2J", stdout);
    fwrite(from, 1, (size_t)(to - from), stdout);
    // The status line, cut to the terminal's width: a wrapped one would scroll the screen.
    char status[320], hint[160], label[96];
    stage_label(pages, k, label, sizeof(label));
    size_t cols = terminal_size().ws_col;
    if (note[0])
        snprintf(hint, sizeof(hint), "%s", note);
    else if (typed[0])
        snprintf(hint, sizeof(hint), "go to step %s (Enter)", typed);
    // The keys in full where they fit beside the stage's label, else in short: every key is
    // named at 80 columns.
    for (int full = 1; !note[0] && !typed[0] && full >= 0; full--) {
        size_t shown = top + room < lines ? top + room : lines;
        if (lines > room)
            snprintf(hint, sizeof(hint), "lines %zu-%zu of %zu: %s", top + 1, shown, lines,
                     full ? "up/down scroll, Enter/space next, b back, q quits" : "up/down, Enter, b, q");
        else
            snprintf(hint, sizeof(hint), "%s",
                     full ? "Enter/space next, b back, a number and Enter jumps, q quits"
                          : "Enter next, b back, number+Enter jumps, q quit");
        if (cols <= 1 || strlen(label) + 2 + strlen(hint) <= cols - 1)
            break;
    }
    int len = snprintf(status, sizeof(status), "%s  %s", label, hint);
    size_t keep = len > 0 ? (size_t)len : 0;
    keep = cols > 1 && keep > cols - 1 ? cols - 1 : keep;
    size_t mark = strlen(label);
    mark = mark < keep ? mark : keep;
    // The step in reverse video, the hint plain.
    printf("\n%s%.*s%s%.*s", colour ? "\033[7m" : "", (int)mark, status, colour ? "\033[0m" : "", (int)(keep - mark),
           status + mark);
    fflush(stdout);
    return top;
}

// A key, with the arrows and page keys of a terminal (ESC [ A and so on) as one of these.
enum { KEY_UP = 256, KEY_DOWN, KEY_PAGE_UP, KEY_PAGE_DOWN, KEY_RESIZE, KEY_END_OF_INPUT };

static int read_key(void) {
    unsigned char c;
    ssize_t got;
    while ((got = read(STDIN_FILENO, &c, 1)) < 0 && errno == EINTR)
        if (resized)
            return KEY_RESIZE;
    if (got != 1)
        return KEY_END_OF_INPUT;
    if (c != 27)
        return c;
    unsigned char seq[3] = {0};
    if (read(STDIN_FILENO, &seq[0], 1) != 1 || seq[0] != '[' || read(STDIN_FILENO, &seq[1], 1) != 1)
        return 27;
    if (seq[1] == 'A')
        return KEY_UP;
    if (seq[1] == 'B')
        return KEY_DOWN;
    if ((seq[1] == '5' || seq[1] == '6') && read(STDIN_FILENO, &seq[2], 1) == 1 && seq[2] == '~')
        return seq[1] == '5' ? KEY_PAGE_UP : KEY_PAGE_DOWN;
    return 27;
}

int pager_show(const char *text, const Pages *pages, bool colour, size_t *at) {
    if (pages->n < 3) {  // no stage chosen: the header and the close are the whole trace
        fputs(text, stdout);
        return STATUS_OK;
    }
    resized = 0;
    if (!raw_mode()) {
        fputs("tracer: --step cannot read single keys from this terminal\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    size_t n = pages->n - 2, k = *at >= 1 && *at <= n ? *at : 1, top = 0;
    unsigned short columns = terminal_size().ws_col;
    char typed[16] = "", note[128] = "";
    for (;;) {
        top = show(text, pages, k, top, typed, note, colour);
        note[0] = '\0';
        int key = read_key();
        size_t len = strlen(typed), page = terminal_rows() - 2, was = k;
        if (key == KEY_END_OF_INPUT || key == 'q' || key == 'Q' || key == 4)  // 4: Ctrl-D
            break;
        if (key == KEY_RESIZE) {
            resized = 0;
            if (terminal_size().ws_col == columns)
                continue;  // only taller or shorter: the next screen uses the new rows
            restore();
            *at = k;
            return PAGER_RESIZED;
        }
        // A digit starts or goes on with a number; a letter or a point goes on with it when a
        // stage shown is numbered so ("1a", "27.30").
        char more[sizeof(typed) + 1];
        snprintf(more, sizeof(more), "%s%c", typed, key > 0 && key < 128 ? (char)key : '\0');
        bool digit = key >= '0' && key <= '9' && (len || key != '0');
        bool part = len && key < 128 && (isalpha(key) || key == '.') && number_begins(pages, more);
        if (digit || part) {
            if (len + 1 < sizeof(typed))
                memcpy(typed, more, len + 2);
        } else if ((key == 127 || key == 8) && len) {
            typed[len - 1] = '\0';
        } else if (key == '\r' || key == '\n' || key == ' ') {
            if (len) {
                size_t to = jump(pages, typed, note, sizeof(note));
                k = to ? to : k;
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
        } else if (key == KEY_DOWN || key == 'j') {
            top++;
        } else if (key == KEY_UP || key == 'k') {
            top = top ? top - 1 : 0;
        } else if (key == KEY_PAGE_DOWN) {
            top += page;
        } else if (key == KEY_PAGE_UP) {
            top = top > page ? top - page : 0;
        }
        if (k != was)
            top = 0;
    }
    restore();
    fputs("\n", stdout);
    *at = k;
    return STATUS_OK;
}
