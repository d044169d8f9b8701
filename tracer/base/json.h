// json: a small JSON reader for the headers of weight files and for a model's config.json. It
// reads a whole text into a tree in an arena and reports the first problem with its byte offset.
//
//     char problem[128]; size_t at;
//     const JsonValue *root = json_parse(arena, text, len, problem, sizeof(problem), &at);
//     const JsonValue *n = root ? json_get(root, "n_embd") : NULL;   // NULL when absent
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

// Nested arrays and objects deeper than this are refused, so that a hostile header cannot
// exhaust the stack.
#define JSON_MAX_DEPTH 64
// A text of more values than this is refused, so that its tree takes bounded memory (about 100
// bytes a value): a 100 MiB .safetensors header of 1.8 million empty tensors holds 11 million.
// GPT-2's header holds about 1,200, a config.json a few dozen.
#define JSON_MAX_VALUES ((size_t)1 << 20)
// What json_parse's *at is when the text holds more than JSON_MAX_VALUES values.
#define JSON_AT_TOO_MANY (SIZE_MAX - 1)

typedef enum JsonKind {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} JsonKind;

typedef struct JsonValue {
    JsonKind kind;
    bool truth;       // JSON_BOOL
    double number;    // JSON_NUMBER
    bool whole;       // JSON_NUMBER written as digits alone (no sign, point or exponent) ...
    uint64_t count;   // ... and small enough for 64 bits: its exact value
    const char *text; // JSON_STRING: NUL-terminated UTF-8 (a \u0000 inside ends it early)
    size_t len;       // JSON_STRING: bytes of text
    size_t n;         // JSON_ARRAY, JSON_OBJECT: number of items
    struct JsonValue *items;  // JSON_ARRAY, JSON_OBJECT: the values
    const char **keys;        // JSON_OBJECT: the keys, in file order
    size_t offset;    // where the value starts in the text
} JsonValue;

// The value that `text` holds (only white space may follow it); NULL with a problem in the
// reader's words and its byte offset, or with "out of memory" (*at = SIZE_MAX), or when the text
// holds too many values (*at = JSON_AT_TOO_MANY).
const JsonValue *json_parse(Arena *arena, const char *text, size_t len, char *problem, size_t cap,
                            size_t *at);
// The value under `key` in an object, the last when the key is written more than once (as
// Python's json and JavaScript's JSON.parse read it); NULL when absent or not an object.
const JsonValue *json_get(const JsonValue *object, const char *key);
const char *json_kind_name(JsonKind kind);  // "a string", "an object", ...
int json_hex_digit(char c);  // the value of a hexadecimal digit, either case; -1 for none
