// Unit tests of the fast layer's reader of weight files (fast/widen.c): float32 runs widened
// and scanned for NaNs a run at a time must give the reference's values, bit for bit, and the
// same first NaN, for every start and length (runs shorter and longer than a block, a NaN in
// each place of a block), and leave every other tensor to the reference.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "npy_bytes.h"
#include "weightfile.h"
#include "widen.h"

#define VALUES 300  // more than four blocks of 64, and a part of one

// A safetensors file of one tensor `name` of dtype, shape [VALUES], holding data.
static size_t safetensors(unsigned char *out, const char *dtype, const void *data, size_t bytes) {
    char header[128];
    int h = snprintf(header, sizeof(header),
                     "{\"x\": {\"dtype\": \"%s\", \"shape\": [%d], \"data_offsets\": [0, %zu]}}", dtype, VALUES,
                     bytes);
    uint64_t len = (uint64_t)h;
    memcpy(out, &len, 8);  // little-endian, as on the machines the tracer runs on
    memcpy(out + 8, header, (size_t)h);
    memcpy(out + 8 + h, data, bytes);
    return 8 + (size_t)h + bytes;
}

// Values that reach every kind of float32: zeros of both signs, the smallest subnormal and
// the largest, the smallest and largest normal, infinities, and ordinary numbers.
static void fill(float *v) {
    const uint32_t kinds[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u,
                              0x7F7FFFFFu, 0xFF800000u, 0x7F800000u, 0x3DCCCCCDu, 0xC0490FDBu};
    for (size_t i = 0; i < VALUES; i++) {
        uint32_t bits = i < 10 ? kinds[i] : (uint32_t)(0x3F800000u + i * 7919u);
        memcpy(&v[i], &bits, sizeof(bits));
    }
}

static void parse_as(WeightFile *f, WeightFormat format, const unsigned char *b, size_t len) {
    char problem[WEIGHT_PROBLEM_MAX];
    *f = (WeightFile){.arena = arena_create()};
    assert_true(weight_parse(f, format, b, len, problem, sizeof(problem)));
}

static void parse(WeightFile *f, const unsigned char *b, size_t len) {
    parse_as(f, WEIGHT_SAFETENSORS, b, len);
}

// Every run [first, first + n) widened and scanned by the reference and by the fast reader.
static void same_on_every_run(const WeightFile *f) {
    const WeightTensor *t = f->format == WEIGHT_NPY ? &f->tensors[0] : weight_find(f, "x");
    assert_non_null(t);
    static double plain[VALUES], fast[VALUES];
    const size_t starts[] = {0, 1, 3, 63, 64, 65, 200};
    const size_t lengths[] = {0, 1, 2, 63, 64, 65, 129, 235};
    for (size_t s = 0; s < sizeof(starts) / sizeof(*starts); s++)
        for (size_t l = 0; l < sizeof(lengths) / sizeof(*lengths); l++) {
            size_t first = starts[s], n = lengths[l];
            if (first + n > VALUES)
                continue;
            weight_install_reader(NULL);
            size_t plain_nan, fast_nan;
            assert_int_equal(weight_widen(f, t, first, n, plain), 0);
            assert_int_equal(weight_find_unfit(f, t, first, n, &plain_nan), 0);
            widen_install();
            memset(fast, 0, sizeof(fast));
            assert_int_equal(weight_widen(f, t, first, n, fast), 0);
            assert_int_equal(weight_find_unfit(f, t, first, n, &fast_nan), 0);
            if (memcmp(plain, fast, n * sizeof(double)) != 0 || plain_nan != fast_nan)
                fail_msg("values %zu to %zu: widened alike %d, first NaN %zu and %zu", first, first + n,
                         memcmp(plain, fast, n * sizeof(double)) == 0, plain_nan, fast_nan);
        }
    weight_install_reader(NULL);
}

