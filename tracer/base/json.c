// json: owns reading JSON text (RFC 8259) into a tree of JsonValue in an arena.
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Reader {
    Arena *arena;
    const char *text;
    size_t len, at;
    char *problem;
    size_t cap;
    size_t *problem_at;
    bool failed;
    size_t values;  // read so far
} Reader;

static bool fail(Reader *r, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Reader *r, size_t at, const char *fmt, ...) {
    if (r->failed)
        return false;
    r->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->problem, r->cap, fmt, ap);
    va_end(ap);
    *r->problem_at = at;
    return false;
}

static bool no_memory(Reader *r) {
    return fail(r, SIZE_MAX, "out of memory");
}

static void skip_space(Reader *r) {
    while (r->at < r->len && (r->text[r->at] == ' ' || r->text[r->at] == '\t' ||
                              r->text[r->at] == '\n' || r->text[r->at] == '\r'))
        r->at++;
}

int json_hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_hex4(Reader *r, unsigned *out) {
    if (r->len - r->at < 4)
        return fail(r, r->at, "a \\u escape needs 4 hexadecimal digits");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int d = json_hex_digit(r->text[r->at + i]);
        if (d < 0)
            return fail(r, r->at + i, "a \\u escape needs 4 hexadecimal digits");
        v = v * 16 + (unsigned)d;
    }
    r->at += 4;
    *out = v;
    return true;
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

// A string at r->at (its opening quote). Escapes never grow the text (\uXXXX is 6 bytes for at
// most 4, a surrogate pair 12 for 4), so the raw length bounds the decoded one.
static bool read_string(Reader *r, JsonValue *v) {
    size_t start = r->at++;
    size_t end = r->at;
    while (end < r->len && r->text[end] != '"')
        end += r->text[end] == '\\' ? 2 : 1;
    if (end >= r->len)
        return fail(r, start, "a string has no closing quote");
    char *out = arena_alloc(r->arena, end - r->at + 1);
    if (!out)
        return no_memory(r);
    size_t n = 0;
    while (r->at < end) {
        unsigned char c = (unsigned char)r->text[r->at];
        if (c < 0x20)
            return fail(r, r->at, "a string holds a control character; write it as an escape");
        if (c != '\\') {
            out[n++] = (char)c;
            r->at++;
            continue;
        }
        char e = r->text[r->at + 1];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *p = e ? strchr(from, e) : NULL;
        if (p) {
            out[n++] = to[p - from];
            r->at += 2;
            continue;
        }
        if (e != 'u')
            return fail(r, r->at, "unknown escape \\%c in a string", e >= 0x20 && e < 0x7F ? e : '?');
        r->at += 2;
        unsigned code;
        if (!read_hex4(r, &code))
            return false;
        if (code >= 0xD800 && code < 0xDC00) {
            unsigned low;
            if (r->len - r->at < 2 || r->text[r->at] != '\\' || r->text[r->at + 1] != 'u')
                return fail(r, r->at, "a \\u escape of a high surrogate needs its low surrogate");
            r->at += 2;
            if (!read_hex4(r, &low))
                return false;
            if (low < 0xDC00 || low >= 0xE000)
                return fail(r, r->at - 6, "a \\u escape of a high surrogate needs its low surrogate");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code < 0xE000) {
            return fail(r, r->at - 6, "a \\u escape of a low surrogate without its high one");
        }
        n += put_utf8(out + n, code);
    }
    out[n] = '\0';
    r->at = end + 1;
    v->kind = JSON_STRING;
    v->text = out;
    v->len = n;
    return true;
}

static bool read_number(Reader *r, JsonValue *v) {
    size_t start = r->at, i = r->at;
    const char *t = r->text;
    bool whole = true;
    if (i < r->len && t[i] == '-')
        i++, whole = false;
    if (i >= r->len || t[i] < '0' || t[i] > '9')
        return fail(r, start, "a number needs a digit here");
    if (t[i] == '0' && i + 1 < r->len && t[i + 1] >= '0' && t[i + 1] <= '9')
        return fail(r, start, "a number does not start with 0 in JSON");
    while (i < r->len && t[i] >= '0' && t[i] <= '9')
        i++;
    if (i < r->len && t[i] == '.') {
        whole = false;
        if (++i >= r->len || t[i] < '0' || t[i] > '9')
            return fail(r, i, "a number needs a digit after its point");
        while (i < r->len && t[i] >= '0' && t[i] <= '9')
            i++;
    }
    if (i < r->len && (t[i] == 'e' || t[i] == 'E')) {
        whole = false;
        i++;
        if (i < r->len && (t[i] == '+' || t[i] == '-'))
            i++;
        if (i >= r->len || t[i] < '0' || t[i] > '9')
            return fail(r, i, "a number needs a digit in its exponent");
        while (i < r->len && t[i] >= '0' && t[i] <= '9')
            i++;
    }
    char *copy = arena_strndup(r->arena, t + start, i - start);  // strtod needs a NUL
    if (!copy)
        return no_memory(r);
    v->kind = JSON_NUMBER;
    v->number = strtod(copy, NULL);
    v->count = 0;
    v->whole = whole;
    for (size_t k = start; whole && k < i; k++) {
        unsigned d = (unsigned)(t[k] - '0');
        if (v->count > (UINT64_MAX - d) / 10)
            v->whole = false;  // too large to count exactly
        else
            v->count = v->count * 10 + d;
    }
    r->at = i;
    return true;
}

