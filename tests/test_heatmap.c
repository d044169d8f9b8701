// Unit tests of the heatmap scales: colours worked out by hand from the stops in heatmap.c
// (ColorBrewer Blues and RdBu) by linear interpolation, one rounding per channel.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "heatmap.h"

#define assert_rgb(c, R, G, B) \
    do {                       \
        HeatRgb c_ = (c);      \
        assert_int_equal(c_.r, R); \
        assert_int_equal(c_.g, G); \
        assert_int_equal(c_.b, B); \
    } while (0)

static void test_weights_use_a_fixed_unit_range(void **state) {
    (void)state;
    // Near-uniform attention weights must look near-uniform: the range is [0, 1], not min..max.
    double w[] = {0.33, 0.34, 0.33};
    Heatmap h;
    heatmap_init(&h, w, 3);
    assert_int_equal(h.scale, HEAT_SEQUENTIAL);
    assert_true(h.lo == 0 && h.hi == 1);
    assert_rgb(heatmap_colour(&h, 0), 247, 251, 255);    // the first stop
    assert_rgb(heatmap_colour(&h, 0.5), 107, 174, 214);  // the middle stop exactly
    assert_rgb(heatmap_colour(&h, 1), 8, 48, 107);       // the last stop
    // 0.125 is half way between stops 0 and 1: 247 - 24.5 rounds away from zero to 223.
    assert_rgb(heatmap_colour(&h, 0.125), 223, 235, 247);
}

static void test_non_negative_values_scale_to_their_maximum(void **state) {
    (void)state;
    double v[] = {0, 4, 1};
    Heatmap h;
    heatmap_init(&h, v, 3);
    assert_int_equal(h.scale, HEAT_SEQUENTIAL);
    assert_true(h.lo == 0 && h.hi == 4);
    assert_true(heatmap_position(&h, 1) == 0.25);
}

static void test_signed_values_diverge_around_zero(void **state) {
    (void)state;
    // -inf (a causal mask) and nan do not set the range; the largest |finite value| does.
    double v[] = {-2, 1, NAN, -INFINITY};
    Heatmap h;
    heatmap_init(&h, v, 4);
    assert_int_equal(h.scale, HEAT_DIVERGING);
    assert_true(h.lo == -2 && h.hi == 2);
    assert_rgb(heatmap_colour(&h, 0), 247, 247, 247);         // white at 0
    assert_rgb(heatmap_colour(&h, 1), 244, 165, 130);         // three quarters along
    assert_rgb(heatmap_colour(&h, -INFINITY), 33, 102, 172);  // clamped to the blue end
    assert_rgb(heatmap_colour(&h, NAN), 160, 160, 160);       // nan is grey
    assert_true(heatmap_position(&h, NAN) == -1);
}

static void test_no_finite_value_has_no_scale(void **state) {
    (void)state;
    double v[] = {INFINITY, NAN};
    Heatmap h;
    heatmap_init(&h, v, 2);
    assert_int_equal(h.scale, HEAT_NONE);
    assert_true(heatmap_position(&h, 1) == -1);
    heatmap_init(&h, v, 0);
    assert_int_equal(h.scale, HEAT_NONE);
}

static void test_one_valued_ranges(void **state) {
    (void)state;
    double zeros[] = {0, 0};
    Heatmap h;
    heatmap_init(&h, zeros, 2);  // in [0, 1]: the unit range
    assert_true(heatmap_position(&h, 0) == 0);
    double twos[] = {2, 2};
    heatmap_init(&h, twos, 2);  // [0, 2]
    assert_true(heatmap_position(&h, 2) == 1);
    h = (Heatmap){.scale = HEAT_DIVERGING, .lo = 0, .hi = 0};  // all zeros, signed by hand
    assert_true(heatmap_position(&h, 0) == 0.5);
    h = (Heatmap){.scale = HEAT_SEQUENTIAL, .lo = 0, .hi = 0};
    assert_true(heatmap_position(&h, 0) == 0);
}

