// format: one notation per tensor (fixed, scientific or whole), one spelling for -0, nan and inf,
// and no number ever cut short.
#include "format.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int non_finite(double v, char *buf, size_t cap) {
    if (isnan(v))
        return snprintf(buf, cap, "nan");  // glibc would print "-nan" for 0/0
    if (isinf(v))
        return snprintf(buf, cap, v < 0 ? "-inf" : "inf");
    return -1;
}

// Writes fmt into buf, which the caller promised holds FORMAT_NUMBER_CAP bytes; a number that
// did not fit would be a wrong number, so that is a programming error, never a cut.
static void put(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t cap, const char *fmt, ...) {
    ASSERT(cap >= FORMAT_NUMBER_CAP);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    ASSERT(n >= 0 && (size_t)n < cap);
}

static int clamp_decimals(int d) {
    return d < 0 ? 0 : d > FORMAT_MAX_DECIMALS ? FORMAT_MAX_DECIMALS : d;
}

// 10^-digits, the unit of the last printed decimal, as the literal the compiler rounds (pow
// need not be correctly rounded, and 1e-5 must compare equal to the lesson's 1e-5).
static double last_unit(int digits) {
    static const double units[FORMAT_MAX_DECIMALS + 1] = {
        1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12,
        1e-13, 1e-14, 1e-15, 1e-16,
    };
    return units[clamp_decimals(digits)];
}

// The least magnitude that shows FORMAT_FIXED_DIGITS significant digits with `decimals`
// decimals (fewer with fewer decimals, at least one): 0.01 at 4 decimals, 0.1 at 2, 1 at 0.
static double significant_floor(int decimals) {
    int digits = decimals < FORMAT_FIXED_DIGITS ? decimals : FORMAT_FIXED_DIGITS;
    if (digits < 1)
        digits = 1;
    return last_unit(1 + decimals - digits);
}

// ---------------------------------------------------------------- digits without printf
//
// printf's %.*f and %.*e round the exact binary value to the nearest decimal, ties to even, and
// take a thousand instructions or more for it; a trace prints every value. Scaled by an exact
// power of ten, a value is one rounding away from its exact product. Below 2^52 every k + 0.5
// is a double, and rounding never crosses a double: the rounded product lies on the same side
// of each tie as the exact one, or on it. So unless it lands on a tie, it rounds to the same
// whole number as the exact product, and the digits are that number's. Products on a tie and
// values too large for a double to hold as an integer are left to printf, which gives the same
// characters.

// 10^0 to 10^22, each exact in a double.
static const double exact_powers[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};
#define EXACT_POWER_MAX 22

// The whole number nearest the exact product |v| * 10^shift (a quotient for a negative shift),
// when the rounded product decides it; false otherwise.
static bool scaled_whole(double v, int shift, uint64_t *whole) {
    if (shift > EXACT_POWER_MAX || shift < -EXACT_POWER_MAX)
        return false;
    double a = fabs(v);
    double scaled = shift >= 0 ? a * exact_powers[shift] : a / exact_powers[-shift];
    if (!(scaled < 0x1p52))
        return false;
    double below = floor(scaled), fraction = scaled - below;  // both exact below 2^52
    if (fraction == 0.5)
        return false;
    *whole = (uint64_t)below + (fraction > 0.5);
    return true;
}

size_t format_digits(uint64_t q, size_t width, char *out) {
    char rev[24];
    ASSERT(width <= sizeof(rev));
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + q % 10);
        q /= 10;
    } while (q);
    while (n < width)
        rev[n++] = '0';
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

// q / 10^decimals with `decimals` places ("%.*f" of it), after a sign; the length.
static size_t put_point(uint64_t q, int decimals, bool negative, char *out) {
    size_t at = 0;
    if (negative)
        out[at++] = '-';
    char digits[24];
    size_t n = format_digits(q, (size_t)decimals + 1, digits), whole = n - (size_t)decimals;
    memcpy(out + at, digits, whole);
    at += whole;
    if (decimals > 0) {
        out[at++] = '.';
        memcpy(out + at, digits + whole, (size_t)decimals);
        at += (size_t)decimals;
    }
    out[at] = '\0';
    return at;
}

// "%.*f" of a finite v, as printf writes it; false: printf must.
static bool fixed_digits(double v, int decimals, char *buf) {
    uint64_t q;
    if (!scaled_whole(v, decimals, &q))
        return false;
    put_point(q, decimals, signbit(v), buf);
    return true;
}

