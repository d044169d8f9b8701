// fast: the fast layer's entry in the seam (backend.h).
#include "fast.h"

#include "backend.h"
#include "gemm.h"
#include "parallel.h"
#include "pool.h"

static const Backend fast_backend = {
    .name = "fast",
    .product = gemm_batched_to,
    .loop = parallel_for,
    .set_threads = parallel_set_threads,
};

void fast_install(void) {
    pool_install();
    backend_install(&fast_backend);
}
