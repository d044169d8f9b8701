// lesson_values: numbers as a lesson writes them (decimal, .inf, with the places printed after
// the point), and the tensors, documents and shapes written out with them, each refused with an
// error at the node that is not one.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lesson_loader.h"

// What a number looks like, for the hints of errors where one was expected.
extern const char *const LESSON_NUMBER_HINT;

// The value of a number node, with its printed decimals (decimals may be NULL); a located error
// when it is not one.
bool lesson_parse_number(Loader *L, const Node *node, double *out, int *decimals);
// A plain whole number without sign or leading zeros that fits in 64 bits (no error).
bool lesson_whole_number(const Node *node, uint64_t *out);
// What to say about a node that should have been a whole number: "'abc'" or "a list".
const char *lesson_describe(Loader *L, const Node *node);
// The hint for a node that should have been a whole number: remove the quotes, or otherwise.
const char *lesson_whole_hint(const Node *node, const char *otherwise);
// "-2", "+1", "0": a whole number that may be negative (no error).
bool lesson_signed_whole(const char *s, long *out);

typedef struct Values {
    Shape shape;
    size_t size;
    double *values;
    const Node **nodes;
    int *decimals;  // only when asked for
} Values;

// A number or a nested list of numbers (rank 0 to 4), row-major; with_decimals keeps each
// number's printed decimals.
bool lesson_parse_values(Loader *L, const Node *node, bool with_decimals, Values *v);
// document: the numbers a textbook printed, to compare with a stage.
bool lesson_parse_document(Loader *L, const Node *node, DocValues **out);
// shape: [3, 4]
bool lesson_parse_shape(Loader *L, const Node *node, Shape *shape);

// digits: N, the lesson's or a step's: a whole number from 0 to LESSON_MAX_DIGITS.
bool lesson_parse_digits(Loader *L, const Node *node, int *digits);
