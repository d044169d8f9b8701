// same_bits: what the fast layer's tests share to compare a fast path with the reference bit
// for bit: operands whose products round in every way, and the comparison itself. Include
// after <cmocka.h>.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tensor.h"
#include "util.h"

// splitmix64, for operands whose products round in every way (mixed magnitudes and signs).
static uint64_t same_bits_rng = 42;
static inline double next_value(void) {
    uint64_t z = (same_bits_rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    double u = (double)(z >> 11) * 0x1p-53;
    // one value in 64 is a large one, so that sums cancel and round differently by order
    return (z & 63) == 0 ? (u - 0.5) * 1e12 : (u - 0.5) * (double)(1 + (z & 7));
}

static inline double *random_values(size_t n) {
    double *v = util_malloc((n ? n : 1) * sizeof(double));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = next_value();
    return v;
}

static inline Tensor *random_tensor(Shape s) {
    Tensor *t = tensor_create(&s);
    assert_non_null(t);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = next_value();
    return t;
}

// Bit for bit, printing the first differing elements and how many there are.
static inline void assert_same_bits(const double *got, const double *want, size_t n, const char *what) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&got[i], &want[i], sizeof(double)) == 0 || (isnan(got[i]) && isnan(want[i])))
            continue;
        if (bad < 4)
            print_error("%s: element %zu is %.17g, the reference loop gives %.17g\n", what, i, got[i], want[i]);
        bad++;
    }
    if (bad) {
        print_error("%s: %zu of %zu elements differ\n", what, bad, n);
        fail();
    }
}
