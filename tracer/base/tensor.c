// tensor: creation, copying and shape helpers for dense row-major tensors.
#include "tensor.h"

#include <stdio.h>
#include <string.h>

#include "format.h"
#include "util.h"

bool shape_size(const Shape *shape, size_t *size) {
    size_t n = 1;
    for (size_t i = 0; i < shape->rank; i++)
        if (!util_mul_size(n, shape->dim[i], &n))
            return false;
    *size = n;
    return true;
}

bool shape_equal(const Shape *a, const Shape *b) {
    if (a->rank != b->rank)
        return false;
    for (size_t i = 0; i < a->rank; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

void shape_format(const Shape *shape, char *buf, size_t cap) {
    ASSERT(shape->rank <= TENSOR_MAX_RANK);
    // written by hand, not by snprintf: a lesson formats a shape for every step it checks
    char text[2 + TENSOR_MAX_RANK * (20 + 2)];  // "[", 20 digits and ", " per dimension, "]"
    size_t used = 0;
    text[used++] = '[';
    for (size_t i = 0; i < shape->rank; i++) {
        if (i) {
            text[used++] = ',';
            text[used++] = ' ';
        }
        used += format_digits(shape->dim[i], 1, text + used);
    }
    text[used++] = ']';
    if (cap == 0)
        return;
    size_t keep = used < cap ? used : cap - 1;  // cut as snprintf cuts
    memcpy(buf, text, keep);
    buf[keep] = '\0';
}

void index_format(const size_t *idx, size_t rank, char *buf, size_t cap) {
    ASSERT(rank <= TENSOR_MAX_RANK);
    Shape place = {.rank = rank};
    for (size_t i = 0; i < rank; i++)
        place.dim[i] = idx[i];
    shape_format(&place, buf, cap);
}

static Tensor *tensor_alloc(const Shape *shape, bool with_data) {
    ASSERT(shape->rank <= TENSOR_MAX_RANK);
    size_t size;
    if (!shape_size(shape, &size))
        return NULL;
    Tensor *t = util_calloc(1, sizeof(Tensor));
    if (!t)
        return NULL;
    t->shape = *shape;
    t->size = size;
    if (with_data) {
        t->data = util_calloc(size ? size : 1, sizeof(double));
        if (!t->data) {
            util_free(t);
            return NULL;
        }
    }
    return t;
}

size_t shape_flatten(const Shape *s, const size_t *idx) {
    size_t f = 0;
    for (size_t i = 0; i < s->rank; i++)
        f = f * s->dim[i] + idx[i];
    return f;
}

void shape_unflatten(const Shape *s, size_t flat, size_t *idx) {
    for (size_t i = s->rank; i-- > 0;) {
        idx[i] = s->dim[i] ? flat % s->dim[i] : 0;
        flat = s->dim[i] ? flat / s->dim[i] : 0;
    }
}

Tensor *tensor_create(const Shape *shape) {
    return tensor_alloc(shape, true);
}

Tensor *tensor_create_shape_only(const Shape *shape) {
    return tensor_alloc(shape, false);
}

Tensor *tensor_copy(const Tensor *src) {
    Tensor *t = tensor_alloc(&src->shape, src->data != NULL);
    if (!t)
        return NULL;
    if (src->data)
        memcpy(t->data, src->data, src->size * sizeof(double));
    t->is_count = src->is_count;
    return t;
}

void tensor_destroy(Tensor *t) {
    if (!t)
        return;
    util_free(t->data);
    util_free(t);
}

void tensor_release_values(Tensor *t) {
    util_free(t->data);
    t->data = NULL;
    t->view = NULL;
}

Tensor *tensor_create_view(const Shape *shape, double *values, const size_t *step) {
    Tensor *t = tensor_alloc(shape, false);
    if (!t)
        return NULL;
    t->view = values;
    memcpy(t->step, step, shape->rank * sizeof(size_t));
    return t;
}

void tensor_steps(const Tensor *t, size_t *step) {
    if (t->view) {
        memcpy(step, t->step, t->shape.rank * sizeof(size_t));
        return;
    }
    size_t s = 1;
    for (size_t i = t->shape.rank; i-- > 0;) {
        step[i] = s;
        s *= t->shape.dim[i];
    }
}

Tensor *tensor_from_view(const Tensor *v) {
    Tensor *t = tensor_create(&v->shape);
    if (!t)
        return NULL;
    size_t idx[TENSOR_MAX_RANK];
    for (size_t k = 0; k < t->size; k++) {
        shape_unflatten(&v->shape, k, idx);
        size_t off = 0;
        for (size_t i = 0; i < v->shape.rank; i++)
            off += idx[i] * v->step[i];
        t->data[k] = v->view[off];
    }
    return t;
}

void shape_broadcast_index(const Shape *in, const Shape *out, const size_t *out_idx, size_t *idx) {
    size_t off = out->rank - in->rank;
    for (size_t i = 0; i < in->rank; i++)
        idx[i] = in->dim[i] == 1 ? 0 : out_idx[off + i];
}
