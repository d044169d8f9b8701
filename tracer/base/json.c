// json: owns reading JSON text (RFC 8259), into a tree in an arena or a piece at a time.
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- a piece at a time

static bool fail(JsonCursor *c, JsonError error, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail(JsonCursor *c, JsonError error, size_t at, const char *fmt, ...) {
    if (c->error)
        return false;
    c->error = error;
    c->error_at = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problem, sizeof(c->problem), fmt, ap);
    va_end(ap);
    return false;
}

static bool no_memory(JsonCursor *c) {
    return fail(c, JSON_ERROR_MEMORY, SIZE_MAX, "out of memory");
}

static void skip_space(JsonCursor *c) {
    const char *t = c->text;
    size_t at = c->at;
    while (at < c->len && (t[at] == ' ' || t[at] == '\t' || t[at] == '\n' || t[at] == '\r'))
        at++;
    c->at = at;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The four hexadecimal digits at t[*at] into *out, moving *at past them; false with *at at the
// first that is not one (or where fewer than four are left).
static bool read_hex4(const JsonCursor *c, size_t *at, unsigned *out) {
    size_t i = *at;
    if (c->len - i < 4)
        return false;
    unsigned v = 0;
    for (size_t end = i + 4; i < end; i++) {
        int d = hex_digit(c->text[i]);
        if (d < 0)
            break;
        v = v * 16 + (unsigned)d;
    }
    bool whole = i == *at + 4;
    *at = i;
    *out = v;
    return whole;
}

static size_t put_utf8(char *out, unsigned c) {
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

// The closing quote of the string that opens at t[open]: the first '"' after it that no
// backslash escapes, that is with an even number of backslashes right before it; c->len when
// there is none.
static size_t closing_quote(const JsonCursor *c, size_t open) {
    const char *t = c->text;
    for (size_t from = open + 1; from < c->len;) {
        const char *quote = memchr(t + from, '"', c->len - from);
        if (!quote)
            break;
        size_t at = (size_t)(quote - t), run = at;
        while (run > open + 1 && t[run - 1] == '\\')
            run--;
        if ((at - run) % 2 == 0)
            return at;
        from = at + 1;
    }
    return c->len;
}

// The character of the \u escape at t[*at] (its backslash), a surrogate pair joined into one,
// moving *at past it; else the problem, and where it is in *at.
static JsonError read_escaped_char(const JsonCursor *c, size_t *at, unsigned *code) {
    const char *t = c->text;
    size_t escape = *at;
    *at += 2;
    if (!read_hex4(c, at, code))
        return JSON_ERROR_HEX;
    if (*code >= 0xD800 && *code < 0xDC00) {
        unsigned low;
        if (c->len - *at < 2 || t[*at] != '\\' || t[*at + 1] != 'u') {
            *at = escape;
            return JSON_ERROR_HIGH_SURROGATE;
        }
        *at += 2;
        if (!read_hex4(c, at, &low))
            return JSON_ERROR_HEX;
        if (low < 0xDC00 || low >= 0xE000) {
            *at = escape;
            return JSON_ERROR_HIGH_SURROGATE;
        }
        *code = 0x10000 + ((*code - 0xD800) << 10) + (low - 0xDC00);
    } else if (*code >= 0xDC00 && *code < 0xE000) {
        *at = escape;
        return JSON_ERROR_LOW_SURROGATE;
    }
    return JSON_OK;
}

// A problem at `at` inside the string that opens at t[open]; told as the string's missing
// closing quote when it has none, which comes first.
static bool string_problem(JsonCursor *c, size_t open, JsonError error, size_t at) {
    if (closing_quote(c, open) == c->len)
        return fail(c, JSON_ERROR_UNCLOSED, open, "a string has no closing quote");
    switch (error) {
    case JSON_ERROR_CONTROL:
        return fail(c, error, at, "a string holds a control character; write it as an escape");
    case JSON_ERROR_ESCAPE: {
        char e = c->text[at + 1];  // the string closes after it
        return fail(c, error, at, "unknown escape \\%c in a string",
                    e >= 0x20 && e < 0x7F ? e : '?');
    }
    case JSON_ERROR_HEX:
        return fail(c, error, at, "a \\u escape needs 4 hexadecimal digits");
    case JSON_ERROR_HIGH_SURROGATE:
        return fail(c, error, at, "a \\u escape of a high surrogate needs its low surrogate");
    default:
        return fail(c, error, at, "a \\u escape of a low surrogate without its high one");
    }
}

// Whether a string opens at c->at; JSON_ERROR_KEY when not, as an object's key is the one place
// where JSON asks for a string.
static bool at_string(JsonCursor *c) {
    if (c->at < c->len && c->text[c->at] == '"')
        return true;
    return fail(c, JSON_ERROR_KEY, c->at, "an object's key must be a string in double quotes");
}

// The string at c->at (its opening quote) into out, escapes undone, up to its closing quote:
// out has room for the string as written, as escapes never grow it (\uXXXX is 6 bytes for at
// most 4, a surrogate pair 12 for 4).
static bool read_string_to(JsonCursor *c, char *out, size_t *n) {
    const char *t = c->text;
    size_t open = c->at, len = 0, at = open + 1;  // not in *c, which a byte written may alias
    for (;;) {
        while (at < c->len && (unsigned char)t[at] >= 0x20 && t[at] != '\\' && t[at] != '"')
            out[len++] = t[at++];
        if (at < c->len && t[at] == '"')
            break;
        if (at == c->len || (t[at] == '\\' && at + 1 == c->len))  // the text ends in it
            return string_problem(c, open, JSON_ERROR_UNCLOSED, at);
        if ((unsigned char)t[at] < 0x20)
            return string_problem(c, open, JSON_ERROR_CONTROL, at);
        char e = t[at + 1];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *p = e && e != 'u' ? strchr(from, e) : NULL;  // \u is most of GPT-2's
        if (p) {
            out[len++] = to[p - from];
            at += 2;
            continue;
        }
        if (e != 'u')
            return string_problem(c, open, JSON_ERROR_ESCAPE, at);
        unsigned code;
        JsonError error = read_escaped_char(c, &at, &code);
        if (error)
            return string_problem(c, open, error, at);
        len += put_utf8(out + len, code);
    }
    out[len] = '\0';
    c->at = at + 1;
    *n = len;
    return true;
}

bool json_read_string(JsonCursor *c, char *out, size_t *n) {
    return !c->error && at_string(c) && read_string_to(c, out, n);
}

bool json_open(JsonCursor *c, char open) {
    if (c->error)
        return false;
    skip_space(c);
    if (c->at >= c->len || c->text[c->at] != open)
        return fail(c, JSON_ERROR_OPEN, c->at, "expected '%c'", open);
    c->at++;
    skip_space(c);
    return true;
}

bool json_next_item(JsonCursor *c, char close, size_t done) {
    if (c->error)
        return false;
    skip_space(c);
    if (c->at < c->len && c->text[c->at] == close) {
        c->at++;
        return false;
    }
    if (done > 0) {
        if (c->at >= c->len || c->text[c->at] != ',')
            return fail(c, JSON_ERROR_SEPARATOR, c->at, "expected ',' or '%c'", close);
        c->at++;
        skip_space(c);
    }
    return true;
}

bool json_colon(JsonCursor *c) {
    if (c->error)
        return false;
    skip_space(c);
    if (c->at >= c->len || c->text[c->at] != ':')
        return fail(c, JSON_ERROR_COLON, c->at, "a ':' must follow an object's key");
    c->at++;
    skip_space(c);
    return true;
}

bool json_end(JsonCursor *c) {
    if (c->error)
        return false;
    skip_space(c);
    if (c->at != c->len)
        return fail(c, JSON_ERROR_TRAILING, c->at, "text follows the value");
    return true;
}

static bool is_digit(const JsonCursor *c, size_t i) {
    return i < c->len && c->text[i] >= '0' && c->text[i] <= '9';
}

// The digits t[from, to), more than 19 of them, as a count; false when it needs more than 64
// bits.
static bool count_many_digits(const char *t, size_t from, size_t to, uint64_t *count) {
    uint64_t n = 0;
    for (size_t i = from; i < to; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (n > (UINT64_MAX - d) / 10)
            return false;
        n = n * 10 + d;
    }
    *count = n;
    return true;
}

bool json_read_number(JsonCursor *c, JsonValue *v) {
    if (c->error)
        return false;
    const char *t = c->text;
    size_t start = c->at, i = start, len = c->len;
    bool minus = i < len && t[i] == '-';
    size_t first = i += minus;  // the first digit
    uint64_t count = 0;  // exact up to 19 digits (below 10^19), which most numbers have
    for (; i < len && t[i] >= '0' && t[i] <= '9'; i++)
        count = count * 10 + (unsigned)(t[i] - '0');
    if (i == first)
        return fail(c, JSON_ERROR_NUMBER, start, "a number needs a digit here");
    if (t[first] == '0' && i - first > 1)
        return fail(c, JSON_ERROR_NUMBER, start, "a number does not start with 0 in JSON");
    bool fits = i - first <= 19 || count_many_digits(t, first, i, &count);
    bool whole = !minus && fits;  // digits alone, and few enough for 64 bits
    if (i < len && t[i] == '.') {
        whole = false;
        if (!is_digit(c, ++i))
            return fail(c, JSON_ERROR_NUMBER, i, "a number needs a digit after its point");
        while (is_digit(c, i))
            i++;
    }
    if (i < len && (t[i] == 'e' || t[i] == 'E')) {
        whole = false;
        i++;
        if (i < len && (t[i] == '+' || t[i] == '-'))
            i++;
        if (!is_digit(c, i))
            return fail(c, JSON_ERROR_NUMBER, i, "a number needs a digit in its exponent");
        while (is_digit(c, i))
            i++;
    }
    v->kind = JSON_NUMBER;
    v->whole = whole;
    v->count = whole ? count : 0;
    v->offset = start;
    if (whole && count <= (uint64_t)1 << 53) {
        v->number = (double)count;  // exact, as strtod would read it
    } else {
        char copy[64], *text = i - start < sizeof(copy) ? copy : util_malloc(i - start + 1);
        if (!text)
            return no_memory(c);
        memcpy(text, t + start, i - start);  // strtod needs a NUL
        text[i - start] = '\0';
        v->number = strtod(text, NULL);
        if (text != copy)
            util_free(text);
    }
    c->at = i;
    return true;
}

// ---------------------------------------------------------------- the tree

typedef struct Reader {
    JsonCursor c;
    Arena *arena;
    size_t values;  // read so far
} Reader;

// A string at r->c.at (its opening quote), in the arena: as many bytes as it takes up to its
// closing quote.
static bool read_string(Reader *r, JsonValue *v) {
    JsonCursor *c = &r->c;
    if (!at_string(c))
        return false;
    size_t end = closing_quote(c, c->at);
    if (end == c->len)
        return string_problem(c, c->at, JSON_ERROR_UNCLOSED, end);
    char *out = arena_alloc(r->arena, end - c->at + 1);
    if (!out)
        return no_memory(c);
    v->kind = JSON_STRING;
    v->text = out;
    return read_string_to(c, out, &v->len);
}

static bool read_word(Reader *r, const char *word) {
    JsonCursor *c = &r->c;
    size_t n = strlen(word);
    if (c->len - c->at < n || memcmp(c->text + c->at, word, n) != 0)
        return false;
    c->at += n;
    return true;
}

static bool read_value(Reader *r, JsonValue *v, int depth);

// An array or an object: items gathered in a growing buffer, then copied to the arena.
static bool read_items(Reader *r, JsonValue *v, int depth, bool object) {
    JsonCursor *c = &r->c;
    char close = object ? '}' : ']';
    c->at++;
    size_t cap = 0;
    JsonValue *items = NULL;
    const char **keys = NULL;
    v->n = 0;
    for (; json_next_item(c, close, v->n); v->n++) {
        if (v->n == cap) {
            size_t more = cap ? cap * 2 : 8;
            JsonValue *grown = util_calloc(more, sizeof(JsonValue));
            const char **grown_keys = object ? util_calloc(more, sizeof(char *)) : NULL;
            if (!grown || (object && !grown_keys)) {
                util_free(grown);
                util_free(grown_keys);
                no_memory(c);
                break;
            }
            if (v->n) {
                memcpy(grown, items, v->n * sizeof(JsonValue));
                if (object)
                    memcpy(grown_keys, keys, v->n * sizeof(char *));
            }
            util_free(items);
            util_free(keys);
            items = grown, keys = grown_keys, cap = more;
        }
        if (object) {
            JsonValue key = {0};
            if (!read_string(r, &key) || !json_colon(c))
                break;
            keys[v->n] = key.text;
        }
        if (!read_value(r, &items[v->n], depth + 1))
            break;
    }
    bool ok = !c->error;
    if (ok && v->n) {
        v->items = arena_array(r->arena, v->n, sizeof(JsonValue));
        v->keys = object ? arena_array(r->arena, v->n, sizeof(char *)) : NULL;
        if (!v->items || (object && !v->keys))
            ok = no_memory(c);
        else {
            memcpy(v->items, items, v->n * sizeof(JsonValue));
            if (object)
                memcpy(v->keys, keys, v->n * sizeof(char *));
        }
    }
    util_free(items);
    util_free(keys);
    v->kind = object ? JSON_OBJECT : JSON_ARRAY;
    return ok;
}

static bool read_value(Reader *r, JsonValue *v, int depth) {
    JsonCursor *c = &r->c;
    skip_space(c);
    *v = (JsonValue){.offset = c->at};
    if (c->at >= c->len)
        return fail(c, JSON_ERROR_VALUE, c->at, "the text ends where a value should be");
    if (++r->values > JSON_MAX_VALUES)  // callers say it in their words
        return fail(c, JSON_ERROR_TOO_MANY, JSON_AT_TOO_MANY, "it holds more than %zu values",
                    JSON_MAX_VALUES);
    if (depth > JSON_MAX_DEPTH)
        return fail(c, JSON_ERROR_DEPTH, c->at, "arrays and objects nest more than %d deep",
                    JSON_MAX_DEPTH);
    char first = c->text[c->at];
    if (first == '{' || first == '[')
        return read_items(r, v, depth, first == '{');
    if (first == '"')
        return read_string(r, v);
    if (first == '-' || (first >= '0' && first <= '9'))
        return json_read_number(c, v);
    if (read_word(r, "true") || read_word(r, "false")) {
        v->kind = JSON_BOOL;
        v->truth = first == 't';
        return true;
    }
    if (read_word(r, "null")) {
        v->kind = JSON_NULL;
        return true;
    }
    return fail(c, JSON_ERROR_VALUE, c->at,
                "expected a value (a number, a string, [...], {...}, true, false or null)");
}

const JsonValue *json_parse(Arena *arena, const char *text, size_t len, char *problem, size_t cap,
                            size_t *at) {
    Reader r = {.c = {.text = text, .len = len}, .arena = arena};
    JsonValue *v = arena_alloc(arena, sizeof(JsonValue));
    if (!v)
        no_memory(&r.c);
    else if (read_value(&r, v, 0) && json_end(&r.c))
        return v;
    snprintf(problem, cap, "%s", r.c.problem);
    *at = r.c.error_at;
    return NULL;
}

const JsonValue *json_get(const JsonValue *object, const char *key) {
    if (!object || object->kind != JSON_OBJECT)
        return NULL;
    for (size_t i = object->n; i-- > 0;)
        if (strcmp(object->keys[i], key) == 0)
            return &object->items[i];
    return NULL;
}

const char *json_kind_name(JsonKind kind) {
    static const char *const names[] = {"null", "true or false", "a number", "a string", "a list",
                                        "an object"};
    _Static_assert(ARRAY_LEN(names) == JSON_OBJECT + 1, "one name per kind");
    return names[kind];
}
