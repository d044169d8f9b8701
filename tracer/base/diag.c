// diag: filling, printing and suggesting for located errors.
#include "diag.h"

#include <stdarg.h>
#include <string.h>

#include "format.h"
#include "safetext.h"
#include "util.h"

// Only what marks the Diag empty: it is large, and a checker clears one per step.
void diag_init(Diag *d) {
    d->status = STATUS_OK;
    d->path[0] = d->message[0] = d->hint[0] = d->source_line[0] = '\0';
    d->line = d->col = d->width = d->source_col = 0;
    d->n_warnings = d->warnings_dropped = d->n_more = 0;
    d->more_dropped = d->out_of_memory = false;
}

enum {
    QUOTE_CHARS = 160,  // the most characters of a line quoted under an error
    QUOTE_LEAD = 60,    // characters kept before the caret when the line must be cut
};

// Quote line `line` (1-based) of src into d->source_line, without its line end, as a window of
// at most QUOTE_CHARS characters that holds column d->col; d->source_col is the caret's column
// in the quote. Tabs and NULs become spaces, other characters that must not reach a terminal
// (safetext.h: controls, overrides and isolates, bytes that are not UTF-8) '?', one character
// each, so the caret still lines up and a file cannot drive the terminal.
static void quote_source_line(Diag *d, const Source *src, size_t line) {
    char *buf = d->source_line;
    const size_t cap = sizeof(d->source_line);
    buf[0] = '\0';
    d->source_col = d->col;
    if (!src || !src->text || line == 0)
        return;
    const unsigned char *p = (const unsigned char *)src->text, *end = p + src->len;
    if (src->len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;  // the byte-order mark is not part of the first line
    for (size_t l = 1; l < line && p < end; p++)
        if (*p == '\n')
            l++;
    size_t n = 0, skip = d->col > QUOTE_CHARS - 20 ? d->col - QUOTE_LEAD : 0;
    if (skip) {
        memcpy(buf, "...", 3);
        n = 3;
        d->source_col = d->col - skip + 3;
    }
    for (size_t chars = 0; p < end && *p != '\n' && *p != '\r'; chars++) {
        uint32_t code;
        SafetextKind kind;
        size_t len = safetext_next((const char *)p, (size_t)(end - p), &code, &kind);
        if (chars >= skip + QUOTE_CHARS || n + len + 4 > cap) {
            memcpy(buf + n, "...", 3);
            n += 3;
            break;
        }
        if (chars < skip) {
            p += len;
            continue;
        }
        if (*p == '\t' || *p == '\0')
            buf[n++] = ' ';
        else if (kind != SAFETEXT_PLAIN)
            buf[n++] = '?';
        else {
            memcpy(buf + n, p, len);
            n += len;
        }
        p += len;
    }
    buf[n] = '\0';
}

int diag_error(Diag *d, int status, const Source *src, size_t line, size_t col, size_t width,
               const char *fmt, ...) {
    if (d->status != STATUS_OK)
        return d->status;
    d->status = status;
    d->path[0] = '\0';
    if (src && src->path)
        snprintf(d->path, sizeof(d->path), "%s", src->path);
    d->line = line;
    d->col = line ? (col ? col : 1) : 0;
    d->width = width ? width : 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof(d->message), fmt, ap);
    va_end(ap);
    d->hint[0] = '\0';
    quote_source_line(d, src, line);
    return status;
}

void diag_hint(Diag *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->hint, sizeof(d->hint), fmt, ap);
    va_end(ap);
}

int diag_out_of_memory(Diag *d) {
    d->out_of_memory = d->out_of_memory || d->status == STATUS_OK;
    return diag_error(d, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                      "out of memory (the tracer could not allocate what this lesson needs)");
}

