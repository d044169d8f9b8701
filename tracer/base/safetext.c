// safetext: owns which characters may reach a terminal as they are, and their escapes.
#include "safetext.h"

#include <stdio.h>
#include <string.h>

// The length of the whole, shortest UTF-8 character at s[0, len) of a code point that is not
// a surrogate, and the code point; 0 when there is none.
static size_t utf8_char(const unsigned char *s, size_t len, uint32_t *code) {
    if (s[0] < 0x80) {
        *code = s[0];
        return 1;
    }
    size_t n = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || len < n)
        return 0;
    uint32_t c = s[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3Fu);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[n] || c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
        return 0;
    *code = c;
    return n;
}

size_t safetext_next(const char *s, size_t len, uint32_t *code, SafetextKind *kind) {
    const unsigned char *u = (const unsigned char *)s;
    size_t n = utf8_char(u, len, code);
    if (n == 0) {
        *code = u[0];
        *kind = SAFETEXT_INVALID;
        return 1;
    }
    uint32_t c = *code;
    if ((c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7F && c < 0xA0))
        *kind = SAFETEXT_CONTROL;
    else if ((c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069))
        *kind = SAFETEXT_BIDI;
    else
        *kind = SAFETEXT_PLAIN;
    return n;
}

size_t safetext_find(const char *s, size_t len, uint32_t *code, SafetextKind *kind) {
    for (size_t i = 0; i < len;) {
        size_t n = safetext_next(s + i, len - i, code, kind);
        if (*kind != SAFETEXT_PLAIN)
            return i;
        i += n;
    }
    return len;
}

// Where escaped text goes: a growing string, or a buffer of fixed size that stops at its first
// character that does not fit.
typedef struct Sink {
    StrBuf *sb;
    char *buf;
    size_t cap, len;
    bool full;
} Sink;

static void put(Sink *k, const char *s, size_t n) {
    if (k->sb) {
        strbuf_append(k->sb, s, n);
        return;
    }
    if (k->full || k->len + n + 4 > k->cap) {  // room for "..." and the NUL
        k->full = true;
        return;
    }
    memcpy(k->buf + k->len, s, n);
    k->len += n;
}

static void escape(Sink *k, const char *s, size_t len, bool escape_backslash) {
    for (size_t i = 0; i < len && !k->full;) {
        uint32_t code;
        SafetextKind kind;
        size_t n = safetext_next(s + i, len - i, &code, &kind);
        char esc[16];
        if (code == '\n' || code == '\t' || code == '\r') {
            put(k, code == '\n' ? "\\n" : code == '\t' ? "\\t" : "\\r", 2);
        } else if (kind == SAFETEXT_BIDI) {
            snprintf(esc, sizeof(esc), "\\u%04X", (unsigned)code);
            put(k, esc, strlen(esc));
        } else if (kind != SAFETEXT_PLAIN || (code == '\\' && escape_backslash)) {
            // every byte of it: a C1 control is two bytes of UTF-8, \xC2\x85, as it is stored
            size_t at = 0;
            for (size_t b = 0; b < n; b++)
                at += (size_t)snprintf(esc + at, sizeof(esc) - at, "\\x%02X", (unsigned char)s[i + b]);
            put(k, esc, at);
        } else {
            put(k, s + i, n);
        }
        i += n;
    }
}

bool safetext_unchanged(const char *s, size_t len, bool escape_backslash) {
    uint32_t code;
    SafetextKind kind;
    return safetext_find(s, len, &code, &kind) == len && !memchr(s, '\n', len) && !memchr(s, '\t', len) &&
           !(escape_backslash && memchr(s, '\\', len));
}

void safetext_escape(StrBuf *out, const char *s, size_t len, bool escape_backslash) {
    Sink k = {.sb = out};
    escape(&k, s, len, escape_backslash);
}

const char *safetext_show(char *buf, size_t cap, const char *s) {
    ASSERT(cap >= 4);
    Sink k = {.buf = buf, .cap = cap};
    escape(&k, s, strlen(s), false);
    if (k.full) {
        memcpy(buf + k.len, "...", 3);
        k.len += 3;
    }
    buf[k.len] = '\0';
    return buf;
}

const char *safetext_invisible_name(uint32_t code) {
    static const struct {
        uint32_t code;
        const char *name;
    } names[] = {
        {0x00AD, "SOFT HYPHEN"},
        {0x034F, "COMBINING GRAPHEME JOINER"},
        {0x061C, "ARABIC LETTER MARK"},
        {0x180E, "MONGOLIAN VOWEL SEPARATOR"},
        {0x200B, "ZERO WIDTH SPACE"},
        {0x200C, "ZERO WIDTH NON-JOINER"},
        {0x200D, "ZERO WIDTH JOINER"},
        {0x200E, "LEFT-TO-RIGHT MARK"},
        {0x200F, "RIGHT-TO-LEFT MARK"},
        {0x2060, "WORD JOINER"},
        {0x2061, "FUNCTION APPLICATION"},
        {0x2062, "INVISIBLE TIMES"},
        {0x2063, "INVISIBLE SEPARATOR"},
        {0x2064, "INVISIBLE PLUS"},
        {0xFEFF, "ZERO WIDTH NO-BREAK SPACE"},
    };
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (names[i].code == code)
            return names[i].name;
    return NULL;
}

size_t safetext_find_invisible(const char *s, size_t len, uint32_t *code) {
    for (size_t i = 0; i < len;) {
        SafetextKind kind;
        size_t n = safetext_next(s + i, len - i, code, &kind);
        if (safetext_invisible_name(*code))
            return i;
        i += n;
    }
    return len;
}
