// widen: float32 values of a weight file, widened to double and scanned for NaNs a run at a
// time: GPT-2's 124 million weights are read once for NaNs and once to be widened, and the
// reference reads each value through its dtype and byte order, one at a time.
#include "widen.h"

#include <string.h>

// A run of float32 values stored as this machine stores them, one after the other in C order:
// the reference reads any other tensor.
static bool takes(const WeightTensor *t) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return t->dtype == WEIGHT_F32 && !t->big_endian && (!t->fortran || t->rank < 2);
#else
    (void)t;
    return false;
#endif
}

// float to double is exact, as in the reference's widen_f32.
static bool widen_f32_run(const WeightTensor *t, const unsigned char *p, size_t n, double *out) {
    if (!takes(t))
        return false;
    for (size_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, p + i * sizeof(float), sizeof(x));
        out[i] = x;
    }
    return true;
}

// A float32 is a NaN when its exponent bits are all ones and its fraction is not zero.
static bool is_nan_bits(uint32_t bits) {
    return (bits & 0x7FFFFFFFu) > 0x7F800000u;
}

// Blocks of values without a branch in them (the compiler's vector loop), then the block with
// a NaN, if any, value by value for the first.
#define WIDEN_BLOCK 64

static bool find_nan_f32_run(const WeightTensor *t, const unsigned char *p, size_t n, size_t *at) {
    if (!takes(t))
        return false;
    size_t i = 0;
    for (; i + WIDEN_BLOCK <= n; i += WIDEN_BLOCK) {
        unsigned any = 0;
        for (size_t k = 0; k < WIDEN_BLOCK; k++) {
            uint32_t bits;
            memcpy(&bits, p + (i + k) * sizeof(bits), sizeof(bits));
            any |= is_nan_bits(bits);
        }
        if (any)
            break;
    }
    for (; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, p + i * sizeof(bits), sizeof(bits));
        if (is_nan_bits(bits)) {
            *at = i;
            return true;
        }
    }
    *at = SIZE_MAX;
    return true;
}

static const WeightReader reader = {.widen = widen_f32_run, .find_unfit = find_nan_f32_run};

void widen_install(void) {
    weight_install_reader(&reader);
}
