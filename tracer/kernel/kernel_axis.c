// kernel_axis: softmax, log-softmax and cumsum along one chosen axis, and their derivatives.
#include "kernel_axis.h"

#include <math.h>

#include "kernel_private.h"

// A tensor of this shape seen as lines along axis: `outer` blocks before the axis, `n` values
// along it, `step` (the values after it) between two neighbours of a line.
typedef struct Lines {
    size_t outer, n, step;
} Lines;

static Lines lines_along(const Shape *s, size_t axis) {
    ASSERT(axis < s->rank);
    return (Lines){dims_product(s, 0, axis), s->dim[axis], dims_product(s, axis + 1, s->rank)};
}

// Where line number `line` (0 .. outer * step - 1) begins.
static size_t line_start(const Lines *l, size_t line) {
    return (line / l->step) * l->n * l->step + line % l->step;
}

// ---------------------------------------------------------------- softmax along an axis

// Calls line_fn on each line of x along axis and the same line of out (out has x's shape).
typedef void LineFn(const double *x, double *y, size_t n, size_t step, int how);

static void each_line(Tensor *out, const Tensor *x, size_t axis, LineFn *line_fn, int how) {
    expect_shape(out, &x->shape);
    expect_values(x);
    Lines l = lines_along(&x->shape, axis);
    for (size_t line = 0; line < l.outer * l.step; line++)
        line_fn(x->data + line_start(&l, line), out->data + line_start(&l, line), l.n, l.step, how);
}

static void softmax_line(const double *xs, double *ys, size_t n, size_t step, int how) {
    // subtract the line's max first so exp() cannot overflow; an all -inf line keeps
    // max = -inf and -inf - -inf = nan, which is numpy's answer too
    double max = -INFINITY;
    for (size_t j = 0; j < n; j++)
        if (xs[j * step] > max)
            max = xs[j * step];
    double sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        double t = xs[j * step] - max;
        double e = t == -INFINITY ? 0.0 : exp(t);  // exp(-inf) is an exact 0: a masked score costs nothing
        sum += e;
        ys[j * step] = how == KERNEL_SOFTMAX ? e : t;
    }
    double log_sum = log(sum);
    for (size_t j = 0; j < n; j++)
        ys[j * step] = how == KERNEL_SOFTMAX ? ys[j * step] / sum : ys[j * step] - log_sum;
}

void kernel_softmax_axis(Tensor *out, const Tensor *x, size_t axis, KernelSoftmax kind) {
    each_line(out, x, axis, softmax_line, (int)kind);
}

void kernel_grad_softmax_axis(Tensor *din, const Tensor *dout, const Tensor *out, size_t axis, KernelSoftmax kind) {
    expect_values(din);
    expect_values(dout);
    expect_values(out);
    ASSERT(shape_equal(&din->shape, &out->shape) && shape_equal(&dout->shape, &out->shape));
    Lines l = lines_along(&out->shape, axis);
    for (size_t line = 0; line < l.outer * l.step; line++) {
        size_t at = line_start(&l, line);
        const double *y = out->data + at, *g = dout->data + at;
        double *d = din->data + at;
        // softmax: the dot of the gradient with the weights; log-softmax: the gradient's sum
        double dot = 0.0;
        for (size_t j = 0; j < l.n; j++)
            dot += kind == KERNEL_SOFTMAX ? g[j * l.step] * y[j * l.step] : g[j * l.step];
        for (size_t j = 0; j < l.n; j++) {
            double w = y[j * l.step];
            d[j * l.step] += kind == KERNEL_SOFTMAX ? w * (g[j * l.step] - dot) : g[j * l.step] - exp(w) * dot;
        }
    }
}

// ---------------------------------------------------------------- running sums

static void cumsum_line(const double *xs, double *ys, size_t n, size_t step, int how) {
    (void)how;
    double sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        // the first value as it is: 0 + -0.0 would print as 0, where numpy keeps -0.0
        sum = j ? sum + xs[j * step] : xs[0];
        ys[j * step] = sum;
    }
}

void kernel_cumsum(Tensor *out, const Tensor *x, size_t axis) {
    each_line(out, x, axis, cumsum_line, 0);
}

void kernel_grad_cumsum(Tensor *din, const Tensor *dout, size_t axis) {
    expect_values(din);
    expect_values(dout);
    ASSERT(shape_equal(&din->shape, &dout->shape));
    Lines l = lines_along(&dout->shape, axis);
    for (size_t line = 0; line < l.outer * l.step; line++) {
        const double *g = dout->data + line_start(&l, line);
        double *d = din->data + line_start(&l, line);
        // from the end: x[k] is in every running sum from k on
        double sum = 0.0;
        for (size_t j = l.n; j-- > 0;) {
            sum += g[j * l.step];
            d[j * l.step] += sum;
        }
    }
}

// ---------------------------------------------------------------- repeating along an axis

// out (..., n·r, ...) = x (..., n, ...) with each slice along axis repeated r times in place:
// out[..., i, ...] = x[..., i / r, ...]
void kernel_repeat_interleave(Tensor *out, const Tensor *x, size_t axis, size_t r) {
    expect_values(out);
    expect_values(x);
    Lines l = lines_along(&x->shape, axis);
    ASSERT(out->size == x->size * r);
    for (size_t o = 0; o < l.outer; o++)
        for (size_t i = 0; i < l.n * r; i++)
            memcpy(out->data + (o * l.n * r + i) * l.step, x->data + (o * l.n + i / r) * l.step,
                   l.step * sizeof(double));
}

void kernel_grad_repeat_interleave(Tensor *din, const Tensor *dout, size_t axis, size_t r) {
    expect_values(din);
    expect_values(dout);
    Lines l = lines_along(&din->shape, axis);
    ASSERT(dout->size == din->size * r);
    // each copy's gradient goes back to the one slice it came from, added in the copies' order
    for (size_t o = 0; o < l.outer; o++)
        for (size_t i = 0; i < l.n * r; i++)
            for (size_t k = 0; k < l.step; k++)
                din->data[(o * l.n + i / r) * l.step + k] += dout->data[(o * l.n * r + i) * l.step + k];
}
