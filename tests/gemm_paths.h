// gemm_paths: a test case run on every matrix-product path this CPU has, at each of several
// thread counts, with the defaults restored after (test_gemm.c, test_grad_product.c). Include
// it after cmocka.h.
#pragma once

#include <stdio.h>

#include "gemm.h"
#include "parallel.h"

typedef void GemmPathCase(const char *what);

static inline void for_every_path_and_threads(const size_t *threads, size_t n_threads, GemmPathCase *f) {
    GemmPath best = gemm_path();
    for (int p = 0; p < GEMM_PATH_COUNT; p++) {
        if (!gemm_set_path((GemmPath)p)) {
            print_message("[  SKIPPED ] the %s path: this CPU cannot run it\n", gemm_path_name((GemmPath)p));
            continue;
        }
        for (size_t t = 0; t < n_threads; t++) {
            parallel_set_threads(threads[t]);
            char what[64];
            snprintf(what, sizeof(what), "%s path, %zu threads", gemm_path_name((GemmPath)p), threads[t]);
            f(what);
        }
    }
    gemm_set_path(best);
    parallel_set_threads(0);
}
