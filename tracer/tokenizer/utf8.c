// utf8: reads and checks UTF-8, for the tokenizer's files and texts.
#include "utf8.h"

#include <string.h>

uint32_t utf8_next(const char *text, size_t *i) {
    const unsigned char *s = (const unsigned char *)text + *i;
    if (s[0] < 0x80) {
        *i += 1;
        return s[0];
    }
    if (s[0] < 0xE0) {
        *i += 2;
        return (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
    }
    if (s[0] < 0xF0) {
        *i += 3;
        return (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    }
    *i += 4;
    return (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
           (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

size_t utf8_len(const unsigned char *s, size_t len) {
    unsigned c = s[0];
    size_t n;
    uint32_t min;
    if (c < 0x80)
        return 1;
    else if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    if (len < n)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    size_t i = 0;
    uint32_t cp = utf8_next((const char *)s, &i);
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

size_t utf8_end(const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        // Eight bytes at a time while they are all ASCII, which most of a text and of the
        // merges file is.
        uint64_t eight;
        if (len - i >= sizeof(eight)) {
            memcpy(&eight, s + i, sizeof(eight));
            if (!(eight & 0x8080808080808080u)) {
                i += sizeof(eight);
                continue;
            }
        }
        if (s[i] < 0x80) {
            i++;
        } else if (s[i] >= 0xC2 && s[i] <= 0xDF && len - i >= 2 && (s[i + 1] & 0xC0) == 0x80) {
            i += 2;  // U+0080 to U+07FF, as GPT-2's files write most bytes: here, not in a call
        } else {
            size_t n = utf8_len(s + i, len - i);
            if (n == 0)
                return i;
            i += n;
        }
    }
    return len;
}
