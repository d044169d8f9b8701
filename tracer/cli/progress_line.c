// progress_line: long work's progress as one line on a terminal, redrawn in place.
#include "progress_line.h"

#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "format.h"
#include "util.h"

static FILE *terminal;
static size_t drawn;  // the columns of the line on the screen now

// Appends to line (PROGRESS_LINE_CAP bytes, *len of them used), cut short when full.
static void add(char *line, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *line, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + *len, PROGRESS_LINE_CAP - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < PROGRESS_LINE_CAP ? *len + (size_t)n : PROGRESS_LINE_CAP - 1;
}

void progress_line_format(const ProgressReport *r, size_t width, char *buf, size_t cap) {
    ASSERT(cap > 0);
    char line[PROGRESS_LINE_CAP] = "";
    size_t len = 0;
    if (r->part)
        add(line, &len, "%s: ", r->part);
    add(line, &len, "%s %zu/%zu", r->task, r->done, r->total);
    if (r->value_name) {
        char num[FORMAT_NUMBER_CAP];
        format_number(r->value, 4, num, sizeof(num));
        add(line, &len, "  %s %s", r->value_name, num);
    }
    if (r->detail)
        add(line, &len, "  %s", r->detail);
    // Steps a second, in as few digits as read well: 1.5, 27, 268.
    if (r->unit && r->seconds > 0) {
        double per_second = (double)r->done / r->seconds;
        add(line, &len, per_second < 10 ? "  %.1f %s/s" : "  %.0f %s/s", per_second, r->unit);
    }
    // Cut at a character's start, `width` characters in (a file name may hold UTF-8).
    size_t end = 0, columns = 0;
    for (; line[end]; end++) {
        if (((unsigned char)line[end] & 0xC0) == 0x80)
            continue;
        if (columns == width)
            break;
        columns++;
    }
    snprintf(buf, cap, "%.*s", (int)end, line);
}

static size_t terminal_width(void) {
    struct winsize ws;
    if (ioctl(fileno(terminal), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
        return (size_t)ws.ws_col - 1;
    return 79;
}

static void show(void *ctx, const ProgressReport *r) {
    (void)ctx;
    char line[PROGRESS_LINE_CAP];
    progress_line_format(r, terminal_width(), line, sizeof(line));
    size_t columns = format_display_width(line, strlen(line));
    // Over the line before, with spaces where it was longer.
    fprintf(terminal, "\r%s%*s", line, drawn > columns ? (int)(drawn - columns) : 0, "");
    fflush(terminal);
    drawn = columns;
}

static void clear(void *ctx) {
    (void)ctx;
    fprintf(terminal, "\r%*s\r", (int)drawn, "");
    fflush(terminal);
    drawn = 0;
}

ProgressSink progress_line_sink(FILE *f) {
    terminal = f;
    drawn = 0;
    return (ProgressSink){.show = show, .clear = clear};
}

void progress_line_install(FILE *f) {
    ProgressSink sink = progress_line_sink(f);
    progress_install(&sink);
}