static void test_float32_runs(void **state) {
    (void)state;
    static float v[VALUES];
    static unsigned char file[VALUES * 4 + 256];
    fill(v);
    WeightFile f;
    parse(&f, file, safetensors(file, "F32", v, sizeof(v)));
    same_on_every_run(&f);
    // the values are the floats themselves
    static double out[VALUES];
    widen_install();
    assert_int_equal(weight_widen(&f, weight_find(&f, "x"), 0, VALUES, out), 0);
    weight_install_reader(NULL);
    for (size_t i = 0; i < VALUES; i++)
        assert_memory_equal(&out[i], &(double){v[i]}, sizeof(double));
    arena_destroy(f.arena);
}

// A NaN, quiet or signalling, of either sign, in each place of a block and past the blocks.
static void test_nan_in_every_place(void **state) {
    (void)state;
    const uint32_t nans[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFFFFFFFFu};
    const size_t places[] = {0, 1, 31, 63, 64, 100, 127, 128, 255, 256, 299};
    static float v[VALUES];
    static unsigned char file[VALUES * 4 + 256];
    for (size_t k = 0; k < sizeof(nans) / sizeof(*nans); k++)
        for (size_t p = 0; p < sizeof(places) / sizeof(*places); p++) {
            fill(v);
            memcpy(&v[places[p]], &nans[k], sizeof(nans[k]));
            if (p % 2)  // a second NaN after the first: the first is the one found
                memcpy(&v[VALUES - 1], &nans[k], sizeof(nans[k]));
            WeightFile f;
            parse(&f, file, safetensors(file, "F32", v, sizeof(v)));
            same_on_every_run(&f);
            widen_install();
            size_t at;
            assert_int_equal(weight_find_unfit(&f, weight_find(&f, "x"), 0, VALUES, &at), 0);
            assert_int_equal(at, places[p]);
            weight_install_reader(NULL);
            arena_destroy(f.arena);
        }
}

// Other dtypes are the reference's to read: the fast reader declines them.
static void test_other_dtypes(void **state) {
    (void)state;
    static uint16_t halves[VALUES];
    static double doubles[VALUES];
    for (size_t i = 0; i < VALUES; i++) {
        halves[i] = (uint16_t)(0x3C00u + i);
        doubles[i] = (double)i / 3;
    }
    halves[77] = 0x7E00u;  // a NaN
    static unsigned char file[VALUES * 8 + 256];
    WeightFile f;
    parse(&f, file, safetensors(file, "F16", halves, sizeof(halves)));
    same_on_every_run(&f);
    arena_destroy(f.arena);
    parse(&f, file, safetensors(file, "BF16", halves, sizeof(halves)));
    same_on_every_run(&f);
    arena_destroy(f.arena);
    parse(&f, file, safetensors(file, "F64", doubles, sizeof(doubles)));
    same_on_every_run(&f);
    arena_destroy(f.arena);
}

// Float32 stored in the other byte order, or with the first axis fastest (Fortran order), is
// the reference's to read too.
static void test_other_layouts(void **state) {
    (void)state;
    static float v[VALUES];
    static unsigned char swapped[VALUES * 4], file[VALUES * 4 + 256];
    fill(v);
    for (size_t i = 0; i < sizeof(swapped); i++)
        swapped[i] = ((const unsigned char *)v)[i / 4 * 4 + 3 - i % 4];
    WeightFile f;
    parse_as(&f, WEIGHT_NPY, file,
             npy(file, "{'descr': '>f4', 'fortran_order': False, 'shape': (300,), }         \n", swapped,
                 sizeof(swapped)));
    same_on_every_run(&f);
    arena_destroy(f.arena);
    parse_as(&f, WEIGHT_NPY, file,
             npy(file, "{'descr': '<f4', 'fortran_order': True, 'shape': (20, 15), }        \n", v, sizeof(v)));
    same_on_every_run(&f);
    arena_destroy(f.arena);
    // one axis in Fortran order is stored as in C order: the fast reader takes it
    parse_as(&f, WEIGHT_NPY, file,
             npy(file, "{'descr': '<f4', 'fortran_order': True, 'shape': (300,), }          \n", v, sizeof(v)));
    same_on_every_run(&f);
    arena_destroy(f.arena);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32_runs),
        cmocka_unit_test(test_nan_in_every_place),
        cmocka_unit_test(test_other_dtypes),
        cmocka_unit_test(test_other_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
