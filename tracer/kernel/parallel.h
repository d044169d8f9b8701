// parallel: a loop of independent items split among threads (--threads), for the kernels.
// Each item is computed exactly as it would be alone, so the thread count never changes a bit;
// only which thread computes it.
//
//     static void scale_rows(void *ctx, size_t begin, size_t end) { ... rows begin..end-1 ... }
//     parallel_for(rows, 64, scale_rows, &args);   // threads only when each gets 64 rows
#pragma once

#include <stddef.h>

// The most threads a loop uses.
#define PARALLEL_MAX_THREADS 256
#define PARALLEL_MAX_THREADS_TEXT "256"

typedef void ParallelFn(void *ctx, size_t begin, size_t end);

// Threads for the loops that follow; 0 means one per online CPU (the default).
void parallel_set_threads(size_t threads);
size_t parallel_threads(void);
// fn(ctx, begin, end) over contiguous chunks covering [0, n), one chunk per thread, with at
// least min_items items in each (so small loops stay on the calling thread). fn must not
// allocate through util (its failure-injection hook counts, and its pool serves, one thread).
void parallel_for(size_t n, size_t min_items, ParallelFn *fn, void *ctx);
