// lesson_loader: what every part of the loader shares: errors located at a node, suggestions,
// the names given and steps define, text values, and loading one item at a time.
#include "lesson_loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "safetext.h"

static const char *const NAME_HINT =
    "a name starts with a letter or _ and has only letters, digits and _, like W_Q or scores2";

static bool fail_at(Loader *L, size_t line, size_t col, size_t width, const char *hint,
                    const char *fmt, va_list ap) {
    char message[sizeof(L->diag->message)];
    int len = vsnprintf(message, sizeof(message), fmt, ap);
    if (L->copy && len >= 0 && (size_t)len < sizeof(message))
        snprintf(message + len, sizeof(message) - (size_t)len, " (in %s)", L->copy);
    if (diag_error(L->diag, STATUS_LESSON_ERROR, L->src, line, col, width, "%s", message) ==
            STATUS_LESSON_ERROR &&
        hint && hint[0])
        diag_hint(L->diag, "%s", hint);
    return false;
}

// A lesson error at node (hint may be NULL). Always returns false.
bool lesson_fail(Loader *L, const Node *node, const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_at(L, node->line, node->col, yamldoc_node_width(node), hint, fmt, ap);
    va_end(ap);
    return false;
}

// A lesson error about the file as a whole: line 1, column 1.
bool lesson_fail_top(Loader *L, const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_at(L, 1, 1, 1, hint, fmt, ap);
    va_end(ap);
    return false;
}

// "did you mean 'steps'?" when a candidate is close, else `otherwise`.
const char *lesson_suggest(Loader *L, const char *name, const char *const *candidates, size_t n,
                           const char *otherwise) {
    const char *best = diag_closest(name, candidates, n);
    if (!best)
        return otherwise;
    const char *hint = arena_printf(L->lesson->arena, "did you mean '%s'?", best);
    return hint ? hint : otherwise;
}

bool lesson_is_null(const Node *node) {
    return node->kind == NODE_SCALAR && node->style == SCALAR_PLAIN && node->text_len == 0;
}

bool lesson_is_quoted(const Node *node) {
    return node->style == SCALAR_SINGLE_QUOTED || node->style == SCALAR_DOUBLE_QUOTED;
}