void diag_warning(Diag *d, const char *path, size_t line, size_t col, const char *fmt, ...) {
    if (d->n_warnings == DIAG_MAX_WARNINGS) {
        d->warnings_dropped++;
        return;
    }
    DiagWarning *w = &d->warnings[d->n_warnings++];
    if (line)
        snprintf(w->at, sizeof(w->at), "%s:%zu:%zu", path, line, col ? col : 1);
    else
        snprintf(w->at, sizeof(w->at), "%s", path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->text, sizeof(w->text), fmt, ap);
    va_end(ap);
}

// Text of a message (a path, a name or bytes from a file, a lesson's line) as it may reach a
// terminal: every character a terminal would act on escaped, a line end too (safetext.h). An
// escape takes at most four bytes for each of the text's.
typedef struct Shown {
    char text[4 * sizeof(((Diag *)0)->message)];
} Shown;

static const char *shown(Shown *s, const char *text) {
    return safetext_show(s->text, sizeof(s->text), text);
}

void diag_print_warnings(const Diag *d, FILE *f, bool colour) {
    const char *bold = colour ? "\033[1m" : "", *magenta = colour ? "\033[1;35m" : "",
               *reset = colour ? "\033[0m" : "";
    Shown at, text;
    for (size_t i = 0; i < d->n_warnings; i++)
        fprintf(f, "%s%s:%s %swarning:%s %s\n", bold, shown(&at, d->warnings[i].at), reset, magenta, reset,
                shown(&text, d->warnings[i].text));
    if (d->warnings_dropped)
        fprintf(f, "tracer: %swarning:%s %zu more warnings not shown\n", magenta, reset, d->warnings_dropped);
}

bool diag_no_memory(Diag *d) {
    diag_out_of_memory(d);
    return false;
}

// Columns count characters, so skip UTF-8 continuation bytes when walking to the caret.
static size_t byte_offset_of_column(const char *line, size_t col) {
    size_t chars = 1, i = 0;
    while (line[i] && chars < col) {
        i++;
        while (((unsigned char)line[i] & 0xC0) == 0x80)
            i++;
        chars++;
    }
    return i;
}

// One error in the form of a compiler's.
static void print_error(FILE *f, bool colour, const char *path, size_t line, size_t col, size_t width,
                        const char *message, const char *hint, const char *source_line, size_t source_col) {
    const char *bold = colour ? "\033[1m" : "", *red = colour ? "\033[1;31m" : "",
               *green = colour ? "\033[1;32m" : "", *cyan = colour ? "\033[1;36m" : "",
               *reset = colour ? "\033[0m" : "";
    Shown text;
    fputs(bold, f);
    if (path[0]) {
        fputs(shown(&text, path), f);
        if (line)
            fprintf(f, ":%zu:%zu", line, col);
        fputs(": ", f);
    } else {
        fputs("tracer: ", f);
    }
    fprintf(f, "%s%serror:%s %s%s%s\n", reset, red, reset, bold, shown(&text, message), reset);
    if (line && source_line[0]) {
        char number[32];
        int w = snprintf(number, sizeof(number), "%zu", line);
        fprintf(f, " %s | %s\n", number, source_line);
        size_t at = byte_offset_of_column(source_line, source_col);
        fprintf(f, " %*s | ", w, "");
        // As many spaces as the text before the caret is wide (猫 takes two columns).
        for (size_t i = format_display_width(source_line, at); i > 0; i--)
            fputc(' ', f);
        fprintf(f, "%s^", green);
        // The tildes stop at the end of the quote, however wide the culprit.
        size_t shown = 0;
        for (const char *c = source_line + at; *c; c++)
            shown += ((unsigned char)*c & 0xC0) != 0x80;
        for (size_t i = 1; i < width && i < shown; i++)
            fputc('~', f);
        fprintf(f, "%s\n", reset);
    }
    if (hint[0])
        fprintf(f, "%shint:%s %s\n", cyan, reset, shown(&text, hint));
}

