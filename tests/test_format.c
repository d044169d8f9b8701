// Tests of format.c: the notation a tensor is printed in and the text of each number. Every
// expected string is worked out by hand from the value's decimal expansion (the literals are
// the doubles nearest to what they say; where that matters the comment gives the exact value).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format.h"

static const char *number(double v, int digits) {
    static char buf[FORMAT_NUMBER_CAP];
    format_number(v, digits, buf, sizeof(buf));
    return buf;
}

static const char *places(double v, int n) {
    static char buf[FORMAT_NUMBER_CAP];
    format_places(v, n, buf, sizeof(buf));
    return buf;
}

static const char *percent(double v, int n) {
    static char buf[FORMAT_NUMBER_CAP];
    format_percent(v, n, buf, sizeof(buf));
    return buf;
}

// A percentage is 100 v to its decimals; from 1e8% on in scientific notation with those
// decimals in its mantissa, v's digits two places on, so that 100 v cannot overflow (Python's
// format(Decimal(v) * 100, '.0e') of 1e307 is 1e+309, '.2e' 1.00e+309, '.1e' of -1e308
// -1.0e+310, '.0e' of 1e6 1e+8).
static void test_percentages(void **state) {
    (void)state;
    assert_string_equal(percent(0.3478, 1), "34.8%");
    assert_string_equal(percent(0.5, 0), "50%");
    assert_string_equal(percent(-0.125, 2), "-12.50%");
    assert_string_equal(percent(1e307, 0), "1e+309%");
    assert_string_equal(percent(1e307, 2), "1.00e+309%");
    assert_string_equal(percent(-1e308, 1), "-1.0e+310%");
    assert_string_equal(percent(1e6, 0), "1e+08%");
    assert_string_equal(percent(999999.99, 0), "99999999%");
    assert_string_equal(percent(INFINITY, 0), "inf");
    assert_string_equal(percent(NAN, 0), "nan");
}

static const char *whole(double v, int digits) {
    static char buf[FORMAT_NUMBER_CAP];
    format_whole(v, digits, buf, sizeof(buf));
    return buf;
}

// Each value of a tensor in the style chosen for all of them, joined by spaces.
static const char *tensor(const double *v, size_t n, int digits, bool is_whole) {
    static char text[8 * FORMAT_NUMBER_CAP];
    FormatStyle st = format_style(v, n, digits, is_whole);
    text[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char buf[FORMAT_NUMBER_CAP];
        format_with(&st, v[i], buf, sizeof(buf));
        if (i)
            strcat(text, " ");
        strcat(text, buf);
    }
    return text;
}

// ---------------------------------------------------------------- one number

static void test_ordinary_numbers_stay_fixed(void **state) {
    (void)state;
    assert_string_equal(number(0.33454, 4), "0.3345");
    assert_string_equal(number(-1.65361, 4), "-1.6536");
    assert_string_equal(number(2.0, 4), "2.0000");
    assert_string_equal(number(0.0, 4), "0.0000");
    assert_string_equal(number(-0.0, 4), "0.0000");
    // Just below 1e8 is still fixed: every digit of 99,999,999.99 fits a column.
    assert_string_equal(number(99999999.99, 4), "99999999.9900");
    assert_string_equal(number(0.125, 12), "0.125000000000");
}

static void test_large_numbers_go_scientific(void **state) {
    (void)state;
    // exp(150) = 1.3937095806663797e65: before, a 63-digit integer cut at 64 bytes.
    assert_string_equal(number(1.3937095806663797e65, 4), "1.3937e+65");
    // exp(100) = 2.6881171418161356e43: before, 44 digits and ".0000".
    assert_string_equal(number(2.6881171418161356e43, 4), "2.6881e+43");
    assert_string_equal(number(1e8, 4), "1.0000e+08");
    assert_string_equal(number(-123456789.0, 2), "-1.23e+08");
    assert_string_equal(number(1.7976931348623157e308, 4), "1.7977e+308");
}

