// format: fixed, count and exact number formatting with one spelling for -0, nan and inf.
#include "format.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int non_finite(double v, char *buf, size_t cap) {
    if (isnan(v))
        return snprintf(buf, cap, "nan");  // glibc would print "-nan" for 0/0
    if (isinf(v))
        return snprintf(buf, cap, v < 0 ? "-inf" : "inf");
    return -1;
}

void format_fixed(double v, int digits, char *buf, size_t cap) {
    if (non_finite(v, buf, cap) >= 0)
        return;
    snprintf(buf, cap, "%.*f", digits, v);
    // A value that rounds to zero prints as zero: "-0.0000" would only confuse.
    if (buf[0] == '-') {
        bool all_zero = true;
        for (const char *p = buf + 1; *p; p++)
            if (*p != '0' && *p != '.')
                all_zero = false;
        if (all_zero)
            memmove(buf, buf + 1, strlen(buf));
    }
}

void format_count(double v, char *buf, size_t cap) {
    if (non_finite(v, buf, cap) >= 0)
        return;
    char digits[64];
    snprintf(digits, sizeof(digits), "%.0f", fabs(v));
    size_t n = strlen(digits), out = 0;
    // Four digits read best without a separator (1024 positions, 3000 in a softmax input);
    // from five on they group in threes: 50,257 and 124,439,808.
    bool group = n > 4;
    if (v < 0 && out + 1 < cap)
        buf[out++] = '-';
    for (size_t i = 0; i < n && out + 1 < cap; i++) {
        if (group && i > 0 && (n - i) % 3 == 0 && out + 1 < cap)
            buf[out++] = ',';
        if (out + 1 < cap)
            buf[out++] = digits[i];
    }
    buf[out] = '\0';
}

void format_exact(double v, char *buf, size_t cap) {
    if (non_finite(v, buf, cap) >= 0)
        return;
    if (v == 0)
        v = 0;  // -0 reads back as 0 in every JSON reader anyway
    snprintf(buf, cap, "%.17g", v);
}

void format_short(double v, char *buf, size_t cap) {
    if (non_finite(v, buf, cap) >= 0)
        return;
    if (v == 0)
        v = 0;
    // A whole number reads as itself: 10000, not 1e+04 (%.1g is shortest, but no learner
    // writes a RoPE base that way).
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.0f", v);
        return;
    }
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(buf, cap, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static bool is_wide(unsigned long c) {
    static const unsigned long ranges[][2] = {
        {0x1100, 0x115F},  {0x2E80, 0x303E},  {0x3041, 0x33FF},  {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
        {0xA000, 0xA4CF},  {0xAC00, 0xD7A3},  {0xF900, 0xFAFF},  {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},
        {0xFFE0, 0xFFE6},  {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
    };
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (c >= ranges[i][0] && c <= ranges[i][1])
            return true;
    return false;
}

size_t format_display_width(const char *s, size_t len) {
    size_t w = 0;
    for (size_t i = 0; i < len;) {
        unsigned char b = (unsigned char)s[i];
        if (b == 0x1B) {  // a colour escape: ESC [ ... m
            while (i < len && s[i] != 'm')
                i++;
            i++;
            continue;
        }
        unsigned long c = b;
        size_t n = 1;
        if (b >= 0xF0)
            c = b & 0x07, n = 4;
        else if (b >= 0xE0)
            c = b & 0x0F, n = 3;
        else if (b >= 0xC0)
            c = b & 0x1F, n = 2;
        for (size_t k = 1; k < n && i + k < len; k++)
            c = (c << 6) | ((unsigned char)s[i + k] & 0x3F);
        i += n;
        if (c >= 0x0300 && c <= 0x036F)
            continue;  // a combining accent sits on the previous character
        w += is_wide(c) ? 2 : 1;
    }
    return w;
}

void format_bytes(double bytes, char *buf, size_t cap) {
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    size_t u = 0;
    while (bytes >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        bytes /= 1024;
        u++;
    }
    if (bytes == floor(bytes))
        snprintf(buf, cap, "%.0f %s", bytes, units[u]);
    else
        snprintf(buf, cap, "%.1f %s", bytes, units[u]);
}
