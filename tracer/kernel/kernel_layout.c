// kernel_layout: the kernels that move values without computing new ones: indexing,
// reshaping, concatenation, and the split and merge of attention heads (see kernel.h for the
// contract of every function).
#include "kernel.h"

#include <string.h>

#include "kernel_private.h"
#include "util.h"

// ---------------------------------------------------------------- indexing and reshaping

static bool axis_index_fits(const KernelAxisIndex *ix, size_t dim) {
    if (ix->kind == KERNEL_INDEX_RANGE && ix->start > ix->stop)
        return false;
    AxisPick p = axis_pick(ix, dim);
    for (size_t k = 0; k < p.count; k++)
        if (axis_pick_at(&p, k) >= dim)
            return false;
    return true;
}

size_t kernel_index_list_axis(const KernelAxisIndex *index, size_t n_index) {
    size_t out = 0;
    for (size_t i = 0; i < n_index; i++) {
        if (index[i].kind == KERNEL_INDEX_LIST)
            return list_moves_first(index, n_index) ? 0 : out;
        out += index[i].kind != KERNEL_INDEX_AT;
    }
    return KERNEL_NO_AXIS;
}

bool kernel_index_shape(const Shape *a, const KernelAxisIndex *index, size_t n_index,
                        Shape *out) {
    if (n_index > KERNEL_MAX_INDEX)
        return false;
    size_t dim[KERNEL_MAX_INDEX + TENSOR_MAX_RANK];
    size_t rank = 0, axis = 0, lists = 0;
    for (size_t i = 0; i < n_index; i++) {
        if (index[i].kind == KERNEL_INDEX_NEW) {
            dim[rank++] = 1;
            continue;
        }
        if (axis == a->rank || !axis_index_fits(&index[i], a->dim[axis]))
            return false;
        lists += index[i].kind == KERNEL_INDEX_LIST;
        if (index[i].kind != KERNEL_INDEX_AT)
            dim[rank++] = axis_pick(&index[i], a->dim[axis]).count;
        axis++;
    }
    while (axis < a->rank)
        dim[rank++] = a->dim[axis++];
    if (lists > 1 || rank > TENSOR_MAX_RANK)
        return false;
    Shape s = {.rank = rank};
    memcpy(s.dim, dim, rank * sizeof(size_t));
    size_t moved = kernel_index_list_axis(index, n_index);
    if (moved == 0 && list_moves_first(index, n_index)) {
        // the LIST's entries come first; find where its axis would have stood
        size_t at = 0;
        for (size_t i = 0; index[i].kind != KERNEL_INDEX_LIST; i++)
            at += index[i].kind != KERNEL_INDEX_AT;
        size_t n = s.dim[at];
        memmove(s.dim + 1, s.dim, at * sizeof(size_t));
        s.dim[0] = n;
    }
    *out = s;
    return true;
}

// Copies the part of src selected on axes axis.. (row-major) to dst; returns the end written.
// tail[i] is the number of values in one entry of axis i - 1 (the product of dims i..).
static double *index_copy(double *dst, const double *src, const Shape *s, const size_t *tail,
                          const KernelAxisIndex *index, size_t n_index, size_t axis) {
    if (axis == n_index) {
        // the remaining axes are all ":": one contiguous block
        memcpy(dst, src, tail[axis] * sizeof(double));
        return dst + tail[axis];
    }
    AxisPick pick = axis_pick(&index[axis], s->dim[axis]);
    for (size_t k = 0; k < pick.count; k++) {
        const double *part = src + axis_pick_at(&pick, k) * tail[axis + 1];
        dst = index_copy(dst, part, s, tail, index, n_index, axis + 1);
    }
    return dst;
}

// out = a[index[0], index[1], ...] with ":" for the axes not named
void kernel_index(Tensor *out, const Tensor *a, const KernelAxisIndex *index, size_t n_index) {
    Shape s;
    ASSERT(kernel_index_shape(&a->shape, index, n_index, &s));
    expect_shape(out, &s);
    expect_values(a);
    size_t tail[TENSOR_MAX_RANK + 1];
    KernelAxisIndex own[TENSOR_MAX_RANK];
    size_t n_own, list = index_own_axes(&a->shape, index, n_index, tail, own, &n_own);
    double *end = out->data;
    if (list != KERNEL_NO_AXIS && list_moves_first(index, n_index)) {
        // numpy's order: for each gathered entry in turn, everything else it selects
        const KernelAxisIndex gather = own[list];
        for (size_t k = 0; k < gather.n_list; k++) {
            own[list] = (KernelAxisIndex){.kind = KERNEL_INDEX_AT, .start = gather.list[k]};
            end = index_copy(end, a->data, &a->shape, tail, own, n_own, 0);
        }
    } else {
        end = index_copy(end, a->data, &a->shape, tail, own, n_own, 0);
    }
    ASSERT(end == out->data + out->size);
}