static void test_small_numbers_do_not_vanish(void **state) {
    (void)state;
    assert_string_equal(number(1e-5, 4), "1.0000e-05");
    assert_string_equal(number(-4.9e-5, 4), "-4.9000e-05");
    // 0.00009 rounds to 0.0001, a true digit, and stays fixed; 5e-5 would tie with 0.0000.
    assert_string_equal(number(0.00009, 4), "0.0001");
    assert_string_equal(number(5e-5, 4), "5.0000e-05");
    // lesson 09's rounding differences: 2^-53 = 1.1102230246251565e-16.
    assert_string_equal(number(-1.1102230246251565e-16, 4), "-1.1102e-16");
    assert_string_equal(number(-1.1102230246251565e-16, 12), "-1.110223024625e-16");
    // Subnormals: the smallest double is 4.9406564584124654e-324.
    assert_string_equal(number(4.9406564584124654e-324, 4), "4.9407e-324");
    assert_string_equal(number(2.2250738585072014e-308, 3), "2.225e-308");
    // With no decimals, 0.5 is not 0.
    assert_string_equal(number(0.5, 0), "5e-01");
    assert_string_equal(number(2.5, 0), "2");  // glibc rounds the exact tie 2.5 to even
}

// Rounding noise beside a tensor's largest value does not decide its notation: 0.1 + 0.2 - 0.3
// is 5.551115123125783e-17 in doubles, 0.3 - 0.1 - 0.2 is -2.7755575615628914e-17.
static void test_rounding_noise_does_not_decide(void **state) {
    (void)state;
    double scores[] = {0.85, 5.551115123125783e-17, -2.7755575615628914e-17};
    assert_string_equal(tensor(scores, 3, 4, false), "0.8500 0.0000 0.0000");
    // 1e-5 is not noise, but 0.85 shows three significant digits in fixed notation: 1e-5 rounds
    // to 0.0000 beside it, and the style says so (a table notes it once).
    double with_eps[] = {0.85, -2.7755575615628914e-17, 1e-5};
    assert_string_equal(tensor(with_eps, 3, 4, false), "0.8500 0.0000 0.0000");
    assert_true(format_style(with_eps, 3, 4, false).hides_small);
    assert_false(format_style(scores, 3, 4, false).hides_small);  // the noise alone is not hidden
    // Without a value large enough for three digits, 1e-5 decides: scientific, every digit shown.
    double small[] = {0.005, -2.7755575615628914e-17, 1e-5};
    assert_string_equal(tensor(small, 3, 4, false), "5.0000e-03 -2.7756e-17 1.0000e-05");
    // The noise alone is all there is to print.
    double alone[] = {0.0, -2.7755575615628914e-17};
    assert_string_equal(tensor(alone, 2, 4, false), "0.0000e+00 -2.7756e-17");
    // The bound is FORMAT_NOISE_RATIO times the largest, where the small values decide (the
    // largest too small for three digits): 5e-15 beside 0.005 votes, 4e-15 does not. Beside 1
    // neither decides, but 1e-12 is said to hide behind 0.0000 and 9e-13 is noise.
    double at_bound[] = {0.005, 5e-15}, below[] = {0.005, 4e-15};
    assert_string_equal(tensor(at_bound, 2, 4, false), "5.0000e-03 5.0000e-15");
    assert_string_equal(tensor(below, 2, 4, false), "0.0050 0.0000");
    double hidden[] = {1.0, 1e-12}, noise[] = {1.0, 9e-13};
    assert_true(format_style(hidden, 2, 4, false).hides_small);
    assert_false(format_style(noise, 2, 4, false).hides_small);
    // With 12 decimals a value just below the bound still prints its true last digit.
    double twelve[] = {1.0, 8e-13};
    assert_string_equal(tensor(twelve, 2, 12, false), "1.000000000000 0.000000000001");
    // Scientific for another reason (the largest is 1e8 or more): the noise keeps its digits.
    double big[] = {2e8, 3e-5};
    assert_string_equal(tensor(big, 2, 4, false), "2.0000e+08 3.0000e-05");
    // inf takes no part in the largest: 1e-13 beside 1 is noise, beside inf alone it is not.
    double with_inf[] = {INFINITY, 1.0, 1e-13}, inf_alone[] = {INFINITY, 1e-13};
    assert_string_equal(tensor(with_inf, 3, 4, false), "inf 1.0000 0.0000");
    assert_string_equal(tensor(inf_alone, 2, 4, false), "inf 1.0000e-13");
}

