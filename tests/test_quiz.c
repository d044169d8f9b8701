// Unit tests of --quiz's judging and of the kernel's comparisons and allclose: each expected
// verdict is worked out here by hand from the rule (half a unit of the last printed decimal,
// or of the last typed one, whichever is looser; numpy's |a - b| <= atol + rtol × |b|).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel.h"
#include "quiz.h"

// A question whose value is 0.3478 printed with 4 decimals (softmax's weights[0, 1] in lesson 2).
static const QuizQuestion weight = {.asked = "weights[0, 1]", .value = 0.347826, .value_text = "0.3478",
                                    .half_unit = 0.00005, .digits = 4, .op = "softmax"};
// A count printed without decimals.
static const QuizQuestion count = {.asked = "n", .value = 12, .value_text = "12", .half_unit = 0.5, .digits = 0,
                                   .op = "numel"};

static QuizVerdict judge(const QuizQuestion *q, const char *answer) {
    QuizVerdict v;
    quiz_judge(q, answer, &v);
    return v;
}

static void test_printed_digits(void **state) {
    (void)state;
    // |0.3478 - 0.347826| = 0.000026 <= 0.00005: right, no note.
    QuizVerdict v = judge(&weight, "0.3478");
    assert_true(v.number && v.right);
    assert_string_equal(v.note, "");
    // 0.3479: 0.000074 > 0.00005, and typed to 4 decimals: wrong.
    assert_false(judge(&weight, "0.3479").right);
    // More decimals than printed: 0.34783 is 0.000004 away.
    assert_true(judge(&weight, " 0.34783 ").right);
}

static void test_typed_precision_is_looser_with_a_note(void **state) {
    (void)state;
    // 0.35 typed to 2 decimals: |0.35 - 0.347826| = 0.0022 <= 0.005.
    QuizVerdict v = judge(&weight, "0.35");
    assert_true(v.right);
    assert_string_equal(v.note, "right to the 2 decimals you gave; to 4 it is 0.3478");
    // 0.36: 0.0122 > 0.005.
    assert_false(judge(&weight, "0.36").right);
    // 3.5e-1 has its last digit in the second decimal place, like 0.35.
    assert_true(judge(&weight, "3.5e-1").right);
    // A count: half a unit is 0.5.
    assert_true(judge(&count, "12").right);
    assert_false(judge(&count, "13").right);
    assert_true(judge(&count, "12.4").right);
    // Zero claims no precision: 0 and 0.0 for 0.17 are wrong, though 0.17 rounds to 0.
    static const QuizQuestion small = {.asked = "k", .value = 0.17, .value_text = "0.1700", .half_unit = 0.00005,
                                       .digits = 4};
    assert_false(judge(&small, "0").right);
    assert_false(judge(&small, "0.0").right);
    // 0.2 is right to its one decimal (0.03 <= 0.05) but carries one significant figure of
    // 0.17: held to two, half a unit 0.005, it is wrong; 0.17 and 0.170 are right.
    assert_false(judge(&small, "0.2").right);
    assert_true(judge(&small, "0.17").right);
    assert_true(judge(&small, "0.170").right);
    // The same for a value past 1: 3 is not 2.5 (two figures: half a unit 0.05), 2.5 is.
    static const QuizQuestion mid = {.asked = "b", .value = 2.5, .value_text = "2.5000", .half_unit = 0.00005,
                                     .digits = 4};
    assert_false(judge(&mid, "3").right);
    assert_true(judge(&mid, "2.5").right);
}

// An answer exactly half a unit of the last printed decimal away is right: 0.34505 could print
// as 0.3450 (the value 0.345), and 12.5 as 12. In doubles |0.34505 - 0.345| is
// 5.000000000005e-05, a hair above 0.00005, so the rule needs its widening by 1e-9 to judge
// it as a person would; 0.34506 is 0.00006 away and wrong.
static void test_exactly_half_a_unit_away_is_right(void **state) {
    (void)state;
    static const QuizQuestion mid = {.asked = "m", .value = 0.345, .value_text = "0.3450", .half_unit = 0.00005,
                                     .digits = 4};
    assert_true(judge(&mid, "0.34505").right);
    assert_true(judge(&mid, "0.34495").right);
    assert_false(judge(&mid, "0.34506").right);
    assert_true(judge(&count, "12.5").right);
    assert_false(judge(&count, "12.6").right);
}

