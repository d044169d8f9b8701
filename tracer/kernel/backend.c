// backend: the reference product and loop, and the one pointer through which a fast layer
// replaces them.
#include "backend.h"

static const Backend *installed;

void backend_install(const Backend *b) {
    installed = b;
}

const Backend *backend_installed(void) {
    return installed;
}

void backend_reference_product(const BackendOutput *c, const BackendMatrix *a, const BackendMatrix *b,
                               const size_t batch[2], size_t n, size_t k, size_t m) {
    for (size_t i = 0; i < batch[0]; i++)
        for (size_t j = 0; j < batch[1]; j++) {
            // one product: c (n, m) = a (n, k) @ b (k, m)
            double *ce = c->data + i * c->batch_step[0] + j * c->batch_step[1];
            const double *ae = a->data + i * a->batch_step[0] + j * a->batch_step[1];
            const double *be = b->data + i * b->batch_step[0] + j * b->batch_step[1];
            for (size_t r = 0; r < n; r++)
                for (size_t col = 0; col < m; col++) {
                    double sum = 0.0;
                    for (size_t p = 0; p < k; p++)
                        sum += ae[r * a->row_step + p * a->col_step] * be[p * b->row_step + col * b->col_step];
                    ce[r * c->row_step + col] = sum;
                }
        }
}

void backend_product(const BackendOutput *c, const BackendMatrix *a, const BackendMatrix *b, const size_t batch[2],
                     size_t n, size_t k, size_t m) {
    if (installed && installed->product)
        installed->product(c, a, b, batch, n, k, m);
    else
        backend_reference_product(c, a, b, batch, n, k, m);
}

void backend_loop(size_t n, size_t min_items, BackendLoopFn *fn, void *ctx) {
    if (installed && installed->loop)
        installed->loop(n, min_items, fn, ctx);
    else
        fn(ctx, 0, n);
}

void backend_set_threads(size_t threads) {
    if (installed && installed->set_threads)
        installed->set_threads(threads);
}

BackendBlocks backend_blocks(size_t n) {
    size_t size = (n + BACKEND_MAX_BLOCKS - 1) / BACKEND_MAX_BLOCKS;
    if (size < BACKEND_BLOCK_MIN)
        size = BACKEND_BLOCK_MIN;
    return (BackendBlocks){.n = n, .count = (n + size - 1) / size, .size = size};
}

size_t backend_block_length(const BackendBlocks *blocks, size_t b) {
    size_t from = b * blocks->size;
    return blocks->n - from < blocks->size ? blocks->n - from : blocks->size;
}