static bool read_word(Reader *r, const char *word) {
    size_t n = strlen(word);
    if (r->len - r->at < n || memcmp(r->text + r->at, word, n) != 0)
        return false;
    r->at += n;
    return true;
}

static bool read_value(Reader *r, JsonValue *v, int depth);

// An array or an object: items gathered in a growing buffer, then copied to the arena.
static bool read_items(Reader *r, JsonValue *v, int depth, bool object) {
    char close = object ? '}' : ']';
    r->at++;
    size_t cap = 0;
    JsonValue *items = NULL;
    const char **keys = NULL;
    bool ok = false;
    v->n = 0;
    skip_space(r);
    if (r->at < r->len && r->text[r->at] == close) {
        r->at++;
        ok = true;
        goto done;
    }
    for (;;) {
        if (v->n == cap) {
            size_t more = cap ? cap * 2 : 8;
            JsonValue *grown = util_calloc(more, sizeof(JsonValue));
            const char **grown_keys = object ? util_calloc(more, sizeof(char *)) : NULL;
            if (!grown || (object && !grown_keys)) {
                util_free(grown);
                util_free(grown_keys);
                no_memory(r);
                goto done;
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
        skip_space(r);
        if (object) {
            JsonValue key = {0};
            if (r->at >= r->len || r->text[r->at] != '"') {
                fail(r, r->at, "an object's key must be a string in double quotes");
                goto done;
            }
            if (!read_string(r, &key))
                goto done;
            keys[v->n] = key.text;
            skip_space(r);
            if (r->at >= r->len || r->text[r->at] != ':') {
                fail(r, r->at, "a ':' must follow an object's key");
                goto done;
            }
            r->at++;
        }
        if (!read_value(r, &items[v->n], depth + 1))
            goto done;
        v->n++;
        skip_space(r);
        if (r->at < r->len && r->text[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->at < r->len && r->text[r->at] == close) {
            r->at++;
            ok = true;
            break;
        }
        fail(r, r->at, "expected ',' or '%c'", close);
        goto done;
    }
done:
    if (ok && v->n) {
        v->items = arena_array(r->arena, v->n, sizeof(JsonValue));
        v->keys = object ? arena_array(r->arena, v->n, sizeof(char *)) : NULL;
        if (!v->items || (object && !v->keys))
            ok = no_memory(r);
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
    skip_space(r);
    *v = (JsonValue){.offset = r->at};
    if (r->at >= r->len)
        return fail(r, r->at, "the text ends where a value should be");
    if (++r->values > JSON_MAX_VALUES)
        return fail(r, JSON_AT_TOO_MANY, "it holds more than %zu values", JSON_MAX_VALUES);  // callers say it
    if (depth > JSON_MAX_DEPTH)
        return fail(r, r->at, "arrays and objects nest more than %d deep", JSON_MAX_DEPTH);
    char c = r->text[r->at];
    if (c == '{' || c == '[')
        return read_items(r, v, depth, c == '{');
    if (c == '"')
        return read_string(r, v);
    if (c == '-' || (c >= '0' && c <= '9'))
        return read_number(r, v);
    if (read_word(r, "true") || read_word(r, "false")) {
        v->kind = JSON_BOOL;
        v->truth = c == 't';
        return true;
    }
    if (read_word(r, "null")) {
        v->kind = JSON_NULL;
        return true;
    }
    return fail(r, r->at, "expected a value (a number, a string, [...], {...}, true, false or null)");
}

const JsonValue *json_parse(Arena *arena, const char *text, size_t len, char *problem, size_t cap,
                            size_t *at) {
    Reader r = {.arena = arena, .text = text, .len = len, .problem = problem, .cap = cap, .problem_at = at};
    JsonValue *v = arena_alloc(arena, sizeof(JsonValue));
    if (!v) {
        no_memory(&r);
        return NULL;
    }
    if (!read_value(&r, v, 0))
        return NULL;
    skip_space(&r);
    if (r.at != len) {
        fail(&r, r.at, "text follows the value");
        return NULL;
    }
    return v;
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