static void test_not_a_number(void **state) {
    (void)state;
    assert_false(judge(&weight, "").number);
    assert_false(judge(&weight, "about a third").number);
    assert_false(judge(&weight, "0.35x").number);
    assert_true(judge(&weight, "-1").number);
    // Thousands grouped as the trace prints counts; any other comma is not a number.
    static const QuizQuestion params = {.asked = "total", .value = 124439808, .value_text = "124,439,808",
                                        .half_unit = 0.5};
    assert_true(judge(&params, "124,439,808").right);
    assert_true(judge(&params, "124439808").right);
    assert_false(judge(&params, "124,439,807").right);
    assert_false(judge(&params, "12,4439,808").number);
    assert_false(judge(&params, "1,2").number);
    assert_false(judge(&weight, "0,35").number);
    assert_false(judge(&params, "124,439,808 x").number);
    assert_true(judge(&params, "-124,439,808").number);
    // Decimals may follow the groups; a comma cannot open them, follow another, or come after
    // the point; a group may hold no letter; 130 digits before a comma are no count either.
    static const QuizQuestion mean = {.asked = "m", .value = 1234.5, .value_text = "1,234.5000",
                                      .half_unit = 0.00005, .digits = 4};
    assert_true(judge(&mean, "1,234.5").right);
    assert_false(judge(&params, ",124,439,808").number);
    assert_false(judge(&params, "124,,439").number);
    assert_false(judge(&mean, "1.5,3").number);
    assert_false(judge(&params, "124,4x9,808").number);
    char long_answer[160];
    memset(long_answer, '1', 130);
    strcpy(long_answer + 130, ",000");
    assert_false(judge(&params, long_answer).number);
}

// Only numbers as a person writes them: no hexadecimal (whose e is no exponent), exponents of
// any length without overflow, and nothing cut short: an answer past QUIZ_ANSWER_MAX is no number.
static void test_strict_numbers(void **state) {
    (void)state;
    static const QuizQuestion third = {.asked = "t", .value = 0.43, .value_text = "0.4300", .half_unit = 0.00005,
                                       .digits = 4};
    static const QuizQuestion zero = {.asked = "z", .value = 0, .value_text = "0.0000", .half_unit = 0.00005,
                                      .digits = 4};
    assert_false(judge(&third, "0x1e9").number);
    assert_false(judge(&third, "0x.6p0").number);
    assert_false(judge(&third, "nan(1)").number);
    assert_false(judge(&third, "1e").number);
    assert_false(judge(&third, ".").number);
    assert_false(judge(&third, "+-1").number);
    // 10^-2147483648 is 0, typed to its 2147483648th decimal: right for 0, wrong for 0.43.
    assert_true(judge(&zero, "1e-2147483648").right);
    assert_false(judge(&third, "1e-2147483648").right);
    assert_true(judge(&zero, "0E+99999999999999999999").right);
    // 4.3e-1 typed to the second decimal, like 0.43; +0.43 and INF read as written.
    assert_true(judge(&third, "4.3e-1").right);
    assert_true(judge(&third, "+0.43").right);
    assert_false(judge(&third, "-INF").right);
    assert_true(judge(&third, "-INF").number);
    // 0.43 then 300 zeros and e5 is 43,000, not 0.43 cut short; 255 characters are still read.
    char answer[400];
    strcpy(answer, "0.43");
    memset(answer + 4, '0', 300);
    strcpy(answer + 304, "e5");
    assert_false(judge(&third, answer).number);
    memset(answer, ' ', sizeof(answer));
    memcpy(answer + 100, "0.43", 4);
    memset(answer + 104, '0', QUIZ_ANSWER_MAX - 4);
    answer[sizeof(answer) - 1] = '\0';
    assert_true(judge(&third, answer).right);
    answer[104 + QUIZ_ANSWER_MAX - 4] = '0';
    assert_false(judge(&third, answer).number);
}

