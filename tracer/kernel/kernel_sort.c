// kernel_sort: rows in order and their k largest, by one total order (see kernel_sort.h).
#include "kernel_sort.h"

#include <stdlib.h>

#include "kernel_private.h"

typedef struct Ranked {
    double value;
    size_t position;
} Ranked;

// nan above every number, as numpy sorts it; equal values by position, so the order is total
// and qsort (not stable by itself) gives the same order everywhere.
static int ascending(const void *pa, const void *pb) {
    const Ranked *a = pa, *b = pb;
    bool na = isnan(a->value), nb = isnan(b->value);
    if (na != nb)
        return na ? 1 : -1;
    if (!na && a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return a->position < b->position ? -1 : a->position > b->position;
}

// Larger first; of equal values (or two nan) the earlier position first, as for ascending.
static int descending(const void *pa, const void *pb) {
    const Ranked *a = pa, *b = pb;
    bool na = isnan(a->value), nb = isnan(b->value);
    if (na != nb)
        return na ? -1 : 1;
    if (!na && a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return a->position < b->position ? -1 : a->position > b->position;
}

static bool largest_first(KernelSort kind) {
    return kind == KERNEL_TOPK || kind == KERNEL_ARGTOPK;
}

// Row r of x ranked into `ranked` (n entries).
static void rank_row(Ranked *ranked, const Tensor *x, size_t r, size_t n, KernelSort kind) {
    for (size_t j = 0; j < n; j++)
        ranked[j] = (Ranked){x->data[r * n + j], j};
    qsort(ranked, n, sizeof(Ranked), largest_first(kind) ? descending : ascending);
}

// Calls visit for the first k of each row of x (n values) in the order: row r, rank j, the value
// ranked there. False when memory runs out.
typedef void Visit(void *ctx, size_t r, size_t j, const Ranked *ranked);

static bool each_ranked(const Tensor *x, KernelSort kind, size_t k, Visit *visit, void *ctx) {
    size_t n = last_dim(&x->shape), rows = row_count(x);
    Ranked *ranked = util_calloc(n ? n : 1, sizeof(Ranked));
    if (!ranked)
        return false;
    for (size_t r = 0; r < rows; r++) {
        rank_row(ranked, x, r, n, kind);
        for (size_t j = 0; j < k; j++)
            visit(ctx, r, j, &ranked[j]);
    }
    util_free(ranked);
    return true;
}

typedef struct SortJob {
    Tensor *out;
    const Tensor *dout;
    KernelSort kind;
    size_t n, k;
} SortJob;

static void put_ranked(void *ctx, size_t r, size_t j, const Ranked *ranked) {
    const SortJob *job = ctx;
    bool values = job->kind == KERNEL_SORT || job->kind == KERNEL_TOPK;
    job->out->data[r * job->k + j] = values ? ranked->value : (double)ranked->position;
}

static void send_back(void *ctx, size_t r, size_t j, const Ranked *ranked) {
    const SortJob *job = ctx;
    job->out->data[r * job->n + ranked->position] += job->dout->data[r * job->k + j];
}

bool kernel_sort(Tensor *out, const Tensor *x, KernelSort kind, size_t k) {
    expect_values(out);
    expect_values(x);
    ASSERT(k <= last_dim(&x->shape) && out->size == row_count(x) * k);
    SortJob job = {.out = out, .kind = kind, .k = k};
    return each_ranked(x, kind, k, put_ranked, &job);
}

bool kernel_grad_sort(Tensor *din, const Tensor *dout, const Tensor *x, KernelSort kind, size_t k) {
    expect_values(din);
    expect_values(dout);
    expect_values(x);
    ASSERT(shape_equal(&din->shape, &x->shape) && dout->size == row_count(x) * k);
    SortJob job = {.out = din, .dout = dout, .kind = kind, .n = last_dim(&x->shape), .k = k};
    return each_ranked(x, kind, k, send_back, &job);
}
