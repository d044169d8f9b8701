// tensor: a dense, row-major, contiguous block of doubles with a shape of rank 0 to 4.
// A scalar is a rank-0 tensor with one value. A shape-only tensor has a shape but no values
// (data == NULL): it lets a lesson reason about GPT-2-sized shapes without allocating them.
//
//     Shape s = {.rank = 2, .dim = {3, 4}};
//     Tensor *t = tensor_create(&s);     // zeros; NULL when out of memory
//     t->data[1 * 4 + 2] = 0.7;          // row 1, column 2
//     tensor_destroy(t);
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TENSOR_MAX_RANK 4
// The most values one tensor may hold: 2^28 doubles, 2 GiB. GPT-2 small's largest activation
// (n 1024 x 3072) is 3.1M values; its token embedding table (50257 x 768) is 38.6M; the
// attention scores of its 12 heads at n = 4096, [12, 4096, 4096], are 201M.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
// The fuzz build (-Dfuzz=true) explores the tracer's logic: a lesson that fills a 2 GiB tensor
// legitimately only makes each run slow, so there a tensor holds at most 2^14 values.
#define TENSOR_MAX_VALUES ((size_t)1 << 14)
#else
#define TENSOR_MAX_VALUES ((size_t)1 << 28)
#endif

typedef struct Shape {
    size_t rank;
    size_t dim[TENSOR_MAX_RANK];
} Shape;

// Doubles hold every whole number up to 2^53, and not all of them past it: a count is exact
// only below.
#define TENSOR_EXACT_COUNT 9007199254740992.0

typedef struct Tensor {
    Shape shape;
    size_t size;   // number of values: the product of the dims (1 for a scalar)
    double *data;  // size values, row-major; NULL for a shape-only tensor
    // An exact integer count (numel and sums of counts): printed as 124,439,808.
    bool is_count;
    // A view (data NULL): no values of its own, but another tensor's, in place. Element idx is
    // view[idx[0] * step[0] + ... + idx[rank - 1] * step[rank - 1]]. Only the fast layer makes
    // views, of stages nothing prints (fast/in_place.c), and only the matrix product reads or
    // writes one; the reference tracer never meets one.
    double *view;
    size_t step[TENSOR_MAX_RANK];
} Tensor;

// Labels of one axis: borrowed strings.
typedef struct Labels {
    const char *const *items;  // NULL: unlabelled
    size_t n;
} Labels;

// Product of the dims into *size; false when it overflows size_t.
bool shape_size(const Shape *shape, size_t *size);
bool shape_equal(const Shape *a, const Shape *b);
// "[3, 4]"; "[]" for a scalar. Writes at most cap bytes, always NUL-terminated.
void shape_format(const Shape *shape, char *buf, size_t cap);
// The place of one element, one index per axis, in the same form: "[1, 0]". Its longest,
// four 20-digit indices, fits in INDEX_TEXT_MAX bytes.
#define INDEX_TEXT_MAX 96
void index_format(const size_t *idx, size_t rank, char *buf, size_t cap);
// Row-major offset of the element at idx (one index per axis), and back.
size_t shape_flatten(const Shape *shape, const size_t *idx);
void shape_unflatten(const Shape *shape, size_t flat, size_t *idx);
// The index into a tensor of shape `in` that numpy broadcasting meets at out_idx of `out`.
void shape_broadcast_index(const Shape *in, const Shape *out, const size_t *out_idx, size_t *idx);

// Zero-filled tensor. NULL when out of memory; the caller has already checked the size.
Tensor *tensor_create(const Shape *shape);
Tensor *tensor_create_shape_only(const Shape *shape);
Tensor *tensor_copy(const Tensor *t);
void tensor_destroy(Tensor *t);  // accepts NULL
// Free t's values (or forget what it views) and keep its shape: t becomes shape-only.
void tensor_release_values(Tensor *t);
// A view of shape `shape` on values owned elsewhere, read with step (one per axis). NULL when
// out of memory.
Tensor *tensor_create_view(const Shape *shape, double *values, const size_t *step);
// The step of each axis of t: a view's own, or those of its row-major values.
void tensor_steps(const Tensor *t, size_t *step);
// A tensor of a view's shape holding the values it reads, row-major. NULL when out of memory.
Tensor *tensor_from_view(const Tensor *view);
