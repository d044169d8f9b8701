// lesson_values: numbers as a lesson writes them, and the tensors, documents and shapes written
// out with them.
#include "lesson_values.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const LESSON_NUMBER_HINT = "numbers look like 3, -0.5, 1e-5 or .inf";

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
    return lesson_find_name(s, words, n) < n;
}

// The value of a number node, with its printed decimals; a located error when it is not one.
bool lesson_parse_number(Loader *L, const Node *node, double *out, int *decimals) {
    static const char *const nan_words[] = {".nan", ".NaN", ".NAN", "nan", "NaN", "NAN"};
    static const char *const inf_words[] = {".inf", ".Inf", ".INF"};
    static const char *const bad_inf_words[] = {"inf", "Inf", "INF", "infinity", "Infinity"};
    static const char *const bool_words[] = {"true", "True", "TRUE", "false", "False", "FALSE",
                                             "yes",  "Yes",  "YES",  "no",    "No",    "NO",
                                             "on",   "On",   "ON",   "off",   "Off",   "OFF"};
    int places = 0;
    if (node->kind != NODE_SCALAR)
        return lesson_fail(L, node, LESSON_NUMBER_HINT, "expected a number here, but this is %s",
                           yamldoc_kind_name(node->kind));
    const char *text = node->text;
    if (node->style == SCALAR_LITERAL || node->style == SCALAR_FOLDED)
        return lesson_fail(L, node, LESSON_NUMBER_HINT, "expected a number here, but this is a block of text");
    if (lesson_is_quoted(node)) {
        if (scan_decimal(text, &places))
            return lesson_fail(L, node, "remove the quotes to make it a number",
                               "'%s' is in quotes, so it is text, not a number", text);
        return lesson_fail(L, node, LESSON_NUMBER_HINT, "'%s' is not a number", text);
    }
    const char *unsigned_text = (text[0] == '+' || text[0] == '-') ? text + 1 : text;
    if (text[0] == '\0')
        return lesson_fail(L, node, LESSON_NUMBER_HINT, "a number is missing here");
    if (is_one_of(unsigned_text, nan_words, ARRAY_LEN(nan_words)))
        return lesson_fail(L, node, "write the expression 0/0 in a step if the lesson should show nan",
                           "not a number is not allowed in a lesson; compute it (0/0) if you want to "
                           "show it");
    if (is_one_of(unsigned_text, inf_words, ARRAY_LEN(inf_words))) {
        *out = text[0] == '-' ? -INFINITY : INFINITY;
        if (decimals)
            *decimals = 0;
        return true;
    }
    if (is_one_of(unsigned_text, bad_inf_words, ARRAY_LEN(bad_inf_words)))
        return lesson_fail(L, node, "write .inf (YAML's infinity) or -.inf",
                           "'%s' is not a number in YAML", text);
    if (is_one_of(text, bool_words, ARRAY_LEN(bool_words)))
        return lesson_fail(L, node, "write 1 or 0", "'%s' is a yes/no value, not a number", text);
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
            return lesson_fail(L, node, hint, "'%s' is written in %s; a lesson's numbers are decimal",
                               text, kind);
        }
    }
    if (!scan_decimal(text, &places))
        return lesson_fail(L, node, LESSON_NUMBER_HINT, "'%s' is not a number", text);
    size_t leading_zeros = strspn(unsigned_text, "0");
    if (leading_zeros > 0 && unsigned_text[strspn(unsigned_text, "0123456789")] == '\0' &&
        unsigned_text[leading_zeros] != '\0')
        return lesson_fail(L, node, "write it without the leading zero",
                           "'%s' starts with 0, which YAML reads as octal", text);
    double value = strtod(text, NULL);
    if (isinf(value))
        return lesson_fail(L, node, "write .inf if you mean infinity",
                           "'%s' is too large for a double (the largest is about 1.8e308)", text);
    *out = value;
    if (decimals)
        *decimals = places;
    return true;
}

