// diag: filling, printing and suggesting for located errors.
#include "diag.h"

#include <stdarg.h>
#include <string.h>

#include "util.h"

void diag_init(Diag *d) {
    memset(d, 0, sizeof(*d));
}

// Copy line `line` (1-based) of src into buf, without its line end; tabs become spaces so the
// caret lines up.
static void copy_source_line(const Source *src, size_t line, char *buf, size_t cap) {
    buf[0] = '\0';
    if (!src || !src->text || line == 0)
        return;
    const char *p = src->text, *end = src->text + src->len;
    if (src->len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;  // the byte-order mark is not part of the first line
    for (size_t l = 1; l < line && p < end; p++)
        if (*p == '\n')
            l++;
    size_t n = 0;
    while (p < end && *p != '\n' && *p != '\r' && n + 1 < cap) {
        buf[n++] = (*p == '\t' || *p == '\0') ? ' ' : *p;
        p++;
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
    copy_source_line(src, line, d->source_line, sizeof(d->source_line));
    return status;
}

void diag_hint(Diag *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->hint, sizeof(d->hint), fmt, ap);
    va_end(ap);
}

int diag_out_of_memory(Diag *d) {
    return diag_error(d, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                      "out of memory (the tracer could not allocate what this lesson needs)");
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

void diag_print(const Diag *d, FILE *f, bool colour) {
    const char *bold = colour ? "\033[1m" : "", *red = colour ? "\033[1;31m" : "",
               *green = colour ? "\033[1;32m" : "", *cyan = colour ? "\033[1;36m" : "",
               *reset = colour ? "\033[0m" : "";
    fputs(bold, f);
    if (d->path[0]) {
        fputs(d->path, f);
        if (d->line)
            fprintf(f, ":%zu:%zu", d->line, d->col);
        fputs(": ", f);
    } else {
        fputs("tracer: ", f);
    }
    fprintf(f, "%s%serror:%s %s%s%s\n", reset, red, reset, bold, d->message, reset);
    if (d->line && d->source_line[0]) {
        char number[32];
        int w = snprintf(number, sizeof(number), "%zu", d->line);
        fprintf(f, " %s | %s\n", number, d->source_line);
        size_t at = byte_offset_of_column(d->source_line, d->col);
        fprintf(f, " %*s | ", w, "");
        for (size_t i = 0; i < at; i++)
            fputc(' ', f);
        fprintf(f, "%s^", green);
        for (size_t i = 1; i < d->width; i++)
            fputc('~', f);
        fprintf(f, "%s\n", reset);
    }
    if (d->hint[0])
        fprintf(f, "%shint:%s %s\n", cyan, reset, d->hint);
}

// Levenshtein distance, case-insensitive edits cost half so 'w_q' finds 'W_Q' first.
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65], prev[65];
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
            row[j] = best;
        }
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
    if (best && best_distance <= 2 * ((len + 2) / 3))
        return best;
    return NULL;
}
