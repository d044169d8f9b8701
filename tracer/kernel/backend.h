// backend: the seam where a fast layer (tracer/fast/) may replace parts of the reference
// kernel, as ggml's CPU backend replaces its reference ops. The reference never depends on
// the fast layer: by default every matrix product is the plain loop below and every loop runs
// on the calling thread. A program that links the fast layer installs it once at start
// (fast_install in fast/fast.h); every replacement gives the same bits as the reference.
//
//     backend_product(&c, &a, &b, batch, n, k, m);   // the installed product, or the loop
//     backend_for(rows, 64, scale_rows, &args);       // chunks on threads, or one call
#pragma once

#include <stdbool.h>
#include <stddef.h>

// The most threads a fast layer may use (--threads).
#define BACKEND_MAX_THREADS 256
#define BACKEND_MAX_THREADS_TEXT "256"

// An operand: element (r, col) of batch entry b is data[off(b) + r * row_step + col * col_step],
// where off(b) walks up to two leading (batch) axes with their own steps (0 repeats an
// operand along a broadcast axis). A transposed matrix is the same data with the steps swapped.
typedef struct BackendMatrix {
    const double *data;
    size_t row_step, col_step;
    size_t batch_step[2];
} BackendMatrix;

// Where a product's values go: element (r, col) of batch entry (i, j) is
// data[i * batch_step[0] + j * batch_step[1] + r * row_step + col], a row's columns side by side.
typedef struct BackendOutput {
    double *data;
    size_t row_step;
    size_t batch_step[2];
} BackendOutput;

// fn(ctx, begin, end) computes items begin..end-1 of a loop, each exactly as it would alone.
typedef void BackendLoopFn(void *ctx, size_t begin, size_t end);

// What a fast layer replaces. Each field gives the same bits as the reference it replaces.
typedef struct Backend {
    const char *name;
    // c[i, j] = a[i, j] @ b[i, j] for every entry of a batch of batch[0] x batch[1] products
    // of (n, k) by (k, m), each element summed as backend_reference_product sums it.
    void (*product)(const BackendOutput *c, const BackendMatrix *a, const BackendMatrix *b,
                    const size_t batch[2], size_t n, size_t k, size_t m);
    // fn over chunks covering [0, n), at least min_items items in each. fn must not allocate
    // through util (its failure-injection hook counts, and its pool serves, one thread).
    void (*loop)(size_t n, size_t min_items, BackendLoopFn *fn, void *ctx);
    // How many threads the loops may use; 0: one per online CPU.
    void (*set_threads)(size_t threads);
} Backend;

// Use b from now on; NULL: the reference alone.
void backend_install(const Backend *b);
// The backend in use, NULL for the reference.
const Backend *backend_installed(void);

// The matrix product every fast one must match bit for bit: element (r, col) of each entry is
//
//     s = 0.0;  s = s + a[r][0] * b[0][col];  s = s + a[r][1] * b[1][col];  ...  up to k - 1
//
// a multiply rounded to double, then an add rounded to double, in increasing p, with no fused
// multiply-add (the build has -ffp-contract=off).
void backend_reference_product(const BackendOutput *c, const BackendMatrix *a, const BackendMatrix *b,
                               const size_t batch[2], size_t n, size_t k, size_t m);

// The installed product, or the reference.
void backend_product(const BackendOutput *c, const BackendMatrix *a, const BackendMatrix *b, const size_t batch[2],
                     size_t n, size_t k, size_t m);
// The installed loop, or fn(ctx, 0, n) on the calling thread.
void backend_loop(size_t n, size_t min_items, BackendLoopFn *fn, void *ctx);
// backend_loop, save that a loop too small for two chunks of min_items runs here and now,
// without asking the backend: every loop of a hand-sized lesson is one of these (its gradient
// checks run the forward kernels by the ten thousand), and each costs a direct call of fn.
static inline void backend_for(size_t n, size_t min_items, BackendLoopFn *fn, void *ctx) {
    if (n / 2 < min_items) {  // n < 2 * min_items, without overflow
        if (n)
            fn(ctx, 0, n);
    } else
        backend_loop(n, min_items, fn, ctx);
}
// Threads for the installed loops (the reference has one and ignores this).
void backend_set_threads(size_t threads);

// A loop over a tensor's values whose result is one per block of values, combined afterwards in
// any order (the largest magnitude, whether a nan is there): values 0..n-1 cut into at most
// BACKEND_MAX_BLOCKS blocks of at least BACKEND_BLOCK_MIN values (a thread's worth), block b
// holding values b * size up to min(n, (b + 1) * size) - 1. Its loop is backend_for(count, 1, ...).
#define BACKEND_MAX_BLOCKS 256
#define BACKEND_BLOCK_MIN ((size_t)1 << 15)
typedef struct BackendBlocks {
    size_t n, count, size;
} BackendBlocks;
BackendBlocks backend_blocks(size_t n);
// How many values block b holds: size, or fewer in the last.
size_t backend_block_length(const BackendBlocks *blocks, size_t b);