// An exponent of two digits places the last typed digit as written: 1.2e12 is typed to the
// 10^11 place, half a unit 5e10, and 1.23e12 is 3e10 from it: right, by the precision typed
// (the trace prints 1.2300e+12, half a unit 5e7); 1.3e12 is 7e10 away: wrong. 3.6e-10 is typed
// to the 11th decimal, half a unit 5e-12, and is 1.2174e-11 from 3.47826e-10: wrong, as 3.5e-10
// (2.174e-12 away) is right.
static void test_exponents_of_two_digits(void **state) {
    (void)state;
    static const QuizQuestion large = {.asked = "l", .value = 1.23e12, .value_text = "1.2300e+12",
                                       .half_unit = 5e7, .digits = 4};
    QuizVerdict v = judge(&large, "1.2e12");
    assert_true(v.right);
    assert_string_equal(v.note, "right to the precision you gave; the trace prints 1.2300e+12");
    assert_false(judge(&large, "1.3e12").right);
    static const QuizQuestion small = {.asked = "s", .value = 3.47826e-10, .value_text = "3.4783e-10",
                                       .half_unit = 5e-15, .digits = 4};
    assert_true(judge(&small, "3.5e-10").right);
    assert_false(judge(&small, "3.6e-10").right);
}

// An overflow is right only as itself: inf for inf, and nan for nan; inf for a number is not.
static void test_infinite_and_nan(void **state) {
    (void)state;
    static const QuizQuestion overflow = {.asked = "e", .value = INFINITY, .value_text = "inf", .half_unit = 0.5};
    static const QuizQuestion undefined = {.asked = "d", .value = NAN, .value_text = "nan", .half_unit = 0.5};
    assert_true(judge(&overflow, "inf").right);
    assert_false(judge(&overflow, "-inf").right);
    assert_false(judge(&overflow, "1e308").right);
    assert_true(judge(&undefined, "nan").right);
    assert_false(judge(&undefined, "0").right);
    assert_false(judge(&weight, "inf").right);
    assert_false(judge(&weight, "nan").right);
}

static void test_comparisons_and_allclose(void **state) {
    (void)state;
    assert_true(kernel_binary_apply(KERNEL_LT, 1, 2) == 1);
    assert_true(kernel_binary_apply(KERNEL_GE, 1, 2) == 0);
    assert_true(kernel_binary_apply(KERNEL_EQ, NAN, NAN) == 0);  // nan equals nothing
    assert_true(kernel_binary_apply(KERNEL_NE, NAN, NAN) == 1);
    // numpy: |1.00001 - 1| = 1e-5 <= 1e-8 + 1e-5 × 1 = 1.001e-5.
    assert_true(kernel_isclose(1.00001, 1.0, 1e-5, 1e-8));
    // ... but 1.0000102 is 1.02e-5 away: not close.
    assert_false(kernel_isclose(1.0000102, 1.0, 1e-5, 1e-8));
    // Not symmetric: b is the reference. |0 - 1e-8| = 1e-8 <= 1e-8 + 1e-5 × 1e-8.
    assert_true(kernel_isclose(0, 1e-8, 1e-5, 1e-8));
    assert_false(kernel_isclose(NAN, NAN, 1e-5, 1e-8));
    assert_true(kernel_isclose(INFINITY, INFINITY, 1e-5, 1e-8));
    assert_false(kernel_isclose(INFINITY, -INFINITY, 1e-5, 1e-8));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_printed_digits),
        cmocka_unit_test(test_typed_precision_is_looser_with_a_note),
        cmocka_unit_test(test_exactly_half_a_unit_away_is_right),
        cmocka_unit_test(test_not_a_number),
        cmocka_unit_test(test_strict_numbers),
        cmocka_unit_test(test_exponents_of_two_digits),
        cmocka_unit_test(test_infinite_and_nan),
        cmocka_unit_test(test_comparisons_and_allclose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