// A plain whole number without sign or leading zeros that fits in 64 bits.
bool lesson_whole_number(const Node *node, uint64_t *out) {
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
const char *lesson_describe(Loader *L, const Node *node) {
    if (node->kind != NODE_SCALAR)
        return yamldoc_kind_name(node->kind);
    const char *quoted = arena_printf(L->lesson->arena, "'%s'", node->text);
    return quoted ? quoted : "this";
}

const char *lesson_whole_hint(const Node *node, const char *otherwise) {
    return node->kind == NODE_SCALAR && lesson_is_quoted(node) ? "remove the quotes to make it a number"
                                                        : otherwise;
}

// "-2", "+1", "0": a whole number that may be negative.
bool lesson_signed_whole(const char *s, long *out) {
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

// Walk one row of a nested list, checking it has the shape the first row gave.
static bool fill_values(Loader *L, const Node *node, size_t depth, Values *v, size_t *k) {
    const Shape *s = &v->shape;
    if (depth == s->rank) {
        if (node->kind == NODE_SEQUENCE)
            return lesson_fail(L, node, "every row of a tensor must have the same length",
                               "ragged rows: expected a number here, like the first row, but this is "
                               "a list");
        if (!lesson_parse_number(L, node, &v->values[*k], v->decimals ? &v->decimals[*k] : NULL))
            return false;
        v->nodes[(*k)++] = node;
        return true;
    }
    const char *what = depth + 1 == s->rank ? "values" : "rows";
    if (node->kind == NODE_SCALAR)
        return lesson_fail(L, node, "every row of a tensor must have the same length",
                           "ragged rows: expected a row of %zu %s here, like the first row, but this "
                           "is a single value",
                           s->dim[depth], what);
    if (node->kind == NODE_MAPPING)
        return lesson_fail(L, node, LESSON_NUMBER_HINT, "expected a list of numbers here, but this is a mapping");
    if (node->n_items != s->dim[depth])
        return lesson_fail(L, node, "every row of a tensor must have the same length",
                           "ragged rows: this row has %zu %s, but the first row has %zu", node->n_items,
                           node->n_items == 1 ? (depth + 1 == s->rank ? "value" : "row") : what,
                           s->dim[depth]);
    for (size_t i = 0; i < node->n_items; i++)
        if (!fill_values(L, node->items[i], depth + 1, v, k))
            return false;
    return true;
}

// A number or a nested list of numbers (rank 0 to 4), row-major.
bool lesson_parse_values(Loader *L, const Node *node, bool with_decimals, Values *v) {
    memset(v, 0, sizeof(*v));
    // The first item at each level gives the shape; every other row must agree.
    for (const Node *n = node; n->kind == NODE_SEQUENCE; n = n->items[0]) {
        if (n->n_items == 0)
            return lesson_fail(L, n, "write at least one number in every list",
                               "an empty list has no values; every axis of a tensor needs at least one");
        if (v->shape.rank == TENSOR_MAX_RANK)
            return lesson_fail(L, n, "a given can be a number, a list, a list of lists... 4 levels at most",
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

bool lesson_parse_document(Loader *L, const Node *node, DocValues **out) {
    if (node->kind == NODE_MAPPING)
        return lesson_fail(L, node, "copy the numbers as the textbook printed them, like [0.2, 0.8]",
                           "document: must be a number or a list of numbers, but this is a mapping");
    Values v;
    if (!lesson_parse_values(L, node, true, &v))
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
bool lesson_parse_shape(Loader *L, const Node *node, Shape *shape) {
    memset(shape, 0, sizeof(*shape));
    if (node->kind != NODE_SEQUENCE)
        return lesson_fail(L, node, "write shape: [3] for 3 values, shape: [3, 4] for a 3 x 4 matrix",
                           "shape: must be a list of sizes, like [3, 4], but this is %s",
                           yamldoc_kind_name(node->kind));
    if (node->n_items > TENSOR_MAX_RANK)
        return lesson_fail(L, node, NULL, "a tensor has at most %d axes, but this shape has %zu",
                           TENSOR_MAX_RANK, node->n_items);
    for (size_t i = 0; i < node->n_items; i++) {
        const Node *item = node->items[i];
        uint64_t dim;
        if (!lesson_whole_number(item, &dim) || dim == 0 || dim > SIZE_MAX)
            return lesson_fail(L, item, lesson_whole_hint(item, NULL),
                               "each size in a shape is a whole number of at least 1, but this is %s",
                               lesson_describe(L, item));
        shape->dim[shape->rank++] = (size_t)dim;
    }
    return true;
}

bool lesson_parse_digits(Loader *L, const Node *node, int *digits) {
    uint64_t d;
    if (!lesson_whole_number(node, &d) || d > LESSON_MAX_DIGITS)
        return lesson_fail(L, node, lesson_whole_hint(node, NULL),
                           "digits: must be a whole number from 0 to %d, but this is %s", LESSON_MAX_DIGITS,
                           lesson_describe(L, node));
    *digits = (int)d;
    return true;
}
