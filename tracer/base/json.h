// json: the tracer's JSON reader, for the headers of weight files, a model's config.json and a
// tokenizer's vocabulary. It reads a whole text into a tree in an arena and reports the first
// problem with its byte offset:
//
//     char problem[128]; size_t at;
//     const JsonValue *root = json_parse(arena, text, len, problem, sizeof(problem), &at);
//     const JsonValue *n = root ? json_get(root, "n_embd") : NULL;   // NULL when absent
//
// or, for a text too large for a tree (GPT-2's vocabulary is one object of 50,257 members), a
// piece at a time with a JsonCursor, each problem with a JsonError its caller words (see below).
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

// ---------------------------------------------------------------- a piece at a time
//
// The pieces json_parse reads a text with, for a caller that builds no tree and words its own
// errors. Each read moves c->at past what it read, and spaces after a bracket, a comma or a
// colon; the first problem stops every later read, and leaves its kind in c->error, where it
// starts in c->error_at and the reader's words in c->problem:
//
//     JsonCursor c = {.text = text, .len = len};
//     if (json_open(&c, '{'))
//         for (size_t n = 0; json_next_item(&c, '}', n); n++)
//             if (!json_read_string(&c, key, &key_len) || !json_colon(&c) ||
//                 !json_read_number(&c, &value))
//                 break;
//     if (c.error || !json_end(&c)) ...   // c.error, c.error_at, c.problem

typedef enum JsonError {
    JSON_OK,
    JSON_ERROR_MEMORY,          // out of memory (error_at SIZE_MAX)
    JSON_ERROR_TOO_MANY,        // more than JSON_MAX_VALUES values (error_at JSON_AT_TOO_MANY)
    JSON_ERROR_DEPTH,           // nested deeper than JSON_MAX_DEPTH
    JSON_ERROR_VALUE,           // no value where one should be
    JSON_ERROR_OPEN,            // not the bracket json_open expects
    JSON_ERROR_SEPARATOR,       // neither ',' nor the closing bracket after an item
    JSON_ERROR_KEY,             // no string where an object's key should be
    JSON_ERROR_COLON,           // no ':' after an object's key
    JSON_ERROR_TRAILING,        // more than spaces after the value
    JSON_ERROR_UNCLOSED,        // a string without its closing quote (at its opening one)
    JSON_ERROR_CONTROL,         // a control character inside a string
    JSON_ERROR_ESCAPE,          // a backslash before no escape of JSON (at the backslash)
    JSON_ERROR_HEX,             // a \u not followed by four hexadecimal digits (at the first
                                // that is not one, or where the text ends too soon)
    JSON_ERROR_HIGH_SURROGATE,  // a \u escape of a high surrogate without its low one, or
    JSON_ERROR_LOW_SURROGATE,   // of a low one without its high one (at the escape's backslash)
    JSON_ERROR_NUMBER,          // a number JSON does not allow ("-", "012", "1.", "1e")
} JsonError;

typedef struct JsonCursor {
    const char *text;
    size_t len;
    size_t at;          // where the next read starts
    JsonError error;    // JSON_OK until a read fails
    size_t error_at;    // where the problem is in the text
    char problem[128];  // the problem in the reader's words
} JsonCursor;

// Spaces, then the bracket `open` ('{' or '['), and the spaces after it.
bool json_open(JsonCursor *c, char open);
// Whether another item of the array or object follows, done items after its opening bracket:
// true past its comma (when done > 0) and the spaces after it; false at the closing bracket
// (read) or at a problem.
bool json_next_item(JsonCursor *c, char close, size_t done);
// The string at c->at, its escapes undone, into out as UTF-8 with a NUL after it (escapes never
// grow a string: out needs room for its length in the text, c->len - c->at bytes at most).
bool json_read_string(JsonCursor *c, char *out, size_t *n);
// Spaces, the ':' after an object's key, and the spaces after it.
bool json_colon(JsonCursor *c);
// The number at c->at into v's kind, number, whole, count and offset (its other fields as they
// were).
bool json_read_number(JsonCursor *c, JsonValue *v);
// Whether only spaces are left; JSON_ERROR_TRAILING where something else starts.
bool json_end(JsonCursor *c);