static void test_non_finite_spellings(void **state) {
    (void)state;
    assert_string_equal(number(NAN, 4), "nan");
    assert_string_equal(number(-NAN, 4), "nan");
    assert_string_equal(number(INFINITY, 4), "inf");
    assert_string_equal(number(-INFINITY, 4), "-inf");
    assert_string_equal(whole(-INFINITY, 4), "-inf");
    assert_string_equal(places(INFINITY, 2), "inf");
}

// ---------------------------------------------------------------- one notation per tensor

static void test_tensor_shares_one_notation(void **state) {
    (void)state;
    const double ordinary[] = {0.3345, -0.0001, 1.0};
    assert_string_equal(tensor(ordinary, 3, 4, false), "0.3345 -0.0001 1.0000");
    // One tiny value beside a large one rounds to 0.0000: a probability of 1e-11 beside 0.89
    // (lesson 23's attention) keeps the whole matrix readable in fixed notation.
    const double eps_row[] = {0.5, 1e-5, 0.0};
    assert_string_equal(tensor(eps_row, 3, 4, false), "0.5000 0.0000 0.0000");
    const double weights[] = {0.89339, 1.0734e-11, 0.10661};
    assert_string_equal(tensor(weights, 3, 4, false), "0.8934 0.0000 0.1066");
    // Three significant digits are the line: 0.0100 has them at 4 decimals, 0.0099 does not,
    // and then its tiny neighbour puts the tensor in scientific notation as numpy does.
    const double at_line[] = {0.01, 1e-7}, below_line[] = {0.0099, 1e-7};
    assert_string_equal(tensor(at_line, 2, 4, false), "0.0100 0.0000");
    assert_string_equal(tensor(below_line, 2, 4, false), "9.9000e-03 1.0000e-07");
    // With fewer decimals, fewer digits: 0.40 at 2 decimals shows both (lesson digits: 2).
    const double two[] = {0.4, 1e-9}, one[] = {0.4, 1e-9}, none[] = {3.0, 0.2};
    assert_string_equal(tensor(two, 2, 2, false), "0.40 0.00");
    assert_string_equal(tensor(one, 2, 1, false), "0.4 0.0");
    assert_string_equal(tensor(none, 2, 0, false), "3 0");
    const double exps[] = {2.6881171418161356e43, 1.3937095806663797e65, 7.225973768125749e86};
    assert_string_equal(tensor(exps, 3, 4, false), "2.6881e+43 1.3937e+65 7.2260e+86");
    // -0 in a scientific tensor is 0.
    const double with_zero[] = {-0.0, 3e-9};
    assert_string_equal(tensor(with_zero, 2, 2, false), "0.00e+00 3.00e-09");
    // inf and nan do not vote: [inf, 0.5, nan] stays fixed.
    const double non_finite[] = {INFINITY, 0.5, NAN};
    assert_string_equal(tensor(non_finite, 3, 4, false), "inf 0.5000 nan");
    // Only zeros: fixed.
    const double zeros[] = {0.0, -0.0};
    assert_string_equal(tensor(zeros, 2, 4, false), "0.0000 0.0000");
}