KernelReshape kernel_reshape_shape(const Shape *a, const long long *dims, size_t n, Shape *out) {
    if (n > TENSOR_MAX_RANK)
        return KERNEL_RESHAPE_TOO_MANY_AXES;
    size_t size = 1, unknown = n;
    bool zero = false;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < -1)
            return KERNEL_RESHAPE_NEGATIVE;
        if (dims[i] == -1) {
            if (unknown != n)
                return KERNEL_RESHAPE_TWO_UNKNOWN;
            unknown = i;
            continue;
        }
        zero = zero || dims[i] == 0;
        if (!util_mul_size(size, (size_t)dims[i], &size))
            return KERNEL_RESHAPE_SIZE_DIFFERS;
    }
    Shape s = {.rank = n};
    for (size_t i = 0; i < n; i++)
        s.dim[i] = dims[i] < 0 ? 0 : (size_t)dims[i];
    if (unknown != n) {
        if (zero)
            return KERNEL_RESHAPE_UNKNOWN_OF_ZERO;
        // the known sizes are each 1 or more (no 0, no negative): size is too
        size_t total;
        if (!shape_size(a, &total) || total % size != 0)
            return KERNEL_RESHAPE_SIZE_DIFFERS;
        s.dim[unknown] = total / size;
        size = total;
    }
    size_t total;
    if (!shape_size(a, &total) || total != size)
        return KERNEL_RESHAPE_SIZE_DIFFERS;
    *out = s;
    return KERNEL_RESHAPE_OK;
}

void kernel_reshape(Tensor *out, const Tensor *a) {
    ASSERT(out->size == a->size);
    expect_values(a);
    ASSERT(out->data);
    if (a->size)
        memcpy(out->data, a->data, a->size * sizeof(double));
}

// Adds one more part to the concatenation shape s; false when it does not fit.
static bool concat_add(Shape *s, const Shape *part, size_t axis) {
    if (part->rank != s->rank)
        return false;
    for (size_t i = 0; i < s->rank; i++)
        if (i != axis && part->dim[i] != s->dim[i])
            return false;
    s->dim[axis] += part->dim[axis];
    return true;
}

bool kernel_concat_shape(const Shape *const *parts, size_t n, size_t axis, Shape *out) {
    if (n == 0 || axis >= parts[0]->rank)
        return false;
    Shape s = *parts[0];
    for (size_t p = 1; p < n; p++)
        if (!concat_add(&s, parts[p], axis))
            return false;
    *out = s;
    return true;
}

// out (..., d_0 + d_1 + ..., ...) = the parts (..., d_p, ...) side by side along axis
void kernel_concat(Tensor *out, const Tensor *const *parts, size_t n, size_t axis) {
    ASSERT(n > 0 && axis < parts[0]->shape.rank);
    Shape s = parts[0]->shape;
    expect_values(parts[0]);
    for (size_t p = 1; p < n; p++) {
        expect_values(parts[p]);
        ASSERT(concat_add(&s, &parts[p]->shape, axis));
    }
    expect_shape(out, &s);
    // every part is (outer, its own block) and out is (outer, the blocks one after another)
    size_t outer = dims_product(&s, 0, axis);
    double *dst = out->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t p = 0; p < n; p++) {
            size_t block = dims_product(&parts[p]->shape, axis, s.rank);
            memcpy(dst, parts[p]->data + o * block, block * sizeof(double));
            dst += block;
        }
}

bool kernel_split_heads_shape(const Shape *x, size_t heads, Shape *out) {
    if (x->rank < 2 || x->rank + 1 > TENSOR_MAX_RANK || heads == 0 ||
        x->dim[x->rank - 1] % heads != 0)
        return false;
    Shape s = *x;
    size_t n = x->dim[x->rank - 2], d = x->dim[x->rank - 1];
    s.dim[s.rank - 2] = heads;
    s.dim[s.rank - 1] = n;
    s.dim[s.rank++] = d / heads;
    *out = s;
    return true;
}