// "%.*e" of a finite v, as printf writes it; false: printf must. The exponent e is the one
// that puts the mantissa, v / 10^(e - decimals), in [10^decimals, 10^(decimals+1)). Rounding
// never crosses those bounds, which are doubles: a rounded product strictly between them comes
// from an exact one between them, and one on a bound is left to printf, as is a mantissa that
// rounds up to 10^(decimals+1) (9.99996 to 4 decimals).
static bool scientific_digits(double v, int decimals, char *buf) {
    int e = 0;
    uint64_t q = 0;
    if (v != 0) {
        double a = fabs(v), low = exact_powers[decimals], high = exact_powers[decimals + 1];
        e = (int)floor(log10(a));  // within one of the true exponent
        bool inside = false;
        for (int tries = 0; tries < 2 && !inside; tries++) {
            int shift = decimals - e;
            if (shift > EXACT_POWER_MAX || shift < -EXACT_POWER_MAX)
                return false;
            double scaled = shift >= 0 ? a * exact_powers[shift] : a / exact_powers[-shift];
            if (scaled > low && scaled < high)
                inside = true;
            else if (scaled == low || scaled == high)
                return false;
            else
                e += scaled < low ? -1 : 1;
        }
        if (!inside || !scaled_whole(v, decimals - e, &q) || q >= (uint64_t)high)
            return false;
    }
    // q has decimals + 1 digits (or is 0): q / 10^decimals is the mantissa
    size_t at = put_point(q, decimals, signbit(v), buf);
    buf[at++] = 'e';
    buf[at++] = e < 0 ? '-' : '+';
    at += format_digits((uint64_t)(e < 0 ? -e : e), 2, buf + at);
    buf[at] = '\0';
    return true;
}

// "-0.0000" and "-0.0000e+00" print without the sign: a value that rounds to zero is zero.
static void drop_negative_zero(char *buf) {
    if (buf[0] != '-')
        return;
    for (const char *p = buf + 1; *p && *p != 'e'; p++)
        if (*p != '0' && *p != '.')
            return;
    memmove(buf, buf + 1, strlen(buf));
}

double format_largest(const double *values, size_t n) {
    double largest = 0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(values[i]);
        if (isfinite(a) && a > largest)
            largest = a;
    }
    return largest;
}

double format_smallest(const double *values, size_t n, double largest) {
    // Rounding noise (a score that is 0 in exact arithmetic, computed as 2.7756e-17) does not
    // vote: in fixed notation it rounds to zero, as it is to every digit shown beside the
    // largest value; in scientific notation, chosen by the other values, it shows its digits.
    double noise = largest * FORMAT_NOISE_RATIO, smallest = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(values[i]);
        if (isfinite(a) && a >= noise && a > 0 && a < smallest)
            smallest = a;
    }
    return smallest;
}

bool format_style_reads_smallest(double largest, bool whole) {
    return largest != 0 && !whole;
}

FormatStyle format_style_of(double largest, double smallest, int digits, bool whole) {
    FormatStyle st = {.notation = whole ? FORMAT_WHOLE : FORMAT_FIXED, .decimals = clamp_decimals(digits)};
    if (largest == 0)  // only zeros, inf and nan: nothing to choose for
        return st;
    if (whole) {
        if (largest >= FORMAT_WHOLE_BELOW)
            st.notation = FORMAT_SCIENTIFIC;
        return st;
    }
    // Fixed notation while the largest magnitude shows FORMAT_FIXED_DIGITS significant digits
    // (0.0123 at 4 decimals): what is much smaller rounds to 0.0000, which is the truth at
    // that precision (a probability of 1e-11 beside 0.89). Else fixed while every value shows a
    // true digit: a non-zero value that would round to 0.0000 (or to a tie with it) decides for
    // scientific, so that eps = 1e-5 alone is not zero; 0.00009 still prints as 0.0001. The
    // ratio is compared as largest >= smallest * ratio, which cannot overflow to a wrong
    // answer: smallest * 1e8 is finite for every finite smallest below 1e300.
    bool largest_reads = largest >= significant_floor(st.decimals);
    bool all_read = smallest > 0.5 * last_unit(st.decimals) && largest < smallest * FORMAT_FIXED_MAX_RATIO;
    if (largest >= FORMAT_FIXED_BELOW || !(largest_reads || all_read))
        st.notation = FORMAT_SCIENTIFIC;
    else
        st.hides_small = smallest <= 0.5 * last_unit(st.decimals);
    return st;
}

FormatStyle format_style(const double *values, size_t n, int digits, bool whole) {
    double largest = format_largest(values, n);
    double smallest = format_style_reads_smallest(largest, whole) ? format_smallest(values, n, largest) : INFINITY;
    return format_style_of(largest, smallest, digits, whole);
}

// Digits in groups of three from five digits on (50,257 and 124,439,808); four digits read
// best without a separator (1024 positions, 3000 in a softmax input).
static void grouped(double v, char *buf, size_t cap) {
    char digits[FORMAT_NUMBER_CAP];
    if (!fixed_digits(fabs(v), 0, digits))
        put(digits, sizeof(digits), "%.0f", fabs(v));
    size_t n = strlen(digits), out = 0;
    bool group = n > 4;
    char text[FORMAT_NUMBER_CAP + FORMAT_NUMBER_CAP / 3];
    if (v <= -0.5)
        text[out++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (group && i > 0 && (n - i) % 3 == 0)
            text[out++] = ',';
        text[out++] = digits[i];
    }
    text[out] = '\0';
    put(buf, cap, "%s", text);
}

