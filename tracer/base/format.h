// format: numbers as the trace prints them, the same on every platform and never cut short.
//
// A tensor is printed in one notation, chosen from all its values: fixed ("0.3345") while its
// largest magnitude shows FORMAT_FIXED_DIGITS significant digits that way, and below 1e8; a
// value far smaller then rounds to 0.0000, the truth to the printed decimals (a probability of
// 1e-11 beside 0.89; the text trace says so under the table). A tensor of small values only is
// fixed while every value shows a true digit, as numpy's printer chooses; else scientific
// ("1.3937e+65", "1.0000e-05"): the smallest non-zero one would round to zero in fixed notation
// (below half a unit of the last decimal: eps = 1e-5 is not 0.0000), or the two are too far
// apart to share one column. Rounding noise does not decide: a value below FORMAT_NOISE_RATIO
// times the tensor's largest finite magnitude (2.7756e-17 beside 0.85, a score that is 0 in
// exact arithmetic) takes no part in the choice, so in fixed notation it rounds to 0.0000,
// printed without a sign as -0 is.
// Whole numbers (counts, positions) print whole, in groups of three past four digits, while
// they have at most 15 digits; then scientific.
//
//     char buf[FORMAT_NUMBER_CAP];
//     FormatStyle st = format_style(t->data, t->size, 4, t->is_count);
//     format_with(&st, t->data[0], buf, sizeof buf);  // "0.3345", "1.3937e+65" or "50,257"
//     format_number(1e-5, 4, buf, sizeof buf);        // "1.0000e-05": one value on its own
//     format_number(-0.0, 4, buf, sizeof buf);        // "0.0000" (never "-0.0000")
//     format_number(0.0 / 0.0, 4, buf, sizeof buf);  // "nan" (never "-nan")
//     format_count(124439808, buf, sizeof buf);       // "124,439,808" (but 1024 stays "1024")
//     format_places(0.20, 2, buf, sizeof buf);        // "0.20": a number as a document printed it
//     format_exact(0.1, buf, sizeof buf);             // "0.10000000000000001": reads back the same
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The most decimals a number is printed with: the lesson's digits are at most 12
// (LESSON_MAX_DIGITS) and 17 significant digits hold every double.
#define FORMAT_MAX_DECIMALS 16
// Room for the longest number any format_* writes, NUL included: fixed notation below 1e8
// with FORMAT_MAX_DECIMALS decimals ("-99999999.9999999999999999", 27 bytes), scientific
// ("-9.9999999999999999e-308", 25), a whole number of 15 digits in groups ("-999,999,...", 20).
// Every function asserts that its buffer is at least this big, so no digit is ever cut.
#define FORMAT_NUMBER_CAP 32
// Fixed notation stops here: 1e8 and more print as 1.0000e+08, as numpy prints them.
#define FORMAT_FIXED_BELOW 1e8
// Whole numbers print whole up to 15 digits (999,999,999,999,999); from 1e15 on, scientific.
#define FORMAT_WHOLE_BELOW 1e15
// Fixed notation is chosen while the largest magnitude shows this many significant digits
// (with at least as many decimals): values far smaller round to 0.0000 beside it.
#define FORMAT_FIXED_DIGITS 3
// Largest to smallest non-zero magnitude that still shares a fixed column when the largest is
// too small for FORMAT_FIXED_DIGITS: past it, fixed notation would print the small ones with
// fewer significant digits than the lesson asks for.
#define FORMAT_FIXED_MAX_RATIO 1e8

// Below this fraction of a tensor's largest magnitude a value is rounding noise: sums of a few
// thousand doubles are off by about 1e-13 of their terms at most, and no digit a lesson prints
// (12 decimals at most) could show such a value beside the largest.
#define FORMAT_NOISE_RATIO 1e-12

typedef enum FormatNotation {
    FORMAT_FIXED,       // 0.3345
    FORMAT_SCIENTIFIC,  // 3.3450e-01
    FORMAT_WHOLE,       // 50,257
} FormatNotation;

typedef struct FormatStyle {
    FormatNotation notation;
    int decimals;  // after the point: fixed and scientific (the mantissa's)
    // Fixed notation where some value that is not 0 (nor rounding noise) prints as 0.0000: a
    // table says so once under its cells.
    bool hides_small;
} FormatStyle;

// The notation for n values printed with `digits` decimals (0 to FORMAT_MAX_DECIMALS); whole:
// the values are counts or positions (every one a whole number). inf and nan do not vote, nor
// does rounding noise (see FORMAT_NOISE_RATIO).
FormatStyle format_style(const double *values, size_t n, int digits, bool whole);
// The same in parts, for a caller that reads the values in chunks (on threads): the largest
// finite magnitude (0 for none), then, when format_style_reads_smallest says the choice needs
// it, the smallest finite non-zero magnitude that is not rounding noise beside that largest
// (INFINITY for none). Chunks combine by max and min, in any order, to the same style.
double format_largest(const double *values, size_t n);
bool format_style_reads_smallest(double largest, bool whole);
double format_smallest(const double *values, size_t n, double largest);
FormatStyle format_style_of(double largest, double smallest, int digits, bool whole);
// One value in a chosen style; "inf", "-inf", "nan" in every style. cap >= FORMAT_NUMBER_CAP.
void format_with(const FormatStyle *style, double v, char *buf, size_t cap);
// One value on its own (a scalar, a number in a work line, a note or a verdict): its own style.
void format_number(double v, int digits, char *buf, size_t cap);
// A whole number on its own (a count, a size), with `digits` decimals if it goes scientific.
void format_whole(double v, int digits, char *buf, size_t cap);
// A whole number in messages and sizes: format_whole with 4 decimals past 15 digits.
void format_count(double v, char *buf, size_t cap);
// A number as a document printed it, `places` after the point (lesson_values.c counts them:
// "0.20" 2, "1e-3" 3, "2.69e43" -41): fixed when that is short, else scientific with the same
// last place, so "1e-300" prints as 1e-300 and not as 300 decimals.
void format_places(double v, int places, char *buf, size_t cap);
// v as a percentage to `places` decimals, "%" included ("34.8%"; "inf", "nan" without it).
// A percentage of 1e8% or more is written in scientific notation with `places` decimals in its
// mantissa, v's own digits two places on, so that 100 * v cannot overflow (1e307 is 1e+309%).
void format_percent(double v, int places, char *buf, size_t cap);
// 17 significant digits, so the text reads back to the same double, -0.0 included; "inf",
// "-inf", "nan".
void format_exact(double v, char *buf, size_t cap);
// The shortest of %.{1..17}g that reads back to the same double: 0.1 -> "0.1"; a whole
// number below 1e15 in plain digits: 10000 -> "10000".
void format_short(double v, char *buf, size_t cap);

// Columns a terminal gives len bytes of UTF-8 text: East Asian wide characters (猫) take two,
// combining accents none, everything else one. ANSI colour escapes take none. The same on
// every machine (no locale), so golden files do not depend on where they were made.
size_t format_display_width(const char *s, size_t len);
// The decimal digits of q, at least width of them (zeros in front), at out without a NUL
// (room for 20 or width, width at most 24); their count. Counts, indices and labels are written with it rather
// than printf, which costs a thousand instructions and more a number.
size_t format_digits(uint64_t q, size_t width, char *out);
// A size in bytes in the largest binary unit that keeps it at least 1: "1 GiB", "74.5 GiB",
// "512 bytes".
void format_bytes(double bytes, char *buf, size_t cap);
