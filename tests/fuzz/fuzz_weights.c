// fuzz_weights: libFuzzer target for the readers of weight files: the .npy header, the
// .safetensors header (JSON, offsets, dtypes and shapes) and JSON itself. The first byte of an
// input chooses the reader; the rest is the file. A header that parses is then widened value by
// value, so that an offset the checks let through reads outside the bytes under ASan.
//
//     build-fuzz/tests/fuzz/fuzz_weights -max_len=4096 build-fuzz/weights-corpus tests/fuzz/weights_seeds
//
// Seeds are in tests/fuzz/weights_seeds/ (replayed by meson test, as findings are); a finding
// goes there too.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "weightfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    // A copy of exactly the file's length, so that a read one byte past it is a finding.
    size_t len = size - 1;
    unsigned char *bytes = util_malloc(len ? len : 1);
    Arena *arena = arena_create();
    if (!bytes || !arena)
        goto done;
    memcpy(bytes, data + 1, len);
    char problem[WEIGHT_PROBLEM_MAX];
    switch (data[0] % 3) {
    case 0:
    case 1: {
        WeightFile f = {.arena = arena};
        if (!weight_parse(&f, data[0] % 3 ? WEIGHT_SAFETENSORS : WEIGHT_NPY, bytes, len, problem,
                          sizeof(problem)))
            break;
        for (size_t i = 0; i < f.n_tensors; i++) {
            const WeightTensor *t = &f.tensors[i];
            if (t->dtype == WEIGHT_UNSUPPORTED || t->count > 4096)
                continue;
            double out[4096];
            size_t at;
            weight_widen(&f, t, 0, t->count, out);
            weight_find_unfit(&f, t, 0, t->count, &at);
        }
        break;
    }
    default: {
        size_t at;
        json_parse(arena, (const char *)bytes, len, problem, sizeof(problem), &at);
        break;
    }
    }
done:
    arena_destroy(arena);
    util_free(bytes);
    return 0;
}
