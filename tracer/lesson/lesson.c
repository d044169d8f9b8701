// lesson: the YAML tree given the meaning of spec.md (sections, labels, givens, steps,
// numbers), every error located at the node that causes it.
#include "lesson.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"

// ---------------------------------------------------------------- loader

typedef struct NameSlot {
    const char *name;  // NULL: empty
    const Node *key;
} NameSlot;

typedef struct Loader {
    Lesson *lesson;
    Diag *diag;
    const Source *src;
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
} Loader;

static const char *const NUMBER_HINT = "numbers look like 3, -0.5, 1e-5 or .inf";
static const char *const NAME_HINT =
    "a name starts with a letter or _ and has only letters, digits and _, like W_Q or scores2";
static const char *const TOP_KEYS[] = {"title",  "source", "intro", "outro", "digits",
                                       "labels", "given",  "steps", "claims"};
static const char *const GIVEN_KEYS[] = {"values", "about", "rows",         "cols",  "document",
                                         "shape",  "init",  "distribution", "scale", "seed",
                                         "text",   "tokenizer"};
static const char *const STEP_RESERVED[] = {"say", "rows", "cols", "document", "explain", "show", "claim", "quiz"};
static const char *const PICTURE_NAMES[] = {"table", "heatmap", "bars"};
static const char *const INIT_NAMES[] = {"zeros", "ones", "identity", "random"};
static const char *const DISTRIBUTION_NAMES[] = {"uniform", "normal"};

static bool fail_at(Loader *L, size_t line, size_t col, size_t width, const char *hint,
                    const char *fmt, va_list ap) {
    char message[sizeof(L->diag->message)];
    vsnprintf(message, sizeof(message), fmt, ap);
    if (diag_error(L->diag, STATUS_LESSON_ERROR, L->src, line, col, width, "%s", message) ==
            STATUS_LESSON_ERROR &&
        hint && hint[0])
        diag_hint(L->diag, "%s", hint);
    return false;
}

