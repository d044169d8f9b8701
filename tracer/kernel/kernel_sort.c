// kernel_sort: rows in order and their k largest, by one total order (see kernel_sort.h).
#include "kernel_sort.h"

#include <math.h>
#include <string.h>

#include "kernel_private.h"

typedef struct Ranked {
    double value;
    size_t position;
} Ranked;

// Whether a ranks above b: nan above every number, as numpy sorts it (last when smallest
// first, first when largest first), and of two numbers the larger. Of equal values, or two nan,
// neither is above the other.
static bool above(double a, double b) {
    return isnan(a) ? !isnan(b) : !isnan(b) && a > b;
}

static bool largest_first(KernelSort kind) {
    return kind == KERNEL_TOPK || kind == KERNEL_ARGTOPK;
}

// Whether a goes strictly before b in the order of the kind.
static bool goes_before(const Ranked *a, const Ranked *b, bool largest) {
    return largest ? above(a->value, b->value) : above(b->value, a->value);
}

// Row r of x ranked into `ranked` (n entries), with `tmp` (n more): a merge sort, bottom up and
// stable, so that equal values keep the order of their positions. The order is total, and the
// same on every machine, without the C library's qsort.
static void rank_row(Ranked *ranked, Ranked *tmp, const Tensor *x, size_t r, size_t n, KernelSort kind) {
    bool largest = largest_first(kind);
    for (size_t j = 0; j < n; j++)
        ranked[j] = (Ranked){x->data[r * n + j], j};
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = n - lo > width ? lo + width : n, hi = n - mid > width ? mid + width : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = goes_before(&ranked[j], &ranked[i], largest) ? ranked[j++] : ranked[i++];
            while (i < mid)
                tmp[o++] = ranked[i++];
            while (j < hi)
                tmp[o++] = ranked[j++];
        }
        memcpy(ranked, tmp, n * sizeof(Ranked));
    }
}

// Calls visit for the first k of each row of x (n values) in the order: row r, rank j, the value
// ranked there. False when memory runs out.
typedef void Visit(void *ctx, size_t r, size_t j, const Ranked *ranked);

static bool each_ranked(const Tensor *x, KernelSort kind, size_t k, Visit *visit, void *ctx) {
    size_t n = last_dim(&x->shape), rows = row_count(x);
    Ranked *ranked = util_calloc(2 * (n ? n : 1), sizeof(Ranked));
    if (!ranked)
        return false;
    for (size_t r = 0; r < rows; r++) {
        rank_row(ranked, ranked + n, x, r, n, kind);
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