static void scientific(double v, int decimals, char *buf, size_t cap) {
    if (!scientific_digits(v, decimals, buf))
        put(buf, cap, "%.*e", decimals, v);
}

void format_with(const FormatStyle *style, double v, char *buf, size_t cap) {
    ASSERT(cap >= FORMAT_NUMBER_CAP);
    if (non_finite(v, buf, cap) >= 0)
        return;
    switch (style->notation) {
    case FORMAT_WHOLE:
        if (fabs(v) < FORMAT_WHOLE_BELOW) {
            grouped(v, buf, cap);
            return;
        }
        scientific(v, style->decimals, buf, cap);  // a lone value past 15 digits
        break;
    case FORMAT_SCIENTIFIC:
        scientific(v, style->decimals, buf, cap);
        break;
    case FORMAT_FIXED:
        if (fabs(v) >= FORMAT_FIXED_BELOW) {  // a caller's style that does not fit this value
            scientific(v, style->decimals, buf, cap);
            break;
        }
        if (!fixed_digits(v, style->decimals, buf))
            put(buf, cap, "%.*f", style->decimals, v);
        break;
    }
    drop_negative_zero(buf);
}

void format_number(double v, int digits, char *buf, size_t cap) {
    FormatStyle st = format_style(&v, 1, digits, false);
    format_with(&st, v, buf, cap);
}

void format_whole(double v, int digits, char *buf, size_t cap) {
    FormatStyle st = format_style(&v, 1, digits, true);
    format_with(&st, v, buf, cap);
}

void format_count(double v, char *buf, size_t cap) {
    format_whole(v, 4, buf, cap);
}

void format_places(double v, int places, char *buf, size_t cap) {
    ASSERT(cap >= FORMAT_NUMBER_CAP);
    if (non_finite(v, buf, cap) >= 0)
        return;
    if (places >= 0 && places <= FORMAT_MAX_DECIMALS && fabs(v) < FORMAT_FIXED_BELOW) {
        FormatStyle st = {.notation = FORMAT_FIXED, .decimals = places};
        format_with(&st, v, buf, cap);
        return;
    }
    // The same last place in scientific notation: 1.5e-300 printed to 301 places is 1.5e-300,
    // 2.69e43 printed to -41 places (its last digit is in the 1e41 place) is 2.69e+43.
    int exponent = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    FormatStyle st = {.notation = FORMAT_SCIENTIFIC, .decimals = clamp_decimals(places + exponent)};
    format_with(&st, v, buf, cap);
}

void format_percent(double v, int places, char *buf, size_t cap) {
    ASSERT(cap >= FORMAT_NUMBER_CAP);
    if (non_finite(v, buf, cap) >= 0)
        return;
    if (isfinite(v * 100) && fabs(v * 100) < FORMAT_FIXED_BELOW) {
        format_places(v * 100, places, buf, cap);
    } else {
        // Too large for fixed notation: scientific, its mantissa with the placeholder's
        // decimals, as printf's %.2e writes it. Multiplying by 100 moves the decimal point, so
        // these are v's own digits with the exponent 2 higher (100 v may overflow: 1e307 is
        // 1e+309%).
        FormatStyle st = {.notation = FORMAT_SCIENTIFIC, .decimals = clamp_decimals(places)};
        format_with(&st, v, buf, cap);
        char *e = strchr(buf, 'e');
        ASSERT(e);
        snprintf(e, cap - (size_t)(e - buf), "e+%02d", atoi(e + 1) + 2);
    }
    size_t len = strlen(buf);
    if (len + 1 < cap)
        memcpy(buf + len, "%", 2);
}

void format_exact(double v, char *buf, size_t cap) {
    if (non_finite(v, buf, cap) >= 0)
        return;
    if (v == 0 && signbit(v)) {  // -0 would read back as the whole number 0
        put(buf, cap, "%s", "-0.0");
        return;
    }
    put(buf, cap, "%.17g", v);
}

void format_short(double v, char *buf, size_t cap) {
    if (non_finite(v, buf, cap) >= 0)
        return;
    if (v == 0)
        v = 0;
    // A whole number reads as itself: 10000, not 1e+04 (%.1g is shortest, but no learner
    // writes a RoPE base that way).
    if (v == floor(v) && fabs(v) < FORMAT_WHOLE_BELOW) {
        put(buf, cap, "%.0f", v);
        return;
    }
    for (int precision = 1; precision <= 17; precision++) {
        put(buf, cap, "%.*g", precision, v);
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
        if (b < 0x80 && b != 0x1B) {  // ASCII, nearly all the text: one column each
            w++;
            i++;
            continue;
        }
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