// A lesson error at node (hint may be NULL). Always returns false.
static bool fail(Loader *L, const Node *node, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail(Loader *L, const Node *node, const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_at(L, node->line, node->col, yamldoc_node_width(node), hint, fmt, ap);
    va_end(ap);
    return false;
}

// A lesson error about the file as a whole: line 1, column 1.
static bool fail_top(Loader *L, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_top(Loader *L, const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_at(L, 1, 1, 1, hint, fmt, ap);
    va_end(ap);
    return false;
}

// "did you mean 'steps'?" when a candidate is close, else `otherwise`.
static const char *suggest(Loader *L, const char *name, const char *const *candidates, size_t n,
                           const char *otherwise) {
    const char *best = diag_closest(name, candidates, n);
    if (!best)
        return otherwise;
    const char *hint = arena_printf(L->lesson->arena, "did you mean '%s'?", best);
    return hint ? hint : otherwise;
}

static bool is_null(const Node *node) {
    return node->kind == NODE_SCALAR && node->style == SCALAR_PLAIN && node->text_len == 0;
}

static bool is_quoted(const Node *node) {
    return node->style == SCALAR_SINGLE_QUOTED || node->style == SCALAR_DOUBLE_QUOTED;
}

static bool is_identifier(const char *s) {
    if (!(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return false;
    for (const char *p = s + 1; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

static size_t find_name(const char *name, const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return n;
}

static uint64_t hash_name(const char *s) {
    uint64_t h = 14695981039346656037u;  // FNV-1a
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

// Define the name of key; false with a located error when it is taken already.
static bool define_name(Loader *L, const Node *key) {
    if (2 * (L->n_names + 1) > L->cap_names) {
        size_t cap = L->cap_names ? 2 * L->cap_names : 64;
        NameSlot *slots = arena_array(L->lesson->arena, cap, sizeof(NameSlot));
        if (!slots)
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < L->cap_names; i++) {
            if (!L->names[i].name)
                continue;
            size_t at = hash_name(L->names[i].name) & (cap - 1);
            while (slots[at].name)
                at = (at + 1) & (cap - 1);
            slots[at] = L->names[i];
        }
        L->names = slots;
        L->cap_names = cap;
    }
    size_t at = hash_name(key->text) & (L->cap_names - 1);
    for (; L->names[at].name; at = (at + 1) & (L->cap_names - 1))
        if (strcmp(L->names[at].name, key->text) == 0)
            return fail(L, key, "each name is defined once; give this one another name",
                        "the name '%s' is already defined on line %zu", key->text,
                        L->names[at].key->line);
    L->names[at] = (NameSlot){.name = key->text, .key = key};
    L->n_names++;
    return true;
}

static bool check_name(Loader *L, const Node *key) {
    if (!is_identifier(key->text))
        return fail(L, key, NAME_HINT, "'%s' is not a valid name", key->text);
    return define_name(L, key);
}

// ---------------------------------------------------------------- numbers

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// A decimal number as lessons write it: [+-] digits [. digits] [e [+-] digits], or [+-] .digits.
// *decimals: the places printed after the point, less the exponent ("0.20" 2, "1e-3" 3,
// "2.69e43" -41).
static bool scan_decimal(const char *s, int *decimals) {
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    size_t whole = 0, frac = 0;
    while (is_digit(p[whole]))
        whole++;
    p += whole;
    if (*p == '.') {
        p++;
        while (is_digit(p[frac]))
            frac++;
        p += frac;
    }
    if (whole + frac == 0)
        return false;
    long exponent = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        bool negative = *p == '-';
        if (*p == '+' || *p == '-')
            p++;
        if (!is_digit(*p))
            return false;
        for (; is_digit(*p); p++)
            if (exponent < 100000)
                exponent = exponent * 10 + (*p - '0');
        if (negative)
            exponent = -exponent;
    }
    if (*p)
        return false;
    // Negative past the point: "2.69e43" is printed to its 1e41 place, decimals -41.
    long d = (long)frac - exponent;
    *decimals = d < -1000 ? -1000 : d > 1000 ? 1000 : (int)d;
    return true;
}

static bool is_one_of(const char *s, const char *const *words, size_t n) {
    return find_name(s, words, n) < n;
}

// The value of a number node, with its printed decimals; a located error when it is not one.
static bool parse_number(Loader *L, const Node *node, double *out, int *decimals) {
    static const char *const nan_words[] = {".nan", ".NaN", ".NAN", "nan", "NaN", "NAN"};
    static const char *const inf_words[] = {".inf", ".Inf", ".INF"};
    static const char *const bad_inf_words[] = {"inf", "Inf", "INF", "infinity", "Infinity"};
    static const char *const bool_words[] = {"true", "True", "TRUE", "false", "False", "FALSE",
                                             "yes",  "Yes",  "YES",  "no",    "No",    "NO",
                                             "on",   "On",   "ON",   "off",   "Off",   "OFF"};
    int places = 0;
    if (node->kind != NODE_SCALAR)
        return fail(L, node, NUMBER_HINT, "expected a number here, but this is %s",
                    yamldoc_kind_name(node->kind));
    const char *text = node->text;
    if (node->style == SCALAR_LITERAL || node->style == SCALAR_FOLDED)
        return fail(L, node, NUMBER_HINT, "expected a number here, but this is a block of text");
    if (is_quoted(node)) {
        if (scan_decimal(text, &places))
            return fail(L, node, "remove the quotes to make it a number",
                        "'%s' is in quotes, so it is text, not a number", text);
        return fail(L, node, NUMBER_HINT, "'%s' is not a number", text);
    }
    const char *unsigned_text = (text[0] == '+' || text[0] == '-') ? text + 1 : text;
    if (text[0] == '\0')
        return fail(L, node, NUMBER_HINT, "a number is missing here");
    if (is_one_of(unsigned_text, nan_words, ARRAY_LEN(nan_words)))
        return fail(L, node, "write the expression 0/0 in a step if the lesson should show nan",
                    "not a number is not allowed in a lesson; compute it (0/0) if you want to "
                    "show it");
    if (is_one_of(unsigned_text, inf_words, ARRAY_LEN(inf_words))) {
        *out = text[0] == '-' ? -INFINITY : INFINITY;
        if (decimals)
            *decimals = 0;
        return true;
    }
    if (is_one_of(unsigned_text, bad_inf_words, ARRAY_LEN(bad_inf_words)))
        return fail(L, node, "write .inf (YAML's infinity) or -.inf",
                    "'%s' is not a number in YAML", text);
    if (is_one_of(text, bool_words, ARRAY_LEN(bool_words)))
        return fail(L, node, "write 1 or 0", "'%s' is a yes/no value, not a number", text);
    if (unsigned_text[0] == '0' && (unsigned_text[1] == 'x' || unsigned_text[1] == 'o' ||
                                    unsigned_text[1] == 'b')) {
        static const char *const bases[] = {"hexadecimal", "octal", "binary"};
        int base = unsigned_text[1] == 'x' ? 16 : unsigned_text[1] == 'o' ? 8 : 2;
        const char *kind = bases[base == 16 ? 0 : base == 8 ? 1 : 2];
        char *end;
        errno = 0;
        unsigned long long value = strtoull(unsigned_text + 2, &end, base);
        if (unsigned_text[2] && !*end) {
            // Every digit is one of the base's: a number, in the wrong base (and perhaps past
            // the 64 bits strtoull reads, which the hint cannot spell out in decimal).
            char hint[96];
            if (errno == 0)
                snprintf(hint, sizeof(hint), "write %s%llu", text[0] == '-' ? "-" : "", value);
            else {
                double big = 0;  // past 2^64: its value as a double, digit by digit
                for (const char *d = unsigned_text + 2; *d; d++)
                    big = big * base + (is_digit(*d) ? *d - '0' : tolower((unsigned char)*d) - 'a' + 10);
                snprintf(hint, sizeof(hint), "write it in decimal: it is about %s%.6e", text[0] == '-' ? "-" : "",
                         big);
            }
            return fail(L, node, hint, "'%s' is written in %s; a lesson's numbers are decimal",
                        text, kind);
        }
    }
    if (!scan_decimal(text, &places))
        return fail(L, node, NUMBER_HINT, "'%s' is not a number", text);
    size_t leading_zeros = strspn(unsigned_text, "0");
    if (leading_zeros > 0 && unsigned_text[strspn(unsigned_text, "0123456789")] == '\0' &&
        unsigned_text[leading_zeros] != '\0')
        return fail(L, node, "write it without the leading zero",
                    "'%s' starts with 0, which YAML reads as octal", text);
    double value = strtod(text, NULL);
    if (isinf(value))
        return fail(L, node, "write .inf if you mean infinity",
                    "'%s' is too large for a double (the largest is about 1.8e308)", text);
    *out = value;
    if (decimals)
        *decimals = places;
    return true;
}

// A plain whole number without sign or leading zeros that fits in 64 bits.
static bool whole_number(const Node *node, uint64_t *out) {
    if (node->kind != NODE_SCALAR || node->style != SCALAR_PLAIN || !is_digit(node->text[0]) ||
        (node->text[0] == '0' && node->text[1]))
        return false;
    uint64_t value = 0;
    for (const char *p = node->text; *p; p++) {
        if (!is_digit(*p) || value > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return false;
        value = value * 10 + (uint64_t)(*p - '0');
    }
    *out = value;
    return true;
}

// What to say about a node that should have been a whole number: "'abc'" or "a list".
static const char *describe(Loader *L, const Node *node) {
    if (node->kind != NODE_SCALAR)
        return yamldoc_kind_name(node->kind);
    const char *quoted = arena_printf(L->lesson->arena, "'%s'", node->text);
    return quoted ? quoted : "this";
}

static const char *whole_hint(const Node *node, const char *otherwise) {
    return node->kind == NODE_SCALAR && is_quoted(node) ? "remove the quotes to make it a number"
                                                        : otherwise;
}

// "-2", "+1", "0": a whole number that may be negative.
static bool signed_whole(const char *s, long *out) {
    bool negative = s[0] == '-';
    if (s[0] == '-' || s[0] == '+')
        s++;
    if (!is_digit(s[0]))
        return false;
    long value = 0;
    for (; is_digit(*s); s++) {
        if (value > 100000000)
            return false;
        value = value * 10 + (*s - '0');
    }
    if (*s)
        return false;
    *out = negative ? -value : value;
    return true;
}

// ---------------------------------------------------------------- tensors written out

typedef struct Values {
    Shape shape;
    size_t size;
    double *values;
    const Node **nodes;
    int *decimals;  // only when asked for
} Values;

// Walk one row of a nested list, checking it has the shape the first row gave.
static bool fill_values(Loader *L, const Node *node, size_t depth, Values *v, size_t *k) {
    const Shape *s = &v->shape;
    if (depth == s->rank) {
        if (node->kind == NODE_SEQUENCE)
            return fail(L, node, "every row of a tensor must have the same length",
                        "ragged rows: expected a number here, like the first row, but this is "
                        "a list");
        if (!parse_number(L, node, &v->values[*k], v->decimals ? &v->decimals[*k] : NULL))
            return false;
        v->nodes[(*k)++] = node;
        return true;
    }
    const char *what = depth + 1 == s->rank ? "values" : "rows";
    if (node->kind == NODE_SCALAR)
        return fail(L, node, "every row of a tensor must have the same length",
                    "ragged rows: expected a row of %zu %s here, like the first row, but this "
                    "is a single value",
                    s->dim[depth], what);
    if (node->kind == NODE_MAPPING)
        return fail(L, node, NUMBER_HINT, "expected a list of numbers here, but this is a mapping");
    if (node->n_items != s->dim[depth])
        return fail(L, node, "every row of a tensor must have the same length",
                    "ragged rows: this row has %zu %s, but the first row has %zu", node->n_items,
                    node->n_items == 1 ? (depth + 1 == s->rank ? "value" : "row") : what,
                    s->dim[depth]);
    for (size_t i = 0; i < node->n_items; i++)
        if (!fill_values(L, node->items[i], depth + 1, v, k))
            return false;
    return true;
}

// A number or a nested list of numbers (rank 0 to 4), row-major.
static bool parse_values(Loader *L, const Node *node, bool with_decimals, Values *v) {
    memset(v, 0, sizeof(*v));
    // The first item at each level gives the shape; every other row must agree.
    for (const Node *n = node; n->kind == NODE_SEQUENCE; n = n->items[0]) {
        if (n->n_items == 0)
            return fail(L, n, "write at least one number in every list",
                        "an empty list has no values; every axis of a tensor needs at least one");
        if (v->shape.rank == TENSOR_MAX_RANK)
            return fail(L, n, "a given can be a number, a list, a list of lists... 4 levels at most",
                        "a tensor has at most %d axes, but this list nests %d deep",
                        TENSOR_MAX_RANK, TENSOR_MAX_RANK + 1);
        v->shape.dim[v->shape.rank++] = n->n_items;
    }
    bool ok = shape_size(&v->shape, &v->size);
    ASSERT(ok);  // bounded by the number of nodes in the file
    v->values = arena_array(L->lesson->arena, v->size, sizeof(double));
    v->nodes = arena_array(L->lesson->arena, v->size, sizeof(Node *));
    v->decimals = with_decimals ? arena_array(L->lesson->arena, v->size, sizeof(int)) : NULL;
    if (!v->values || !v->nodes || (with_decimals && !v->decimals))
        return diag_no_memory(L->diag);
    size_t k = 0;
    if (!fill_values(L, node, 0, v, &k))
        return false;
    ASSERT(k == v->size);
    return true;
}

static bool parse_document(Loader *L, const Node *node, DocValues **out) {
    if (node->kind == NODE_MAPPING)
        return fail(L, node, "copy the numbers as the textbook printed them, like [0.2, 0.8]",
                    "document: must be a number or a list of numbers, but this is a mapping");
    Values v;
    if (!parse_values(L, node, true, &v))
        return false;
    DocValues *doc = arena_alloc(L->lesson->arena, sizeof(DocValues));
    if (!doc)
        return diag_no_memory(L->diag);
    *doc = (DocValues){.shape = v.shape, .values = v.values, .decimals = v.decimals,
                       .nodes = v.nodes, .node = node};
    *out = doc;
    return true;
}

// shape: [3, 4]
static bool parse_shape(Loader *L, const Node *node, Shape *shape) {
    memset(shape, 0, sizeof(*shape));
    if (node->kind != NODE_SEQUENCE)
        return fail(L, node, "write shape: [3] for 3 values, shape: [3, 4] for a 3 x 4 matrix",
                    "shape: must be a list of sizes, like [3, 4], but this is %s",
                    yamldoc_kind_name(node->kind));
    if (node->n_items > TENSOR_MAX_RANK)
        return fail(L, node, NULL, "a tensor has at most %d axes, but this shape has %zu",
                    TENSOR_MAX_RANK, node->n_items);
    for (size_t i = 0; i < node->n_items; i++) {
        const Node *item = node->items[i];
        uint64_t dim;
        if (!whole_number(item, &dim) || dim == 0 || dim > SIZE_MAX)
            return fail(L, item, whole_hint(item, NULL),
                        "each size in a shape is a whole number of at least 1, but this is %s",
                        describe(L, item));
        shape->dim[shape->rank++] = (size_t)dim;
    }
    return true;
}

// ---------------------------------------------------------------- labels

static bool parse_label_words(Loader *L, const Node *node, const char *what, LabelList *list) {
    if (node->kind != NODE_SEQUENCE)
        return fail(L, node, "write the words as a list: [The, cat, sat]",
                    "%s must be a list of words, but this is %s", what,
                    yamldoc_kind_name(node->kind));
    if (node->n_items == 0)
        return fail(L, node, "write at least one word: [The, cat, sat]",
                    "%s is an empty list", what);
    list->items = arena_array(L->lesson->arena, node->n_items, sizeof(char *));
    if (!list->items)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_items; i++) {
        const Node *item = node->items[i];
        if (item->kind != NODE_SCALAR)
            return fail(L, item, "write the words as a list: [The, cat, sat]",
                        "a label must be a word, but this is %s", yamldoc_kind_name(item->kind));
        list->items[i] = item->text;
    }
    list->n = node->n_items;
    list->node = node;
    return true;
}

// The slot of the label list called name: where it is, or the empty slot it would take.
static size_t label_slot(const Loader *L, const char *name) {
    size_t at = hash_name(name) & (L->cap_label_slots - 1);
    while (L->label_slots[at] && strcmp(L->lesson->labels[L->label_slots[at] - 1].name, name) != 0)
        at = (at + 1) & (L->cap_label_slots - 1);
    return at;
}

static bool load_labels(Loader *L, const Node *node) {
    Lesson *lesson = L->lesson;
    if (is_null(node))
        return true;
    if (node->kind != NODE_MAPPING)
        return fail(L, node, "write one list a line, like `tokens: [The, cat, sat]`",
                    "labels: must be a mapping of names to lists of words, but this is %s",
                    yamldoc_kind_name(node->kind));
    lesson->labels = arena_array(lesson->arena, node->n_pairs, sizeof(LabelList));
    for (L->cap_label_slots = 16; L->cap_label_slots < 2 * (node->n_pairs + 1); L->cap_label_slots *= 2)
        ;
    L->label_slots = arena_array(lesson->arena, L->cap_label_slots, sizeof(size_t));
    if ((node->n_pairs && !lesson->labels) || !L->label_slots)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_pairs; i++) {
        const NodePair *pair = &node->pairs[i];
        LabelList *list = &lesson->labels[i];
        const char *what = arena_printf(lesson->arena, "the labels '%s'", pair->key->text);
        if (!what)
            return diag_no_memory(L->diag);
        list->name = pair->key->text;
        if (!parse_label_words(L, pair->value, what, list))
            return false;
        lesson->n_labels++;
        L->label_slots[label_slot(L, list->name)] = lesson->n_labels;  // YAML keys are unique
    }
    return true;
}

// rows: tokens (a list under labels:) or rows: [The, cat, sat] (inline).
static bool parse_label_ref(Loader *L, const char *key, const Node *node, const LabelList **out) {
    Lesson *lesson = L->lesson;
    if (node->kind == NODE_SCALAR) {
        size_t found = L->label_slots ? L->label_slots[label_slot(L, node->text)] : 0;
        if (found) {
            *out = &lesson->labels[found - 1];
            return true;
        }
        const char **names = arena_array(lesson->arena, lesson->n_labels + 1, sizeof(char *));
        if (!names)
            return diag_no_memory(L->diag);
        for (size_t i = 0; i < lesson->n_labels; i++)
            names[i] = lesson->labels[i].name;
        const char *hint = suggest(L, node->text, names, lesson->n_labels,
                                   "define it under labels:, or write the words here: "
                                   "[The, cat, sat]");
        if (node->text_len == 0)
            return fail(L, node, hint, "%s: needs the name of a label list or a list of words",
                        key);
        return fail(L, node, hint, "there is no label list named '%s' under labels:",
                    node->text);
    }
    if (node->kind == NODE_MAPPING)
        return fail(L, node, "write rows: tokens (a list under labels:) or rows: [The, cat, sat]",
                    "%s: must name a label list or list the words, but this is a mapping", key);
    LabelList *list = arena_alloc(lesson->arena, sizeof(LabelList));
    const char *what = arena_printf(lesson->arena, "%s:", key);
    if (!list || !what)
        return diag_no_memory(L->diag);
    if (!parse_label_words(L, node, what, list))
        return false;
    *out = list;
    return true;
}

// A given's rows: and cols: must label an axis it has; a step's are checked once its shape is
// known. A list of the wrong length is only a warning (a student who adds a token to X has not
// yet added its word): the axis is then shown by position.
static bool check_given_labels(Loader *L, LessonGiven *g) {
    char shape[64];
    shape_format(&g->shape, shape, sizeof(shape));
    if (g->rows) {
        if (g->shape.rank < 2)
            return fail(L, g->rows_node, "label a list's only axis with cols:",
                        "rows: labels the second-to-last axis, but '%s' has shape %s", g->name,
                        shape);
        size_t n = g->shape.dim[g->shape.rank - 2];
        if (g->rows->n != n) {
            diag_warning(L->diag, L->src->path, g->rows_node->line, g->rows_node->col,
                         "rows: gives %zu labels, but '%s' has %zu rows (shape %s): its rows are shown by position",
                         g->rows->n, g->name, n, shape);
            g->rows = NULL;
        }
    }
    if (g->cols) {
        if (g->shape.rank < 1)
            return fail(L, g->cols_node, "a single number has no axis to label",
                        "cols: labels the last axis, but '%s' is a single number", g->name);
        size_t n = g->shape.dim[g->shape.rank - 1];
        if (g->cols->n != n) {
            diag_warning(L->diag, L->src->path, g->cols_node->line, g->cols_node->col,
                         "cols: gives %zu labels, but '%s' has %zu columns (shape %s): its columns are shown by "
                         "position",
                         g->cols->n, g->name, n, shape);
            g->cols = NULL;
        }
    }
    return true;
}

// A document prints a few decimals. A document: number with more than the lesson prints was
// most likely copied from a trace, and would be judged to its last digit.
static void warn_document_decimals(Loader *L, const char *name, const DocValues *dv) {
    if (!dv)
        return;
    int digits = L->lesson->digits >= 0 ? L->lesson->digits : LESSON_DEFAULT_DIGITS;
    size_t n = 0;
    shape_size(&dv->shape, &n);
    for (size_t k = 0; k < n; k++) {
        if (dv->decimals[k] <= digits)
            continue;
        const Node *at = dv->nodes[k];
        diag_warning(L->diag, L->src->path, at->line, at->col,
                     "the document value %s for '%s' has %d decimals, more than the %d this lesson prints: a "
                     "document could not have printed it; it is judged to its last decimal",
                     at->text, name, dv->decimals[k], digits);
        return;  // one warning per document: the rest are likely copied the same way
    }
}

static void warn_documents(Loader *L) {
    const Lesson *lesson = L->lesson;
    for (size_t i = 0; i < lesson->n_givens; i++)
        warn_document_decimals(L, lesson->givens[i].name, lesson->givens[i].document);
    for (size_t i = 0; i < lesson->n_steps; i++)
        warn_document_decimals(L, lesson->steps[i].name, lesson->steps[i].document);
}

// ---------------------------------------------------------------- sections

// title:, source:, intro:, outro:
static bool parse_text(Loader *L, const char *key, const Node *node, const char **out) {
    if (node->kind != NODE_SCALAR)
        return fail(L, node, "put the text after the key, in quotes if it holds ': '",
                    "%s: must be text, but this is %s", key, yamldoc_kind_name(node->kind));
    *out = node->text;
    return true;
}

static bool load_digits(Loader *L, const Node *node) {
    uint64_t digits;
    if (!whole_number(node, &digits) || digits > LESSON_MAX_DIGITS)
        return fail(L, node, whole_hint(node, NULL),
                    "digits: must be a whole number from 0 to %d, but this is %s",
                    LESSON_MAX_DIGITS, describe(L, node));
    L->lesson->digits = (int)digits;
    return true;
}

// The keys of a given written as a mapping.
typedef struct GivenKeys {
    const NodePair *values, *about, *rows, *cols, *document, *shape, *init, *distribution,
        *scale, *seed, *text, *tokenizer;
} GivenKeys;

static bool load_given_init(Loader *L, const GivenKeys *k, LessonGiven *g) {
    const NodePair *random_only[] = {k->distribution, k->scale, k->seed};
    g->init = GIVEN_SHAPE_ONLY;
    if (k->init) {
        const Node *v = k->init->value;
        static const GivenInit inits[] = {GIVEN_ZEROS, GIVEN_ONES, GIVEN_IDENTITY, GIVEN_RANDOM};
        _Static_assert(ARRAY_LEN(inits) == ARRAY_LEN(INIT_NAMES), "one init for each of its names");
        const size_t n = ARRAY_LEN(INIT_NAMES);
        size_t i = v->kind == NODE_SCALAR ? find_name(v->text, INIT_NAMES, n) : n;
        if (i == n)
            return fail(L, v,
                        suggest(L, v->kind == NODE_SCALAR ? v->text : "", INIT_NAMES, n,
                                "init: is zeros, ones, identity or random"),
                        "unknown init: %s", describe(L, v));
        g->init = inits[i];
    }
    for (size_t i = 0; i < ARRAY_LEN(random_only); i++)
        if (random_only[i] && g->init != GIVEN_RANDOM)
            return fail(L, random_only[i]->key, "add init: random, or remove this line",
                        "%s: only applies to init: random", random_only[i]->key->text);
    char shape[64];
    shape_format(&g->shape, shape, sizeof(shape));
    if (g->init == GIVEN_IDENTITY &&
        (g->shape.rank < 2 || g->shape.dim[g->shape.rank - 1] != g->shape.dim[g->shape.rank - 2]))
        return fail(L, k->init->value, "an identity matrix is square, like shape: [4, 4]",
                    "init: identity needs the last two sizes equal, but the shape is %s", shape);
    g->distribution = KERNEL_NORMAL;
    g->scale = 1;
    g->seed = 0;
    if (k->distribution) {
        const Node *v = k->distribution->value;
        static const KernelDistribution distributions[] = {KERNEL_UNIFORM, KERNEL_NORMAL};
        _Static_assert(ARRAY_LEN(distributions) == ARRAY_LEN(DISTRIBUTION_NAMES), "one distribution per name");
        const size_t n = ARRAY_LEN(DISTRIBUTION_NAMES);
        size_t i = v->kind == NODE_SCALAR ? find_name(v->text, DISTRIBUTION_NAMES, n) : n;
        if (i == n)
            return fail(L, v,
                        suggest(L, v->kind == NODE_SCALAR ? v->text : "", DISTRIBUTION_NAMES, n,
                                "distribution: is uniform or normal"),
                        "unknown distribution: %s", describe(L, v));
        g->distribution = distributions[i];
    }
    if (k->scale) {
        if (!parse_number(L, k->scale->value, &g->scale, NULL))
            return false;
        if (!isfinite(g->scale) || g->scale < 0)
            return fail(L, k->scale->value, "write a scale like 0.02",
                        "scale: must be a finite number of at least 0, but this is '%s'",
                        k->scale->value->text);
    }
    if (k->seed && !whole_number(k->seed->value, &g->seed))
        return fail(L, k->seed->value, whole_hint(k->seed->value, NULL),
                    "seed: must be a whole number from 0 to %llu, but this is %s",
                    (unsigned long long)UINT64_MAX, describe(L, k->seed->value));
    return true;
}

static bool load_given_shape(Loader *L, const GivenKeys *k, LessonGiven *g) {
    if (!parse_shape(L, k->shape->value, &g->shape) || !load_given_init(L, k, g))
        return false;
    char shape[64], count[32], limit[32], bytes[32], limit_bytes[32];
    shape_format(&g->shape, shape, sizeof(shape));
    size_t size;
    if (!shape_size(&g->shape, &size))
        return fail(L, k->shape->value, "the sizes of a shape multiply to its number of values",
                    "shape %s has more values than a 64-bit count can hold", shape);
    if (g->init == GIVEN_SHAPE_ONLY || size <= TENSOR_MAX_VALUES)
        return true;
    format_count((double)size, count, sizeof(count));
    format_count((double)TENSOR_MAX_VALUES, limit, sizeof(limit));
    format_bytes((double)size * sizeof(double), bytes, sizeof(bytes));
    format_bytes((double)TENSOR_MAX_VALUES * sizeof(double), limit_bytes, sizeof(limit_bytes));
    return fail(L, k->shape->value,
                "leave out init: to make it shape-only (a shape without values), or make it "
                "smaller",
                "shape %s needs %s values (%s); a tensor holds at most %s values (%s)", shape,
                count, bytes, limit, limit_bytes);
}

// The ids of text in g (its values, one axis) and its tokens as the labels of that axis.
static bool set_given_ids(Arena *arena, LessonGiven *g, const GivenText *gt) {
    LabelList *list = arena_alloc(arena, sizeof(LabelList));
    if (!list)
        return false;
    *list = (LabelList){.items = gt->labels, .n = gt->n, .node = g->text_node};
    g->init = GIVEN_VALUES;
    g->shape = (Shape){.rank = 1, .dim = {gt->n}};
    g->values = gt->ids;
    g->value_nodes = NULL;
    g->cols = list;
    g->cols_node = g->text_node;
    return true;
}

// The rest of a text given, once its tokenizer is read.
static bool load_given_ids(Loader *L, const GivenKeys *k, LessonGiven *g, const char *text) {
    size_t bad;
    if (!given_text_encode(&g->text, text, k->text->value->text_len, L->lesson->arena, &bad,
                           L->diag))
        return bad == SIZE_MAX ? false
                               : fail(L, g->text_node, "save the lesson as UTF-8",
                                      "text: is not UTF-8 at byte %zu", bad);
    if (!set_given_ids(L->lesson->arena, g, &g->text))
        return diag_no_memory(L->diag);
    if (k->about && !parse_text(L, "about", k->about->value, &g->about))
        return false;
    g->about_node = k->about ? k->about->value : NULL;
    return !k->document || parse_document(L, k->document->value, &g->document);
}

// text: with tokenizer: the ids of the text, read with the tokenizer in that folder now, so
// that a missing or broken tokenizer stops the lesson before any output.
static bool load_given_text(Loader *L, const Node *key, const GivenKeys *k, LessonGiven *g) {
    const NodePair *others[] = {k->values, k->shape, k->init, k->distribution, k->scale,
                                k->seed, k->rows, k->cols};
    for (size_t i = 0; i < ARRAY_LEN(others); i++)
        if (others[i])
            return fail(L, others[i]->key, "the ids and their labels come from the text; remove this line",
                        "%s: does not go with text:", others[i]->key->text);
    if (!k->text || !k->tokenizer)
        return fail(L, key, "write both, as {text: \"The cat sat\", tokenizer: gpt2/}",
                    "given '%s' has %s but no %s", g->name, k->text ? "text:" : "tokenizer:",
                    k->text ? "tokenizer:" : "text:");
    const char *text = NULL, *folder = NULL;
    if (!parse_text(L, "text", k->text->value, &text) ||
        !parse_text(L, "tokenizer", k->tokenizer->value, &folder))
        return false;
    if (k->text->value->text_len == 0)
        return fail(L, k->text->value, "write the sentence to be turned into tokens",
                    "text: is empty: it has no tokens");
    g->text_node = k->text->value;
    g->tokenizer_node = k->tokenizer->value;
    Diag found;
    diag_init(&found);
    if (!given_text_open(&g->text, L->lesson->path, folder, &found)) {
        if (found.out_of_memory)
            return diag_no_memory(L->diag);
        if (found.path[0]) {  // located in the tokenizer's own files
            diag_append(L->diag, &found);
            return false;
        }
        const Node *at = g->tokenizer_node;
        if (diag_error(L->diag, STATUS_LESSON_ERROR, L->src, at->line, at->col,
                       yamldoc_node_width(at), "%s", found.message) == STATUS_LESSON_ERROR)
            diag_hint(L->diag, "%s", found.hint);
        return false;
    }
    if (load_given_ids(L, k, g, text))
        return true;
    given_text_finish(&g->text);  // the next given is loaded into this one's place
    g->text_node = NULL;
    return false;
}

static bool load_given_mapping(Loader *L, const Node *key, const Node *node, LessonGiven *g) {
    GivenKeys k = {0};
    const NodePair **slots[] = {&k.values, &k.about, &k.rows,         &k.cols,  &k.document,
                                &k.shape,  &k.init,  &k.distribution, &k.scale, &k.seed,
                                &k.text,   &k.tokenizer};
    _Static_assert(ARRAY_LEN(slots) == ARRAY_LEN(GIVEN_KEYS), "one slot per given key");
    for (size_t i = 0; i < node->n_pairs; i++) {
        const NodePair *pair = &node->pairs[i];
        size_t at = find_name(pair->key->text, GIVEN_KEYS, ARRAY_LEN(GIVEN_KEYS));
        if (at == ARRAY_LEN(GIVEN_KEYS))
            return fail(L, pair->key,
                        suggest(L, pair->key->text, GIVEN_KEYS, ARRAY_LEN(GIVEN_KEYS),
                                "a given takes values:, about:, rows:, cols:, document:, "
                                "shape: with init:, distribution:, scale:, seed:, or text: "
                                "with tokenizer:"),
                        "unknown key '%s' in given '%s'", pair->key->text, g->name);
        *slots[at] = pair;
    }
    if (k.text || k.tokenizer)
        return load_given_text(L, key, &k, g);
    if (k.values && k.shape) {
        const NodePair *later = k.values < k.shape ? k.shape : k.values;  // pairs in file order
        return fail(L, later->key, "values: lists the numbers; shape: alone only gives the size",
                    "given '%s' has both values: and shape:; write one of them", g->name);
    }
    if (!k.values && !k.shape)
        return fail(L, key, "write values: [...] or shape: [...]",
                    "given '%s' has neither values: nor shape:", g->name);
    if (k.values) {
        const NodePair *shape_keys[] = {k.init, k.distribution, k.scale, k.seed};
        for (size_t i = 0; i < ARRAY_LEN(shape_keys); i++)
            if (shape_keys[i])
                return fail(L, shape_keys[i]->key, "use shape: instead of values:",
                            "%s: goes with shape:, not with values:", shape_keys[i]->key->text);
        if (k.values->value->kind == NODE_MAPPING)
            return fail(L, k.values->value, NUMBER_HINT,
                        "values: must be a number or a list of numbers, but this is a mapping");
        Values v;
        if (!parse_values(L, k.values->value, false, &v))
            return false;
        g->init = GIVEN_VALUES;
        g->shape = v.shape;
        g->values = v.values;
        g->value_nodes = v.nodes;
    } else if (!load_given_shape(L, &k, g)) {
        return false;
    }
    if (k.about && !parse_text(L, "about", k.about->value, &g->about))
        return false;
    g->about_node = k.about ? k.about->value : NULL;
    if (k.rows) {
        g->rows_node = k.rows->value;
        if (!parse_label_ref(L, "rows", g->rows_node, &g->rows))
            return false;
    }
    if (k.cols) {
        g->cols_node = k.cols->value;
        if (!parse_label_ref(L, "cols", g->cols_node, &g->cols))
            return false;
    }
    if (!check_given_labels(L, g))
        return false;
    return !k.document || parse_document(L, k.document->value, &g->document);
}

static bool load_given(Loader *L, const NodePair *pair, LessonGiven *g) {
    g->name = pair->key->text;
    g->key = pair->key;
    g->value = pair->value;
    if (!check_name(L, pair->key))
        return false;
    const Node *node = pair->value;
    if (node->kind == NODE_MAPPING)
        return load_given_mapping(L, pair->key, node, g);
    if (is_null(node))
        return fail(L, pair->key,
                    "write a number, a list like [1, 2], or a mapping with values: or shape:",
                    "given '%s' has no value", g->name);
    Values v;
    if (!parse_values(L, node, false, &v))
        return false;
    g->init = GIVEN_VALUES;
    g->shape = v.shape;
    g->values = v.values;
    g->value_nodes = v.nodes;
    return true;
}

// Start loading one given or step on its own: its errors go to L->item.
static Diag *item_start(Loader *L) {
    Diag *diag = L->diag;
    diag_init(L->item);
    L->diag = L->item;
    return diag;
}

// The given or step is loaded (ok) or not: keep what it reported and go on with the next. False
// when loading must stop: memory ran out, or DIAG_MAX_ERRORS errors are enough for one run.
static bool item_done(Loader *L, Diag *diag, bool ok, bool more_follow) {
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

static bool load_givens(Loader *L, const Node *node) {
    Lesson *lesson = L->lesson;
    if (is_null(node))
        return true;
    if (node->kind != NODE_MAPPING)
        return fail(L, node, "write one given a line, like `X: [[1, 0], [0, 1]]`",
                    "given: must be a mapping of names to values, but this is %s",
                    yamldoc_kind_name(node->kind));
    lesson->givens = arena_array(lesson->arena, node->n_pairs, sizeof(LessonGiven));
    if (node->n_pairs && !lesson->givens)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_pairs; i++) {
        Diag *diag = item_start(L);
        bool ok = load_given(L, &node->pairs[i], &lesson->givens[lesson->n_givens]);
        if (!item_done(L, diag, ok, true))
            return false;
        lesson->n_givens += ok;
    }
    return true;
}

// ---------------------------------------------------------------- steps

// Byte offset of the character at line:col, or SIZE_MAX when the file has no such place.
// False when memory runs out.
static bool offset_of(Loader *L, size_t line, size_t col, size_t *offset) {
    const Source *src = L->src;
    *offset = SIZE_MAX;
    if (!L->line_starts) {
        size_t start = src->len >= 3 && memcmp(src->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        size_t n = 1;
        for (size_t i = start; i < src->len; i++)
            n += src->text[i] == '\n';
        L->line_starts = arena_array(L->lesson->arena, n, sizeof(size_t));
        if (!L->line_starts)
            return diag_no_memory(L->diag);
        L->line_starts[0] = start;
        for (size_t i = start, l = 1; i < src->len; i++)
            if (src->text[i] == '\n')
                L->line_starts[l++] = i + 1;
        L->n_lines = n;
    }
    if (line == 0 || line > L->n_lines)
        return true;
    size_t at = L->line_starts[line - 1];
    for (size_t c = 1; c < col && at < src->len && src->text[at] != '\n'; c++) {
        at++;
        while (at < src->len && ((unsigned char)src->text[at] & 0xC0) == 0x80)
            at++;
    }
    *offset = at;
    return true;
}

// The expression is exact when its text stands in the file byte for byte: a plain or quoted
// scalar on one line without escapes. Checking against the file, not guessing from the style,
// keeps odd cases (a lone CR line end, '' or \ escapes) safely inexact. False when memory
// runs out.
static bool locate_expr(Loader *L, LessonStep *step, const Node *node) {
    step->expr_line = node->line;
    step->expr_col = node->col;
    step->expr_exact = false;
    size_t skip = is_quoted(node) ? 1 : 0;
    char quote = node->style == SCALAR_SINGLE_QUOTED ? '\'' : '"';
    if (node->line != node->end_line || (node->style != SCALAR_PLAIN && !skip) ||
        (skip && strchr(node->text, quote)) ||
        (node->style == SCALAR_DOUBLE_QUOTED && strchr(node->text, '\\')))
        return true;
    size_t at;
    if (!offset_of(L, node->line, node->col, &at))
        return false;
    const Source *src = L->src;
    if (at == SIZE_MAX || at + skip + node->text_len + skip > src->len ||
        memcmp(src->text + at + skip, node->text, node->text_len) != 0 ||
        (skip && src->text[at + skip + node->text_len] != quote))
        return true;
    step->expr_col = node->col + skip;
    step->expr_exact = true;
    return true;
}

// explain: [0, 1] | row 0 | all, and quiz: [0, 1] | row 0 (key says which; only explain: takes all)
static bool parse_explain(Loader *L, const char *key, const Node *node, ExplainSpec *ex) {
    bool explain = strcmp(key, "explain") == 0;
    const char *hint = explain ? "explain: takes [i, j] (one element), row i (one row), or all"
                               : "quiz: takes [i, j] (one element) or row i (one row)";
    ex->node = node;
    if (node->kind == NODE_SEQUENCE) {
        if (node->n_items == 0 || node->n_items > TENSOR_MAX_RANK)
            return fail(L, node, hint, "%s: needs 1 to %d indices, but this list has %zu",
                        key, TENSOR_MAX_RANK, node->n_items);
        for (size_t i = 0; i < node->n_items; i++) {
            const Node *item = node->items[i];
            if (item->kind != NODE_SCALAR || is_quoted(item) ||
                !signed_whole(item->text, &ex->index[i])) {
                // signed_whole refuses past 10 digits: no tensor a lesson can hold has such an axis.
                if (item->kind == NODE_SCALAR && !is_quoted(item) && item->text_len > 9 &&
                    strspn(item->text + (item->text[0] == '-'), "0123456789") ==
                        item->text_len - (item->text[0] == '-'))
                    return fail(L, item, hint, "the index %s is far outside any tensor a lesson can hold",
                                item->text);
                return fail(L, item, hint, "an index must be a whole number, but this is %s",
                            describe(L, item));
            }
        }
        ex->kind = EXPLAIN_ELEMENT;
        ex->n_index = node->n_items;
        return true;
    }
    if (!explain && node->kind == NODE_SCALAR && strcmp(node->text, "all") == 0)
        return fail(L, node, hint, "quiz: all would ask every element; choose an element or a row");
    if (explain && node->kind == NODE_SCALAR && strcmp(node->text, "all") == 0) {
        ex->kind = EXPLAIN_ALL;
        return true;
    }
    if (node->kind == NODE_SCALAR && strncmp(node->text, "row ", 4) == 0) {
        const char *p = node->text + 4;
        while (*p == ' ')
            p++;
        if (signed_whole(p, &ex->index[0])) {
            ex->kind = EXPLAIN_ROW;
            ex->n_index = 1;
            return true;
        }
    }
    return fail(L, node, hint, "%s: cannot read %s", key, describe(L, node));
}

// show: heatmap | bars | table; whether it fits the step's shape is checked with the shapes.
static bool parse_show(Loader *L, const Node *node, PictureKind *show) {
    size_t n = ARRAY_LEN(PICTURE_NAMES);
    size_t i = node->kind == NODE_SCALAR ? find_name(node->text, PICTURE_NAMES, n) : n;
    if (i == n)
        return fail(L, node,
                    suggest(L, node->kind == NODE_SCALAR ? node->text : "", PICTURE_NAMES, n,
                            "show: is heatmap, bars or table"),
                    "unknown show: %s", describe(L, node));
    static const PictureKind kinds[] = {PICTURE_TABLE, PICTURE_HEATMAP, PICTURE_BARS};
    *show = kinds[i];
    return true;
}

static bool load_step_expr(Loader *L, const NodePair *pair, LessonStep *step) {
    const Node *value = pair->value;
    step->name = pair->key->text;
    step->key = pair->key;
    step->expr_node = value;
    if (!check_name(L, pair->key))
        return false;
    if (value->kind != NODE_SCALAR)
        return fail(L, value, "an expression is text; to write a list literal, quote it: \"[1, 2]\"",
                    "the expression for '%s' must be text, like X @ W_Q, but this is %s",
                    step->name, yamldoc_kind_name(value->kind));
    if (value->text[strspn(value->text, " \t\r\n")] == '\0')
        return fail(L, value->text_len ? value : pair->key,
                    "write what it computes after the ':', like `Q: X @ W_Q`",
                    "the expression for '%s' is empty", step->name);
    step->expr = value->text;
    return locate_expr(L, step, value);
}

static bool load_step(Loader *L, const Node *item, LessonStep *step) {
    if (item->kind != NODE_MAPPING)
        return fail(L, item, "write a step as `- name: expression`, like `- Q: X @ W_Q`",
                    "a step must be `name: expression`, but this is %s",
                    yamldoc_kind_name(item->kind));
    const NodePair *name = NULL;
    for (size_t i = 0; i < item->n_pairs; i++) {
        const NodePair *pair = &item->pairs[i];
        if (find_name(pair->key->text, STEP_RESERVED, ARRAY_LEN(STEP_RESERVED)) <
            ARRAY_LEN(STEP_RESERVED))
            continue;
        if (name)
            return fail(L, pair->key,
                        "a step computes one result; besides it, a step may have say:, rows:, "
                        "cols:, document:, explain:, show:, claim: and quiz:",
                        "this step names two results, '%s' and '%s'; split it into two steps",
                        name->key->text, pair->key->text);
        name = pair;
    }
    if (!name && item->n_pairs == 1)  // `- rows: X @ W`: a key a step carries, taken for a name
        return fail(L, item->pairs[0].key,
                    "a step looks like `- Q: X @ W_Q`; to name a result after one of these keys, "
                    "add to the name (row_sums, not rows)",
                    "this step has no result name: '%s' is one of the keys a step may carry (say:, "
                    "rows:, cols:, document:, explain:, show:, claim:, quiz:), so it cannot name a result",
                    item->pairs[0].key->text);
    if (!name)
        return fail(L, item, "a step looks like `- Q: X @ W_Q`",
                    "this step has no result name; write `- name: expression`");
    if (!load_step_expr(L, name, step))
        return false;
    const Node *say = yamldoc_get(item, "say"), *explain = yamldoc_get(item, "explain");
    const Node *document = yamldoc_get(item, "document");
    step->rows_node = yamldoc_get(item, "rows");
    step->cols_node = yamldoc_get(item, "cols");
    step->show_node = yamldoc_get(item, "show");
    if (say && !parse_text(L, "say", say, &step->say))
        return false;
    step->say_node = say;
    if (step->rows_node && !parse_label_ref(L, "rows", step->rows_node, &step->rows))
        return false;
    if (step->cols_node && !parse_label_ref(L, "cols", step->cols_node, &step->cols))
        return false;
    if (document && !parse_document(L, document, &step->document))
        return false;
    if (explain && !parse_explain(L, "explain", explain, &step->explain))
        return false;
    const Node *quiz = yamldoc_get(item, "quiz");
    if (quiz && !parse_explain(L, "quiz", quiz, &step->quiz))
        return false;
    step->claim_node = yamldoc_get(item, "claim");
    return !step->show_node || parse_show(L, step->show_node, &step->show);
}

// ---------------------------------------------------------------- claims

static bool load_claim_expr(Loader *L, const Node *key, const Node *value, LessonClaim *claim) {
    LessonStep *w = &claim->where;
    w->name = claim->text;
    w->key = key;
    w->expr_node = value;
    if (value->kind != NODE_SCALAR)
        return fail(L, value, "write the claim as an expression, like allclose(sum(weights, axis=-1), 1)",
                    "a claim must be an expression, but this is %s", yamldoc_kind_name(value->kind));
    if (value->text[strspn(value->text, " \t\r\n")] == '\0')
        return fail(L, value->text_len ? value : key,
                    "write what must hold after the ':', like `- rows sum to 1: allclose(sum(w, axis=-1), 1)`",
                    "the claim '%s' has no expression", claim->text);
    w->expr = value->text;
    locate_expr(L, w, value);
    return true;
}

// `- text: expression` (a claims: item, or a step's claim: written with its text).
static bool load_claim_pair(Loader *L, const Node *node, LessonClaim *claim) {
    const char *hint = "write a claim as `- what holds: expression`, like `- rows sum to 1: allclose(sum(w, axis=-1), 1)`";
    if (node->kind != NODE_MAPPING || node->n_pairs != 1)
        return fail(L, node, hint, "a claim must be one `text: expression` pair, but this is %s",
                    node->kind == NODE_MAPPING ? "a mapping of several keys" : yamldoc_kind_name(node->kind));
    const NodePair *pair = &node->pairs[0];
    claim->text = pair->key->text;
    return load_claim_expr(L, pair->key, pair->value, claim);
}

static bool load_claims(Loader *L, const Node *node) {
    Lesson *lesson = L->lesson;
    size_t n = 0;
    for (size_t i = 0; i < lesson->n_steps; i++)
        n += lesson->steps[i].claim_node != NULL;
    if (node && !is_null(node) && node->kind != NODE_SEQUENCE)
        return fail(L, node, "write each claim on its own line as `- what holds: expression`",
                    "claims: must be a list of claims, but this is %s", yamldoc_kind_name(node->kind));
    size_t n_top = node && node->kind == NODE_SEQUENCE ? node->n_items : 0;
    if (n + n_top == 0)
        return true;
    lesson->claims = arena_array(lesson->arena, n + n_top, sizeof(LessonClaim));
    if (!lesson->claims)
        return diag_no_memory(L->diag);
    // Each claim is loaded on its own, as givens and steps are: every broken one is reported.
    for (size_t k = 0, i = 0; k < n + n_top; k++) {
        while (k < n && !lesson->steps[i].claim_node)
            i++;
        LessonClaim *claim = &lesson->claims[lesson->n_claims];
        Diag *diag = item_start(L);
        bool ok;
        if (k < n) {
            const Node *c = lesson->steps[i].claim_node;
            claim->step = &lesson->steps[i++];
            if (c->kind == NODE_MAPPING) {
                ok = load_claim_pair(L, c, claim);
            } else {
                claim->text = c->kind == NODE_SCALAR ? c->text : "";
                ok = load_claim_expr(L, c, c, claim);
            }
        } else {
            ok = load_claim_pair(L, node->items[k - n], claim);
        }
        if (!item_done(L, diag, ok, k + 1 < n + n_top))
            return false;
        lesson->n_claims += ok;
    }
    return true;
}

static bool load_steps(Loader *L, const NodePair *pair) {
    Lesson *lesson = L->lesson;
    const Node *node = pair->value;
    const char *hint = "write each step on its own line as `- name: expression`";
    if (is_null(node) || (node->kind == NODE_SEQUENCE && node->n_items == 0))
        return fail(L, is_null(node) ? pair->key : node, hint,
                    "steps: is empty; a lesson needs at least one step");
    if (node->kind != NODE_SEQUENCE)
        return fail(L, node, hint, "steps: must be a list of steps, but this is %s",
                    yamldoc_kind_name(node->kind));
    lesson->steps = arena_array(lesson->arena, node->n_items, sizeof(LessonStep));
    if (!lesson->steps)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < node->n_items; i++) {
        Diag *diag = item_start(L);
        bool ok = load_step(L, node->items[i], &lesson->steps[lesson->n_steps]);
        if (!item_done(L, diag, ok, i + 1 < node->n_items))
            return false;
        lesson->n_steps += ok;
    }
    return true;
}

// ---------------------------------------------------------------- the lesson

static bool load_lesson(Loader *L) {
    Lesson *lesson = L->lesson;
    const Node *root = lesson->doc->root;
    if (!root)
        return fail_top(L, "start with `title: ...`, then `steps:` and a list of steps",
                        "the lesson is empty; a lesson needs at least title: and steps:");
    if (root->kind != NODE_MAPPING)
        return fail(L, root, "start the file with `title: ...` at the left margin, then `steps:`",
                    "a lesson must be a mapping with keys like title: and steps:, but this is %s",
                    yamldoc_kind_name(root->kind));
    for (size_t i = 0; i < root->n_pairs; i++) {
        const Node *key = root->pairs[i].key;
        if (find_name(key->text, TOP_KEYS, ARRAY_LEN(TOP_KEYS)) == ARRAY_LEN(TOP_KEYS))
            return fail(L, key,
                        suggest(L, key->text, TOP_KEYS, ARRAY_LEN(TOP_KEYS),
                                "the top-level keys are title, source, intro, outro, digits, "
                                "labels, given, steps and claims"),
                        "unknown key '%s' at the top of the lesson", key->text);
    }
    const Node *title = yamldoc_get(root, "title");
    const NodePair *steps = NULL;
    for (size_t i = 0; i < root->n_pairs; i++)
        if (strcmp(root->pairs[i].key->text, "steps") == 0)
            steps = &root->pairs[i];
    if (!title || !steps)
        return fail_top(L, "every lesson needs title: and steps:", "the lesson has no %s",
                        !title && !steps ? "title: and no steps:" : !title ? "title:" : "steps:");
    if (!parse_text(L, "title", title, &lesson->title))
        return false;
    if (lesson->title[0] == '\0')
        return fail(L, title, "write the lesson's title after 'title:'", "title: is empty");
    const char **optional[] = {&lesson->source, &lesson->intro, &lesson->outro};
    const Node **nodes[] = {NULL, &lesson->intro_node, &lesson->outro_node};
    for (size_t i = 0; i < ARRAY_LEN(optional); i++) {
        const Node *node = yamldoc_get(root, TOP_KEYS[1 + i]);
        if (node && !is_null(node) && !parse_text(L, TOP_KEYS[1 + i], node, optional[i]))
            return false;
        if (node && !is_null(node) && nodes[i])
            *nodes[i] = node;
    }
    const Node *digits = yamldoc_get(root, "digits");
    const Node *labels = yamldoc_get(root, "labels"), *given = yamldoc_get(root, "given");
    lesson->digits = -1;
    if (digits && !load_digits(L, digits))
        return false;
    if (labels && !load_labels(L, labels))
        return false;
    if (given && !load_givens(L, given))
        return false;
    return load_steps(L, steps) && load_claims(L, yamldoc_get(root, "claims")) && !L->failed;
}

static void finish_given_texts(Lesson *lesson) {
    for (size_t i = 0; i < lesson->n_givens; i++)
        given_text_finish(&lesson->givens[i].text);
}

Lesson *lesson_create(const char *path, const char *bytes, size_t len, Diag *diag) {
    Lesson *result = NULL, *lesson = NULL;
    Arena *arena = NULL;
    Diag *item = NULL;  // one given's or step's errors at a time
    YamlDoc *doc = yamldoc_create(path, bytes, len, diag);
    if (!doc)
        goto done;
    arena = arena_create();
    lesson = arena ? arena_alloc(arena, sizeof(Lesson)) : NULL;
    if (!lesson) {
        diag_out_of_memory(diag);
        goto done;
    }
    lesson->arena = arena;
    lesson->doc = doc;
    lesson->path = doc->source.path;
    lesson->digits = -1;
    item = util_malloc(sizeof(Diag));
    if (!item) {
        diag_out_of_memory(diag);
        goto done;
    }
    Loader loader = {.lesson = lesson, .diag = diag, .src = &doc->source, .item = item};
    if (!load_lesson(&loader))
        goto done;
    warn_documents(&loader);
    result = lesson;

done:
    util_free(item);
    if (!result) {
        if (lesson)
            finish_given_texts(lesson);
        yamldoc_destroy(doc);
        arena_destroy(arena);
    }
    return result;
}

Lesson *lesson_load_file(const char *path, Diag *diag) {
    Lesson *result = NULL;
    char *bytes = NULL;
    size_t len = 0;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read lesson '%s': %s", path,
                   strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read lesson '%s': %s", path,
                   strerror(EISDIR));
        goto done;
    }
    // Read one byte past the limit at most, so yamldoc can tell a file that is too large; a
    // pipe or a growing file is read to its end like any other.
    size_t cap = S_ISREG(st.st_mode) && (uintmax_t)st.st_size < YAMLDOC_MAX_BYTES
                     ? (size_t)st.st_size + 1
                     : YAMLDOC_MAX_BYTES + 1;
    bytes = util_malloc(cap);
    if (!bytes) {
        diag_out_of_memory(diag);
        goto done;
    }
    for (;;) {
        if (len == cap) {
            if (cap > YAMLDOC_MAX_BYTES)
                break;
            size_t grown = 2 * cap < YAMLDOC_MAX_BYTES + 1 ? 2 * cap : YAMLDOC_MAX_BYTES + 1;
            char *more = util_realloc(bytes, grown);
            if (!more) {
                diag_out_of_memory(diag);
                goto done;
            }
            bytes = more;
            cap = grown;
        }
        ssize_t n = read(fd, bytes + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read lesson '%s': %s",
                       path, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    result = lesson_create(path, bytes, len, diag);

done:
    if (fd >= 0)
        close(fd);
    util_free(bytes);
    return result;
}

void lesson_destroy(Lesson *lesson) {
    if (!lesson)
        return;
    finish_given_texts(lesson);
    yamldoc_destroy(lesson->doc);
    arena_destroy(lesson->arena);  // the lesson itself lives in its arena
}

int lesson_replace_text(Lesson *lesson, const char *text, Diag *diag) {
    size_t len = strlen(text), replaced = 0;
    if (len == 0)
        return diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--text is empty: it has no tokens");
    for (size_t i = 0; i < lesson->n_givens; i++) {
        LessonGiven *g = &lesson->givens[i];
        if (!g->text_node)
            continue;
        size_t bad;
        if (!given_text_encode(&g->text, text, len, lesson->arena, &bad, diag)) {
            if (bad == SIZE_MAX)
                return diag->status;
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--text is not UTF-8 at byte %zu", bad);
            diag_hint(diag, "give the text as UTF-8, as a terminal types it");
            return STATUS_USAGE_ERROR;
        }
        if (!set_given_ids(lesson->arena, g, &g->text))
            return diag_out_of_memory(diag);
        replaced++;
    }
    if (replaced == 0) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "--text: lesson '%s' has no text to replace", lesson->path);
        diag_hint(diag, "--text replaces the text: of a given like tokens: {text: \"The cat sat\", tokenizer: gpt2/}");
        return STATUS_USAGE_ERROR;
    }
    return STATUS_OK;
}

void lesson_expr_position(const LessonStep *step, size_t offset, size_t *line, size_t *col) {
    *line = step->expr_line;
    *col = step->expr_col;
    if (!step->expr_exact)
        return;
    // Columns count characters, as libyaml's marks and diag's caret do.
    for (size_t i = 0; i < offset && step->expr[i]; i++)
        if (((unsigned char)step->expr[i] & 0xC0) != 0x80)
            (*col)++;
}

// Characters (not bytes) in s[0, n): columns count characters.
static size_t characters(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

// The bytes of line `line` (1-based) of src, or NULL.
static const char *source_line(const Source *src, size_t line, size_t *len) {
    const char *p = src->text, *end = src->text + src->len;
    if (src->len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    for (size_t l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return NULL;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *len = (size_t)((nl ? nl : end) - p);
    if (*len && p[*len - 1] == '\r')
        (*len)--;
    return p;
}

bool lesson_text_position(const Lesson *lesson, const Node *node, size_t offset, size_t *line, size_t *col) {
    *line = node->line;
    *col = node->col;
    const char *text = node->text;
    if (offset > node->text_len)
        return false;
    const Source *src = &lesson->doc->source;
    size_t len;
    if (node->style == SCALAR_LITERAL) {
        // Line k of the text is line node->line + 1 + k of the file, after the block's indent.
        size_t k = 0, start = 0;
        for (size_t i = 0; i < offset; i++)
            if (text[i] == '\n')
                k++, start = i + 1;
        size_t text_len = strcspn(text + start, "\n");
        const char *at = source_line(src, node->line + 1 + k, &len);
        if (!at || len < text_len)
            return false;
        size_t indent = len - text_len;  // a block's lines keep no trailing spaces of their own
        for (size_t i = 0; i < indent; i++)
            if (at[i] != ' ')
                return false;
        if (memcmp(at + indent, text + start, text_len) != 0)
            return false;
        *line = node->line + 1 + k;
        *col = characters(at, indent) + 1 + characters(text + start, offset - start);
        return true;
    }
    // A plain or quoted scalar on one line whose text stands in the file as it is.
    size_t skip = node->style == SCALAR_SINGLE_QUOTED || node->style == SCALAR_DOUBLE_QUOTED ? 1 : 0;
    if (node->line != node->end_line || (node->style != SCALAR_PLAIN && !skip))
        return false;
    const char *at = source_line(src, node->line, &len);
    size_t byte = 0;
    for (size_t c = 1; at && c < node->col && byte < len; c++) {
        byte++;
        while (byte < len && ((unsigned char)at[byte] & 0xC0) == 0x80)
            byte++;
    }
    if (!at || byte + skip + node->text_len > len || memcmp(at + byte + skip, text, node->text_len) != 0)
        return false;
    *col = node->col + skip + characters(text, offset);
    return true;
}
