// parallel: chunks of a loop on pthreads, created per loop (a loop worth splitting runs for
// milliseconds; creating a thread costs microseconds).
#include "parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

static size_t chosen_threads;  // 0: one per online CPU

void parallel_set_threads(size_t threads) {
    chosen_threads = threads > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : threads;
}

size_t parallel_threads(void) {
    if (chosen_threads)
        return chosen_threads;
    // Asked once: glibc reads /sys for it on every call, and a backward pass's finite-difference
    // checks run tens of thousands of small kernels.
    static long online;
    if (!online)
        online = sysconf(_SC_NPROCESSORS_ONLN);
    return online < 1 ? 1 : online > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : (size_t)online;
}

typedef struct Chunk {
    ParallelFn *fn;
    void *ctx;
    size_t begin, end;
} Chunk;

static void *run_chunk(void *arg) {
    Chunk *c = arg;
    c->fn(c->ctx, c->begin, c->end);
    return NULL;
}

void parallel_for(size_t n, size_t min_items, ParallelFn *fn, void *ctx) {
    if (n == 0)
        return;
    if (n < 2 * min_items) {  // one chunk: the calling thread, without the bookkeeping
        fn(ctx, 0, n);
        return;
    }
    size_t threads = parallel_threads();
    size_t most = min_items ? n / min_items : n;
    if (threads > most)
        threads = most ? most : 1;
    Chunk chunks[PARALLEL_MAX_THREADS];
    pthread_t ids[PARALLEL_MAX_THREADS];
    bool started[PARALLEL_MAX_THREADS];
    for (size_t t = 0; t < threads; t++)
        chunks[t] = (Chunk){.fn = fn, .ctx = ctx, .begin = n / threads * t + (t < n % threads ? t : n % threads)};
    for (size_t t = 0; t < threads; t++)
        chunks[t].end = t + 1 < threads ? chunks[t + 1].begin : n;
    for (size_t t = 1; t < threads; t++)
        started[t] = pthread_create(&ids[t], NULL, run_chunk, &chunks[t]) == 0;
    run_chunk(&chunks[0]);
    for (size_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else
            run_chunk(&chunks[t]);  // no thread to be had: run its chunk here
    }
}
