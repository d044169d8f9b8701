// cmocka_double: assert_double_equal for cmocka before 1.2, which only has
// assert_float_equal (it rounds both sides to float). Include after <cmocka.h>.
#pragma once

#include <math.h>

#ifndef assert_double_equal
static inline void cmocka_double_equal(double a, double b, double eps, const char *file, int line) {
    if (a == b || fabs(a - b) <= eps)
        return;
    print_error("%.17g != %.17g (difference %.3g, eps %.3g)\n", a, b, fabs(a - b), eps);
    _fail(file, line);
}
#define assert_double_equal(a, b, eps) cmocka_double_equal((a), (b), (eps), __FILE__, __LINE__)
#endif