void diag_print(const Diag *d, FILE *f, bool colour) {
    print_error(f, colour, d->path, d->line, d->col, d->width, d->message, d->hint, d->source_line, d->source_col);
    for (size_t i = 0; i < d->n_more; i++) {
        const DiagMore *m = &d->more[i];
        print_error(f, colour, d->path, m->line, m->col, m->width, m->message, m->hint, m->source_line,
                    m->source_col);
    }
    Shown path;
    if (d->more_dropped)
        fprintf(f, "%s: stopped after %d errors; fix these and run it again\n",
                d->path[0] ? shown(&path, d->path) : "tracer", DIAG_MAX_ERRORS);
}

size_t diag_count(const Diag *d) {
    return d->status == STATUS_OK ? 0 : 1 + d->n_more;
}

bool diag_append(Diag *d, const Diag *from) {
    for (size_t i = 0; i < from->n_warnings; i++) {
        if (d->n_warnings == DIAG_MAX_WARNINGS)
            d->warnings_dropped++;
        else
            d->warnings[d->n_warnings++] = from->warnings[i];
    }
    d->warnings_dropped += from->warnings_dropped;
    if (from->status == STATUS_OK)
        return diag_count(d) < DIAG_MAX_ERRORS;
    if (d->status == STATUS_OK) {
        d->status = from->status;
        memcpy(d->path, from->path, sizeof(d->path));
        d->line = from->line;
        d->col = from->col;
        d->width = from->width;
        memcpy(d->message, from->message, sizeof(d->message));
        memcpy(d->hint, from->hint, sizeof(d->hint));
        memcpy(d->source_line, from->source_line, sizeof(d->source_line));
        d->source_col = from->source_col;
    } else if (d->n_more < ARRAY_LEN(d->more)) {
        DiagMore *m = &d->more[d->n_more++];
        m->line = from->line;
        m->col = from->col;
        m->width = from->width;
        _Static_assert(sizeof(m->message) == sizeof(from->message) && sizeof(m->hint) == sizeof(from->hint) &&
                           sizeof(m->source_line) == sizeof(from->source_line),
                       "an error after the first is kept in full");
        memcpy(m->message, from->message, sizeof(m->message));
        memcpy(m->hint, from->hint, sizeof(m->hint));
        memcpy(m->source_line, from->source_line, sizeof(m->source_line));
        m->source_col = from->source_col;
    } else {
        d->more_dropped = true;
    }
    return diag_count(d) < DIAG_MAX_ERRORS;
}

void diag_place_of(const char *text, size_t len, size_t offset, size_t *line, size_t *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

// Levenshtein distance, with two neighbours swapped as one edit ('sya' for 'say'),
// case-insensitive edits cost half so 'w_q' finds 'W_Q' first.
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65], prev[65], before[65] = {0};
    for (size_t j = 0; j <= lb; j++)
        prev[j] = 2 * j;
    for (size_t i = 1; i <= la; i++) {
        row[0] = 2 * i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0
                          : ((a[i - 1] | 0x20) == (b[j - 1] | 0x20)) ? 1
                                                                     : 2;
            size_t best = prev[j - 1] + cost;
            if (prev[j] + 2 < best)
                best = prev[j] + 2;
            if (row[j - 1] + 2 < best)
                best = row[j - 1] + 2;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && before[j - 2] + 2 < best)
                best = before[j - 2] + 2;
            row[j] = best;
        }
        memcpy(before, prev, (lb + 1) * sizeof(size_t));
        memcpy(prev, row, (lb + 1) * sizeof(size_t));
    }
    return prev[lb];
}

const char *diag_closest(const char *name, const char *const *candidates, size_t n) {
    const char *best = NULL;
    size_t best_distance = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t dist = edit_distance(name, candidates[i]);
        if (dist < best_distance) {
            best_distance = dist;
            best = candidates[i];
        }
    }
    size_t len = strlen(name);
    // Distances are doubled (half-cost case edits); allow a third of the letters to change.
    // A one-letter name may only differ in case: 'b' for 'X' would be a guess, not a hint.
    size_t allowed = len <= 1 ? 1 : 2 * ((len + 2) / 3);
    if (best && best_distance <= allowed)
        return best;
    return NULL;
}