static void test_ratio_too_large_for_one_column(void **state) {
    (void)state;
    // 1e7 / 0.001 = 1e10 >= 1e8, but 1e7 reads in fixed notation: the small one shows what it
    // can at four decimals.
    const double wide[] = {1e7, 0.001};
    assert_string_equal(tensor(wide, 2, 4, false), "10000000.0000 0.0010");
    // Among small values alone the ratio still decides: 0.005 / 1e-11 = 5e8 >= 1e8.
    const double small_wide[] = {0.005, 1e-11}, small_narrow[] = {0.005, 0.0003};
    assert_string_equal(tensor(small_wide, 2, 4, false), "5.0000e-03 1.0000e-11");
    assert_string_equal(tensor(small_narrow, 2, 4, false), "0.0050 0.0003");
    // 1e6 / 0.5 = 2e6: one column holds both.
    const double narrow[] = {1e6, 0.5};
    assert_string_equal(tensor(narrow, 2, 4, false), "1000000.0000 0.5000");
    // The ratio of the extremes does not overflow: 1e300 / 1e-300.
    const double extreme[] = {1e300, 1e-300};
    assert_string_equal(tensor(extreme, 2, 1, false), "1.0e+300 1.0e-300");
}

// ---------------------------------------------------------------- whole numbers

static void test_whole_numbers(void **state) {
    (void)state;
    assert_string_equal(whole(0, 4), "0");
    assert_string_equal(whole(1024, 4), "1024");
    assert_string_equal(whole(50257, 4), "50,257");
    assert_string_equal(whole(-124439808, 4), "-124,439,808");
    assert_string_equal(whole(999999999999999.0, 4), "999,999,999,999,999");
    // From 16 digits on, scientific: 2^53 = 9007199254740992.
    assert_string_equal(whole(9007199254740992.0, 4), "9.0072e+15");
    assert_string_equal(whole(1e20, 2), "1.00e+20");
    char buf[FORMAT_NUMBER_CAP];
    format_count(124439808, buf, sizeof(buf));
    assert_string_equal(buf, "124,439,808");
    format_count(18446744073709551615.0, buf, sizeof(buf));  // 2^64 as a double
    assert_string_equal(buf, "1.8447e+19");
    // A tensor of counts goes scientific as a whole when one of them has 16 digits.
    const double counts[] = {3, 1e16};
    assert_string_equal(tensor(counts, 2, 4, true), "3.0000e+00 1.0000e+16");
    const double positions[] = {0, 1, 2, 50256};
    assert_string_equal(tensor(positions, 4, 4, true), "0 1 2 50,256");
}

// ---------------------------------------------------------------- as a document printed them

static void test_document_places(void **state) {
    (void)state;
    assert_string_equal(places(0.2, 2), "0.20");
    assert_string_equal(places(0.39844, 3), "0.398");
    assert_string_equal(places(-0.001, 2), "0.00");
    assert_string_equal(places(3.0, 0), "3");
    // "1e-300" in a lesson has 300 places: the same last place in scientific notation.
    assert_string_equal(places(1e-300, 300), "1e-300");
    assert_string_equal(places(1.5e-300, 301), "1.5e-300");
    // "2.69e43" and "1.5e3" end in the 1e41 and 1e2 places.
    assert_string_equal(places(2.69e43, -41), "2.69e+43");
    assert_string_equal(places(1.5e3, -2), "1.5e+03");
    // 123456789.5 to one place: ten significant digits, scientific past 1e8.
    assert_string_equal(places(123456789.5, 1), "1.234567895e+08");
}

// ---------------------------------------------------------------- exact and short

static void test_exact_and_short(void **state) {
    (void)state;
    char buf[FORMAT_NUMBER_CAP];
    format_exact(0.1, buf, sizeof(buf));
    assert_string_equal(buf, "0.10000000000000001");
    format_exact(-0.0, buf, sizeof(buf));  // JSON's -0 would read back as the whole number 0
    assert_string_equal(buf, "-0.0");
    format_exact(4.9406564584124654e-324, buf, sizeof(buf));
    assert_string_equal(buf, "4.9406564584124654e-324");
    format_short(1e-5, buf, sizeof(buf));
    assert_string_equal(buf, "1e-05");
    format_short(10000, buf, sizeof(buf));
    assert_string_equal(buf, "10000");
    format_short(1e300, buf, sizeof(buf));
    assert_string_equal(buf, "1e+300");
}