bool kernel_merge_heads_shape(const Shape *x, Shape *out) {
    if (x->rank < 3)
        return false;
    Shape s = *x;
    size_t heads = x->dim[x->rank - 3], n = x->dim[x->rank - 2], d_head = x->dim[x->rank - 1];
    s.rank--;
    s.dim[s.rank - 2] = n;
    s.dim[s.rank - 1] = heads * d_head;
    *out = s;
    return true;
}

// Moves rows between merged (..., n, heads * d_head) and split (..., heads, n, d_head) layouts:
// row i, head h of the merged layout is columns h * d_head .. (h + 1) * d_head - 1.
static void move_heads(double *merged, double *split, size_t batch, size_t heads, size_t n,
                       size_t d_head, bool to_split) {
    size_t d = heads * d_head;
    for (size_t b = 0; b < batch; b++)
        for (size_t h = 0; h < heads; h++)
            for (size_t i = 0; i < n; i++) {
                double *m = merged + (b * n + i) * d + h * d_head;
                double *s = split + ((b * heads + h) * n + i) * d_head;
                memcpy(to_split ? s : m, to_split ? m : s, d_head * sizeof(double));
            }
}

// out (..., heads, n, d / heads) = x (..., n, d)
void kernel_split_heads(Tensor *out, const Tensor *x, size_t heads) {
    Shape s;
    ASSERT(kernel_split_heads_shape(&x->shape, heads, &s));
    expect_shape(out, &s);
    expect_values(x);
    size_t n = s.dim[s.rank - 2], d_head = s.dim[s.rank - 1];
    size_t batch = dims_product(&s, 0, s.rank - 3);
    move_heads(x->data, out->data, batch, heads, n, d_head, true);
}

// out (..., n, heads * d_head) = x (..., heads, n, d_head)
void kernel_merge_heads(Tensor *out, const Tensor *x) {
    Shape s;
    ASSERT(kernel_merge_heads_shape(&x->shape, &s));
    expect_shape(out, &s);
    expect_values(x);
    const Shape *xs = &x->shape;
    size_t heads = xs->dim[xs->rank - 3], n = xs->dim[xs->rank - 2];
    size_t d_head = xs->dim[xs->rank - 1], batch = dims_product(xs, 0, xs->rank - 3);
    move_heads(out->data, x->data, batch, heads, n, d_head, false);
}

// out [a.dim[axes[0]], ...] = a, axis k of out being axis axes[k] of a: each value of out, in
// reading order, read from where it lies in a.
void kernel_permute(Tensor *out, const Tensor *a, const size_t *axes) {
    expect_values(a);
    Shape s = {.rank = a->shape.rank};
    for (size_t k = 0; k < s.rank; k++)
        s.dim[k] = a->shape.dim[axes[k]];
    expect_shape(out, &s);
    size_t idx[TENSOR_MAX_RANK];
    for (size_t i = 0; i < out->size; i++) {
        shape_unflatten(&s, i, idx);
        out->data[i] = a->data[permuted_offset(&a->shape, axes, idx)];
    }
}

// out (idx's shape) = table.flat[idx]
void kernel_take(Tensor *out, const Tensor *table, const Tensor *idx) {
    expect_shape(out, &idx->shape);
    expect_values(table);
    expect_values(idx);
    for (size_t i = 0; i < idx->size; i++)
        out->data[i] = table->data[index_value(idx->data[i], table->size)];
}

bool kernel_take_along_axis_shape(const Shape *x, const Shape *idx, size_t axis, Shape *out) {
    if (x->rank != idx->rank || axis >= x->rank)
        return false;
    *out = *idx;
    for (size_t k = 0; k < x->rank; k++) {
        if (k == axis || x->dim[k] == idx->dim[k] || x->dim[k] == 1)
            continue;
        if (idx->dim[k] != 1)
            return false;
        out->dim[k] = x->dim[k];
    }
    return true;
}

// out (x and idx broadcast, idx's size along axis) = x picked along axis by idx
void kernel_take_along_axis(Tensor *out, const Tensor *x, const Tensor *idx, size_t axis) {
    expect_values(x);
    expect_values(idx);
    Shape s;
    ASSERT(kernel_take_along_axis_shape(&x->shape, &idx->shape, axis, &s));
    expect_shape(out, &s);
    for (size_t i = 0; i < out->size; i++)
        out->data[i] = x->data[along_axis_offset(&x->shape, idx, &s, axis, i)];
}
