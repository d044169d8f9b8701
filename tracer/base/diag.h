// diag: one located error, in the form a compiler prints it.
//
//     lessons/cat.yaml:12:7: error: unknown name 'W_q'
//        12 |   - Q: X @ W_q
//           |            ^~~
//     hint: did you mean 'W_Q'?
//
// Library code fills a Diag and returns a failure status; only main prints it. A Diag never
// allocates, so "out of memory" can be reported too.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

// Exit statuses, and what a failed library call returns.
enum {
    STATUS_OK = 0,
    STATUS_LESSON_ERROR = 1,  // the lesson is wrong (or a golden file differs)
    STATUS_USAGE_ERROR = 2,   // the command line, a file that cannot be read, no memory, a full disk
};

// The text of a lesson file, kept so that errors can quote the offending line.
typedef struct Source {
    const char *path;
    const char *text;
    size_t len;
} Source;

// Warnings kept at most; later ones are counted, not kept.
#define DIAG_MAX_WARNINGS 16
// Errors reported in one run at most, like a compiler: the first and up to 19 more that do not
// depend on it.
#define DIAG_MAX_ERRORS 20

// An error after the first (in the same file as the first).
typedef struct DiagMore {
    size_t line, col, width;
    char message[1024];
    char hint[1024];
    char source_line[512];
    size_t source_col;
} DiagMore;

// "lessons/x.yaml:3:7" and what is wrong there, printed on one line.
typedef struct DiagWarning {
    char at[560];
    char text[512];
} DiagWarning;

typedef struct Diag {
    // What diag_init sets comes first, all of it in the first 4 KiB: a Diag lives on the stack
    // of the call that runs a lesson, and each page of it written is a page fault of its own.
    int status;             // STATUS_OK while nothing went wrong
    size_t line, col;       // 1-based; 0 when unknown
    size_t width;           // how many columns the caret underlines (at least 1)
    size_t source_col;  // the caret's column within source_line (1-based)
    size_t n_warnings;
    size_t warnings_dropped;  // past DIAG_MAX_WARNINGS
    size_t n_more;
    bool more_dropped;  // DIAG_MAX_ERRORS were found and the rest of the lesson was not checked
    bool out_of_memory;  // the error is diag_out_of_memory's: no fault of the lesson
    char path[512];         // empty when the error has no file
    char message[1024];
    char hint[1024];        // may be empty
    // The quoted line, without its newline; may be empty. A long line is cut to a window
    // around the caret ("..." marks the cut), and bytes a terminal would act on are shown as '?'.
    char source_line[512];
    // Warnings: one line each ("lessons/x.yaml:3:7: warning: ..."), kept whatever the status.
    DiagWarning warnings[DIAG_MAX_WARNINGS];
    // Errors after the first, in the same file, in the order found (see diag_append).
    DiagMore more[DIAG_MAX_ERRORS - 1];
} Diag;

void diag_init(Diag *d);
// Record an error at line:col (1-based) of src (src may be NULL, line 0 for no place).
// The first error wins: later calls while d->status is set do nothing. Returns status.
int diag_error(Diag *d, int status, const Source *src, size_t line, size_t col, size_t width,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void diag_hint(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int diag_out_of_memory(Diag *d);
// Record a one-line warning about line:col (1-based) of the file at path (line 0: no place).
// A warning is not an error: the lesson still runs.
void diag_warning(Diag *d, const char *path, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
// Prints the warnings, one line each, to f.
void diag_print_warnings(const Diag *d, FILE *f, bool colour);
// Add what `from` found (one part of a lesson checked on its own) to d: its warnings, and its
// error as d's first or as one more. False when d holds DIAG_MAX_ERRORS errors: stop looking.
bool diag_append(Diag *d, const Diag *from);
// How many errors d holds.
size_t diag_count(const Diag *d);
// The same for functions that fail with false: `if (!p) return diag_no_memory(diag);`
bool diag_no_memory(Diag *d);
// Prints the error as above to f (with colour when colour is true).
void diag_print(const Diag *d, FILE *f, bool colour);

// The line and column (1-based; a column counts characters) of byte `offset` of a text.
void diag_place_of(const char *text, size_t len, size_t offset, size_t *line, size_t *col);

// The closest candidate to name by edit distance, or NULL when none is close enough to
// suggest (more than a third of the letters would have to change).
const char *diag_closest(const char *name, const char *const *candidates, size_t n);