// A range wider than the largest double ([-1e308, 1e308] spans 2e308, which overflows) still
// puts every value on the scale: the ends take the end stops, zero the middle, infinities clamp.
static void test_range_past_the_largest_double(void **state) {
    (void)state;
    double v[] = {1e308, -1e308, 0};
    Heatmap h;
    heatmap_init(&h, v, 3);
    assert_int_equal(h.scale, HEAT_DIVERGING);
    assert_true(heatmap_position(&h, 1e308) == 1 && heatmap_position(&h, -1e308) == 0);
    assert_true(heatmap_position(&h, 0) == 0.5 && heatmap_position(&h, 5e307) == 0.75);
    assert_true(heatmap_position(&h, INFINITY) == 1 && heatmap_position(&h, -INFINITY) == 0);
    assert_rgb(heatmap_colour(&h, 1e308), 178, 24, 43);
    assert_rgb(heatmap_colour(&h, -1e308), 33, 102, 172);
    assert_rgb(heatmap_colour(&h, 0), 247, 247, 247);
    assert_int_equal(heatmap_shade_level(&h, 1e308), HEATMAP_SHADES - 1);
    assert_int_equal(heatmap_shade_level(&h, 0), 0);
}

static void test_ink_contrasts_with_the_background(void **state) {
    (void)state;
    assert_rgb(heatmap_ink((HeatRgb){247, 251, 255}), 0, 0, 0);  // light: black text
    // 2126*8 + 7152*48 + 722*107 = 437,558, well below the 1,400,000 threshold: white text.
    assert_rgb(heatmap_ink((HeatRgb){8, 48, 107}), 255, 255, 255);
}

static void test_xterm256_nearest(void **state) {
    (void)state;
    assert_int_equal(heatmap_xterm256((HeatRgb){255, 255, 255}), 231);  // cube white
    assert_int_equal(heatmap_xterm256((HeatRgb){0, 0, 0}), 16);         // cube black
    // 128 grey: the ramp has 8 + 10*12 = 128 exactly (244); the cube's nearest is 135 (102).
    assert_int_equal(heatmap_xterm256((HeatRgb){128, 128, 128}), 244);
    // Pure-ish red: levels 255, 0, 0 -> 16 + 36*5 = 196.
    assert_int_equal(heatmap_xterm256((HeatRgb){250, 10, 5}), 196);
}

static void test_shades(void **state) {
    (void)state;
    Heatmap seq = {.scale = HEAT_SEQUENTIAL, .lo = 0, .hi = 1};
    assert_int_equal(heatmap_shade_level(&seq, 0.19), 0);
    assert_int_equal(heatmap_shade_level(&seq, 0.5), 2);
    assert_int_equal(heatmap_shade_level(&seq, 1), 4);
    Heatmap div = {.scale = HEAT_DIVERGING, .lo = -2, .hi = 2};
    assert_int_equal(heatmap_shade_level(&div, -2), 4);  // |v| = max
    assert_int_equal(heatmap_shade_level(&div, 0), 0);
    assert_int_equal(heatmap_shade_level(&div, 1), 2);  // |v| / max = 0.5
    assert_int_equal(heatmap_shade_level(&div, NAN), 0);
    assert_string_equal(heatmap_shade(0), " ");
    assert_string_equal(heatmap_shade(4), "\u2588");
    assert_string_equal(heatmap_shade(9), "\u2588");
    assert_string_equal(heatmap_shade(-1), " ");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_use_a_fixed_unit_range),
        cmocka_unit_test(test_non_negative_values_scale_to_their_maximum),
        cmocka_unit_test(test_signed_values_diverge_around_zero),
        cmocka_unit_test(test_no_finite_value_has_no_scale),
        cmocka_unit_test(test_one_valued_ranges),
        cmocka_unit_test(test_range_past_the_largest_double),
        cmocka_unit_test(test_ink_contrasts_with_the_background),
        cmocka_unit_test(test_xterm256_nearest),
        cmocka_unit_test(test_shades),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