// ---------------------------------------------------------------- sizes of memory

static const char *bytes(double v) {
    static char buf[FORMAT_NUMBER_CAP];
    format_bytes(v, buf, sizeof(buf));
    return buf;
}

// Powers of 1024 up to EiB, whole counts without a decimal and the rest to one; past 1024 EiB
// (2^70 bytes) the count grows, as there is no larger unit to move to.
static void test_sizes_of_memory(void **state) {
    (void)state;
    assert_string_equal(bytes(0), "0 bytes");
    assert_string_equal(bytes(1023), "1023 bytes");
    assert_string_equal(bytes(1024), "1 KiB");
    assert_string_equal(bytes(1536), "1.5 KiB");                      // 1.5 * 2^10
    assert_string_equal(bytes(650.0 * 1048576), "650 MiB");            // 650 * 2^20
    assert_string_equal(bytes(1000 * 0x1p50), "1000 PiB");             // below 1024 PiB
    assert_string_equal(bytes(0x1p60), "1 EiB");
    assert_string_equal(bytes(1.5 * 0x1p60), "1.5 EiB");
    assert_string_equal(bytes(0x1p70), "1024 EiB");
    assert_string_equal(bytes(0x1p72), "4096 EiB");
}

// The longest numbers fit FORMAT_NUMBER_CAP with room for the NUL: nothing is cut.
static void test_longest_numbers_fit(void **state) {
    (void)state;
    // The double nearest -99999999.9999999 is -99999999.99999989569187164306640625.
    assert_string_equal(number(-99999999.9999999, FORMAT_MAX_DECIMALS), "-99999999.9999998956918716");
    assert_string_equal(number(-2.2250738585072014e-308, FORMAT_MAX_DECIMALS), "-2.2250738585072014e-308");
    assert_string_equal(whole(-999999999999999.0, 4), "-999,999,999,999,999");
    // The double nearest -1.2345678901234567e-300 is -1.23456789012345675670...e-300.
    assert_string_equal(places(-1.2345678901234567e-300, 1000), "-1.2345678901234568e-300");
}

// A caller's own style that does not fit a value: whole past 15 digits and fixed at 1e8 and
// more go scientific with the style's decimals rather than print wrong or overlong digits.
static void test_style_that_does_not_fit(void **state) {
    (void)state;
    char buf[FORMAT_NUMBER_CAP];
    format_with(&(FormatStyle){.notation = FORMAT_WHOLE, .decimals = 3}, 2e15, buf, sizeof(buf));
    assert_string_equal(buf, "2.000e+15");
    format_with(&(FormatStyle){.notation = FORMAT_WHOLE, .decimals = 2}, -123456789012345678.0, buf, sizeof(buf));
    assert_string_equal(buf, "-1.23e+17");
    format_with(&(FormatStyle){.notation = FORMAT_FIXED, .decimals = 4}, 1e8, buf, sizeof(buf));
    assert_string_equal(buf, "1.0000e+08");
    format_with(&(FormatStyle){.notation = FORMAT_FIXED, .decimals = 1}, -250000000.0, buf, sizeof(buf));
    assert_string_equal(buf, "-2.5e+08");
    format_with(&(FormatStyle){.notation = FORMAT_FIXED, .decimals = 2}, 99999999.0, buf, sizeof(buf));
    assert_string_equal(buf, "99999999.00");
}

