// lesson_loader: the state of loading one lesson (the Loader) that the loader's files share,
// and what they all do with it: report an error at a node, suggest a close word, define a
// given's or step's name, read text, and load one given, step or claim at a time so that every
// broken one is reported. Internal to the loader (lesson.h is its interface).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "lesson.h"
#include "yamldoc.h"

typedef struct NameSlot {
    const char *name;  // NULL: empty
    const Node *key;
} NameSlot;

typedef struct Loader {
    Lesson *lesson;
    Diag *diag;
    const Source *src;
    size_t givens_cap;  // room in lesson->givens: a given with times: is several
    // While a copy of a given with times: is loaded, which one ("W2, copy 2 of 3"): its errors
    // name it, as the file shows the given once for all its copies.
    const char *copy;
    // Every given and step name, so that one defined twice is found without comparing pairs.
    NameSlot *names;
    size_t n_names, cap_names;
    size_t *line_starts;  // byte offset of each line (index 0 is line 1); built on demand
    size_t n_lines;
    // The label lists by name (entry i + 1 for lesson->labels[i], 0 empty; a power of two at
    // least twice their number), so that 50,000 givens naming a list are not 10^9 compares.
    size_t *label_slots;
    size_t cap_label_slots;
    // Each given and step is loaded on its own into `item`, so that one run reports every
    // broken one (up to DIAG_MAX_ERRORS); `failed` says whether any was.
    Diag *item;
    bool failed;
    // The item failed on what an earlier one reported (a file that could not be read): its
    // failure adds no error of its own.
    bool quiet;
    const Node *givens;  // the given: mapping, while its givens are loaded
    // blocks: (lesson_block), and while one is applied: the prefix of its steps' names
    // (layer1), its names in the lesson, and the node that applies it.
    struct LessonBlock *blocks;
    size_t n_blocks;
    const char *prefix;
    LessonScope *scope;
    const Node *scope_at;
    // The replace: of the applications being loaded: each stage it names, and its value.
    struct Replacement *replacements;
    size_t n_replacements, cap_replacements;
    size_t cap_steps;  // room in lesson->steps, which grows as blocks are applied
    bool as_model;     // loaded for another lesson's trained: (lesson_load_model)
} Loader;

// A lesson error at node (hint may be NULL), or about the file as a whole (line 1, column 1).
// Always return false.
bool lesson_fail(Loader *L, const Node *node, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool lesson_fail_top(Loader *L, const char *hint, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
// "did you mean 'steps'?" when a candidate is close, else `otherwise`.
const char *lesson_suggest(Loader *L, const char *name, const char *const *candidates, size_t n,
                           const char *otherwise);

bool lesson_is_null(const Node *node);
bool lesson_is_quoted(const Node *node);
// The index of name in names[0..n), n when it is not there.
size_t lesson_find_name(const char *name, const char *const *names, size_t n);
uint64_t lesson_hash_name(const char *s);
// A given's or step's name (key): a valid name, defined once; false with a located error.
bool lesson_check_name(Loader *L, const Node *key);
// When key holds an invisible character (U+200B, U+00AD, U+FEFF ...), says so at key, calling
// it `what` ("this name"), and returns true; else false.
bool lesson_invisible_in_name(Loader *L, const Node *key, const char *what);
// Whether s is a valid name: a letter or _, then letters, digits and _, and not a word of
// expressions (and, or, not).
bool lesson_is_identifier(const char *s);
// Define a name made by the loader (layer1.q); a name taken already is an error at `at`.
bool lesson_define_name(Loader *L, const char *name, const Node *key, const Node *at);
// Whether a given or an earlier step has this name.
bool lesson_name_defined(const Loader *L, const char *name);

// title:, source:, about:; as YAML gives it.
bool lesson_parse_text(Loader *L, const char *key, const Node *node, const char **out);
// intro:, outro:, say: as text, its paragraphs (lines apart) kept when written folded (>).
bool lesson_parse_narration(Loader *L, const char *key, const Node *node, const char **out);

// Start loading one given, step or claim on its own: its errors go to L->item. Returns the
// diag to give back to lesson_item_done.
Diag *lesson_item_start(Loader *L);
// The item is loaded (ok) or not: keep what it reported and go on with the next. False when
// loading must stop: memory ran out, or DIAG_MAX_ERRORS errors are enough for one run.
bool lesson_item_done(Loader *L, Diag *diag, bool ok, bool more_follow);