bool lesson_is_identifier(const char *s) {
    if (!(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) || ops_word(s, strlen(s)))
        return false;
    for (const char *p = s + 1; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

size_t lesson_find_name(const char *name, const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return n;
}

uint64_t lesson_hash_name(const char *s) {
    uint64_t h = 14695981039346656037u;  // FNV-1a
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

// Define name (written at key); false with an error at `at` when it is taken already.
static bool define_name(Loader *L, const char *name, const Node *key, const Node *where) {
    if (2 * (L->n_names + 1) > L->cap_names) {
        size_t cap = L->cap_names ? 2 * L->cap_names : 64;
        NameSlot *slots = arena_array(L->lesson->arena, cap, sizeof(NameSlot));
        if (!slots)
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < L->cap_names; i++) {
            if (!L->names[i].name)
                continue;
            size_t at = lesson_hash_name(L->names[i].name) & (cap - 1);
            while (slots[at].name)
                at = (at + 1) & (cap - 1);
            slots[at] = L->names[i];
        }
        L->names = slots;
        L->cap_names = cap;
    }
    size_t slot = lesson_hash_name(name) & (L->cap_names - 1);
    for (; L->names[slot].name; slot = (slot + 1) & (L->cap_names - 1))
        if (strcmp(L->names[slot].name, name) == 0)
            return lesson_fail(L, where, "each name is defined once; give this one another name",
                               "the name '%s' is already defined on line %zu", name,
                               L->names[slot].key->line);
    L->names[slot] = (NameSlot){.name = name, .key = key};
    L->n_names++;
    return true;
}

bool lesson_define_name(Loader *L, const char *name, const Node *key, const Node *at) {
    return define_name(L, name, key, at);
}

bool lesson_name_defined(const Loader *L, const char *name) {
    if (!L->cap_names)
        return false;
    for (size_t at = lesson_hash_name(name) & (L->cap_names - 1); L->names[at].name;
         at = (at + 1) & (L->cap_names - 1))
        if (strcmp(L->names[at].name, name) == 0)
            return true;
    return false;
}

bool lesson_invisible_in_name(Loader *L, const Node *key, const char *what) {
    uint32_t code;
    size_t at = safetext_find_invisible(key->text, key->text_len, &code);
    if (at == key->text_len)
        return false;
    char where[80];
    snprintf(where, sizeof(where), at ? ", after '%.*s'" : ", at its start", (int)(at < 40 ? at : 40), key->text);
    lesson_fail(L, key, "delete it (most editors do not show it): a name has only letters, digits and _",
                "%s holds the invisible character U+%04X (%s)%s", what, (unsigned)code,
                safetext_invisible_name(code), where);
    return true;
}

bool lesson_check_name(Loader *L, const Node *key) {
    if (ops_word(key->text, strlen(key->text)))
        return lesson_fail(L, key, "choose another name, as in both, either or is_masked",
                           "'%s' is a word of expressions (a and b, a or b, not a), so it cannot name a given "
                           "or a step",
                           key->text);
    if (!lesson_is_identifier(key->text))
        return !lesson_invisible_in_name(L, key, "this name") &&
               lesson_fail(L, key, NAME_HINT, "'%s' is not a valid name", key->text);
    return define_name(L, key->text, key, key);
}

// ---------------------------------------------------------------- text, and one item at a time

// title:, source:, about: (and the text of narration)
bool lesson_parse_text(Loader *L, const char *key, const Node *node, const char **out) {
    if (node->kind != NODE_SCALAR)
        return lesson_fail(L, node, "put the text after the key, in quotes if it holds ': '",
                           "%s: must be text, but this is %s", key, yamldoc_kind_name(node->kind));
    *out = node->text;
    return true;
}

// Whether a line of a folded block's text starts with a space or a tab: YAML keeps the line
// breaks around such a line ("more-indented") rather than folding them.
static bool spaced(const char *line) {
    return *line == ' ' || *line == '\t';
}

// intro:, outro:, say:. A folded block (>) folds its lines into one and writes each blank line
// between paragraphs as a single newline; narration writes a paragraph break as a blank line,
// so each such newline, between two lines YAML would otherwise have folded, is doubled.
bool lesson_parse_narration(Loader *L, const char *key, const Node *node, const char **out) {
    if (!lesson_parse_text(L, key, node, out))
        return false;
    if (node->style != SCALAR_FOLDED)
        return true;
    const char *text = node->text;
    size_t breaks = 0;
    for (size_t i = 1; text[i]; i++)
        breaks += text[i] == '\n' && text[i - 1] != '\n' && text[i + 1] && text[i + 1] != '\n';
    char *folded = arena_alloc(L->lesson->arena, node->text_len + breaks + 1);
    if (!folded)
        return diag_no_memory(L->diag);
    size_t n = 0;
    const char *line = text;
    for (size_t i = 0; text[i]; i++) {
        folded[n++] = text[i];
        if (text[i] != '\n')
            continue;
        const char *next = text + i + 1;
        if (i > 0 && text[i - 1] != '\n' && *next && *next != '\n' && !spaced(line) && !spaced(next))
            folded[n++] = '\n';
        line = next;
    }
    folded[n] = '\0';
    *out = folded;
    return true;
}

// Start loading one given or step on its own: its errors go to L->item.
Diag *lesson_item_start(Loader *L) {
    Diag *diag = L->diag;
    diag_init(L->item);
    L->diag = L->item;
    return diag;
}

// The given or step is loaded (ok) or not: keep what it reported and go on with the next. False
// when loading must stop: memory ran out, or DIAG_MAX_ERRORS errors are enough for one run.
bool lesson_item_done(Loader *L, Diag *diag, bool ok, bool more_follow) {
    L->diag = diag;
    L->failed |= !ok;
    if (!ok && L->item->status != STATUS_LESSON_ERROR) {
        diag->status = STATUS_OK;  // only that is reported
        diag->n_more = 0;
        diag_out_of_memory(diag);
        return false;
    }
    if (!diag_append(diag, L->item)) {
        diag->more_dropped = more_follow;
        return false;
    }
    return true;
}