// The digits come from the tracer's own rounding where it can decide, printf's where it
// cannot; glibc's printf rounds the exact binary value (ties to even), so it is the reference
// here for values of every size, for ties, for near-ties built one unit in the last place
// either side of k + 0.5, and for mantissas that round up into the next power of ten.
static uint64_t next_random(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void expect_printf(const FormatStyle *st, double v) {
    char got[FORMAT_NUMBER_CAP], want[64];
    format_with(st, v, got, sizeof(got));
    bool e = st->notation == FORMAT_SCIENTIFIC ||
             (st->notation == FORMAT_FIXED && fabs(v) >= FORMAT_FIXED_BELOW) ||
             (st->notation == FORMAT_WHOLE && fabs(v) >= FORMAT_WHOLE_BELOW);
    if (st->notation == FORMAT_WHOLE && !e)
        return;  // grouped: checked by test_whole_numbers
    snprintf(want, sizeof(want), e ? "%.*e" : "%.*f", st->decimals, v);
    const char *w = want;
    if (want[0] == '-' && strspn(want + 1, "0.") == strcspn(want + 1, "e"))
        w++;  // -0.0000 prints as 0.0000
    if (strcmp(got, w) != 0)
        fail_msg("%a with %d decimals: got %s, printf %s", v, st->decimals, got, w);
}

static void test_digits_match_printf(void **state) {
    (void)state;
    uint64_t seed = 20261202;
    for (int d = 0; d <= FORMAT_MAX_DECIMALS; d++) {
        FormatStyle fixed = {.notation = FORMAT_FIXED, .decimals = d}, sci = {.notation = FORMAT_SCIENTIFIC, .decimals = d};
        for (int i = 0; i < 3000; i++) {
            uint64_t r = next_random(&seed);
            // magnitudes from 2^-80 to 2^80, any mantissa, either sign
            double v = ldexp((double)(r >> 11) / 0x1p53, (int)(r % 161) - 80) * (r & 1024 ? -1 : 1);
            expect_printf(&fixed, v);
            expect_printf(&sci, v);
            // k + 0.5 in the last decimal, and the doubles either side of it
            double k = (double)(next_random(&seed) % 100000000);
            for (int shift = 0; shift <= 22 && shift <= d + 8; shift += d + 8) {
                double tie = (k + 0.5) / pow(10, d);
                double around[] = {tie, nextafter(tie, 0), nextafter(tie, INFINITY),
                                   nextafter(nextafter(tie, 0), 0), k / pow(10, d)};
                for (size_t j = 0; j < sizeof(around) / sizeof(around[0]); j++) {
                    expect_printf(&fixed, around[j]);
                    expect_printf(&fixed, -around[j]);
                    expect_printf(&sci, around[j] * 1e-7);
                }
            }
        }
        // mantissas of all nines, which round up into the next power of ten
        for (int e = -30; e <= 30; e++) {
            double nines = (1.0 - 0.5 * pow(10, -d - 1)) * pow(10, e);
            double edge[] = {nines, nextafter(nines, 0), nextafter(nines, INFINITY), pow(10, e),
                             nextafter(pow(10, e), 0), 0.0, -0.0, 0x1p-1074, 1.7976931348623157e308};
            for (size_t j = 0; j < sizeof(edge) / sizeof(edge[0]); j++) {
                expect_printf(&fixed, edge[j]);
                expect_printf(&sci, edge[j]);
                expect_printf(&sci, -edge[j]);
            }
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordinary_numbers_stay_fixed),
        cmocka_unit_test(test_percentages),
        cmocka_unit_test(test_large_numbers_go_scientific),
        cmocka_unit_test(test_small_numbers_do_not_vanish),
        cmocka_unit_test(test_rounding_noise_does_not_decide),
        cmocka_unit_test(test_non_finite_spellings),
        cmocka_unit_test(test_tensor_shares_one_notation),
        cmocka_unit_test(test_ratio_too_large_for_one_column),
        cmocka_unit_test(test_whole_numbers),
        cmocka_unit_test(test_document_places),
        cmocka_unit_test(test_exact_and_short),
        cmocka_unit_test(test_sizes_of_memory),
        cmocka_unit_test(test_longest_numbers_fit),
        cmocka_unit_test(test_style_that_does_not_fit),
        cmocka_unit_test(test_digits_match_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
