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
