// kernel_private: helpers the forward kernels (kernel.c) and their derivatives
// (kernel_grad.c) share: row and block sizes, shape expectations, the broadcasting walk, the
// matrix view of a matmul operand and the positions an index selects. Not for use outside the
// kernel.
#pragma once

#include <float.h>
#include <math.h>
#include <string.h>

#include "kernel.h"
#include "tensor.h"
#include "util.h"

// Not M_PI: strict C11 does not define it. The double nearest to pi, as Python's math.pi.
static const double PI = 3.14159265358979323846;

// Work below this many values stays on one thread (a thread costs microseconds to start).
#define KERNEL_THREAD_MIN_VALUES ((size_t)1 << 15)

// Items of `per_item` values each that make one thread's minimum share (backend_for).
static inline size_t min_items(size_t per_item) {
    return per_item >= KERNEL_THREAD_MIN_VALUES ? 1 : KERNEL_THREAD_MIN_VALUES / (per_item ? per_item : 1);
}

static inline size_t last_dim(const Shape *s) {
    return s->rank ? s->dim[s->rank - 1] : 1;
}

// How many rows of the last axis a tensor holds (rank 0 counts as one row of one value).
static inline size_t row_count(const Tensor *t) {
    size_t d = last_dim(&t->shape);
    return d ? t->size / d : 0;
}

// s->dim[from] * ... * s->dim[to - 1]: the number of values in a block of axes.
static inline size_t dims_product(const Shape *s, size_t from, size_t to) {
    size_t n = 1;
    for (size_t i = from; i < to; i++)
        n *= s->dim[i];
    return n;
}

static inline void expect_values(const Tensor *t) {
    ASSERT(t->data != NULL);
}

// out must exist with values and have exactly the shape the kernel computes.
static inline void expect_shape(const Tensor *out, const Shape *shape) {
    expect_values(out);
    ASSERT(shape_equal(&out->shape, shape));
}

// A gamma or beta of a normalisation: a scalar, or one value per feature.
static inline void expect_param(const Tensor *p, size_t d) {
    expect_values(p);
    ASSERT(p->shape.rank == 0 || (p->shape.rank == 1 && p->shape.dim[0] == d));
}

static inline double param_at(const Tensor *p, size_t j) {
    return p->data[p->shape.rank == 0 ? 0 : j];
}

// What layernorm and batchnorm both check; gives the features d (last axis) and the rows.
static inline void expect_norm(const Tensor *out, const Tensor *x, const Tensor *gamma,
                        const Tensor *beta, size_t *d, size_t *rows) {
    expect_shape(out, &x->shape);
    expect_values(x);
    *d = last_dim(&x->shape);
    *rows = row_count(x);
    expect_param(gamma, *d);
    expect_param(beta, *d);
}

// The offset in a of the element at out_idx of a's transpose by axes (numpy's transpose(a,
// axes)): axis k of the result is axis axes[k] of a.
static inline size_t permuted_offset(const Shape *a, const size_t *axes, const size_t *out_idx) {
    size_t step[TENSOR_MAX_RANK], offset = 0, s = 1;
    for (size_t k = a->rank; k-- > 0;) {
        step[k] = s;
        s *= a->dim[k];
    }
    for (size_t k = 0; k < a->rank; k++)
        offset += out_idx[k] * step[axes[k]];
    return offset;
}

// An index held in a double (a token id, a class): an exact integer below limit.
static inline size_t index_value(double v, size_t limit) {
    ASSERT(v >= 0 && v < (double)limit && v == floor(v));
    return (size_t)v;
}

// The offset in x of element `flat` of take_along_axis(x, idx, axis), of shape out: along axis
// the index idx holds there (broadcast; a negative one counts from the end, as numpy's), and
// elsewhere out's position (0 where x has size 1, broadcast).
static inline size_t along_axis_offset(const Shape *x, const Tensor *idx, const Shape *out, size_t axis,
                                       size_t flat) {
    size_t at[TENSOR_MAX_RANK], in_idx[TENSOR_MAX_RANK], in_x[TENSOR_MAX_RANK];
    shape_unflatten(out, flat, at);
    shape_broadcast_index(&idx->shape, out, at, in_idx);
    double v = idx->data[shape_flatten(&idx->shape, in_idx)];
    shape_broadcast_index(x, out, at, in_x);
    in_x[axis] = index_value(v < 0 ? v + (double)x->dim[axis] : v, x->dim[axis]);
    return shape_flatten(x, in_x);
}

// The sum of x[0], x[step], ..., x[(n - 1) * step], each times scale (1 for the values as
// they are: x * 1 is x, bit for bit), added in that order.
static inline double line_sum(const double *x, size_t n, size_t step, double scale) {
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i * step] * scale;
    return sum;
}

// Their L2 norm, sqrt(x[0]^2 + x[step]^2 + ...), the squares added in that order. The line is
// read scaled so that its largest magnitude lies in [1, 2): a power of two changes no bit of a
// square, a sum or a root, but keeps 1e300 from squaring to inf and 1e-300 to 0, so the norm
// of [1e300, 1e300] is 1.4142e300. A line with inf or nan is read as it is (inf, or nan). The
// norm is root / scale / more: for a line of subnormal numbers (largest below 2^-1022) the scale
// 2^1074 is past the largest double, so it is applied as two factors (each product exact).
typedef struct LineNorm {
    double root;         // sqrt of the sum of the scaled squares
    double scale, more;  // the two factors (more is 1 but for a line of subnormals)
} LineNorm;

static inline LineNorm line_norm_parts(const double *x, size_t n, size_t step) {
    double max = 0.0;
    bool finite = true;
    for (size_t i = 0; i < n; i++) {
        finite = finite && isfinite(x[i * step]);
        max = fmax(max, fabs(x[i * step]));
    }
    int e = finite && max > 0.0 ? -ilogb(max) : 0;
    const int most = 1000;  // a power of two well within a double's range
    LineNorm l = {.scale = ldexp(1.0, e > most ? most : e), .more = ldexp(1.0, e > most ? e - most : 0)};
    double sq = 0.0;
    for (size_t i = 0; i < n; i++)
        sq += (x[i * step] * l.scale * l.more) * (x[i * step] * l.scale * l.more);
    l.root = sqrt(sq);
    return l;
}

static inline double line_norm(const double *x, size_t n, size_t step) {
    LineNorm l = line_norm_parts(x, n, step);
    return l.root / l.scale / l.more;
}

// Their population variance (divide by n) around their mean, in a second pass rather than as
// E[x^2] - E[x]^2, which cancels catastrophically when the mean is large.
static inline double line_var(const double *x, size_t n, size_t step, double scale, double mean) {
    double sq = 0.0;
    for (size_t i = 0; i < n; i++)
        sq += (x[i * step] * scale - mean) * (x[i * step] * scale - mean);
    return sq / (double)n;
}

// What a normalisation needs of one line of n values (x, x[step], ...): its mean (0 when not
// centred, as RMSNorm), sd = sqrt(variance around it + eps), and the scale the line was read
// at. Values past about 1e154 square to inf, and a sum of large values can overflow, though
// every value is finite: such a line would normalise to zeros or nan, which are not its
// answer. It is read scaled by a power of two instead (exact, and a normalisation does not
// change when its line is scaled, but for eps, which scales with it), so x[j] * scale,
// less mean, over sd is the normalised value. Every other line has scale 1, whose products
// are the values themselves, bit for bit.
typedef struct LineStats {
    double mean, sd, scale;
} LineStats;

static inline LineStats line_stats_at(const double *x, size_t n, size_t step, bool centre, double eps,
                                      double scale) {
    LineStats s = {.scale = scale};
    s.mean = centre ? line_sum(x, n, step, scale) / (double)n : 0.0;
    // eps scales with the line; kept above 0 when that underflows, so that a constant line
    // still divides 0 by something positive.
    double scaled_eps = eps > 0.0 ? fmax(eps * scale * scale, DBL_TRUE_MIN) : eps;
    s.sd = sqrt(line_var(x, n, step, scale, s.mean) + scaled_eps);
    return s;
}

// The line read scaled so that its largest value lies in [1, 2); unscaled when a value is inf
// or nan (its answer is nan, as numpy's) or every value is 0.
static inline LineStats line_stats_scaled(const double *x, size_t n, size_t step, bool centre, double eps) {
    double max = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i * step]))
            return line_stats_at(x, n, step, centre, eps, 1.0);
        max = fmax(max, fabs(x[i * step]));
    }
    return line_stats_at(x, n, step, centre, eps, max > 0.0 ? ldexp(1.0, -ilogb(max)) : 1.0);
}

static inline LineStats line_stats(const double *x, size_t n, size_t step, bool centre, double eps) {
    LineStats s = line_stats_at(x, n, step, centre, eps, 1.0);
    return isfinite(s.mean) && !isinf(s.sd) ? s : line_stats_scaled(x, n, step, centre, eps);
}

// Walks an output shape in row-major order, keeping the offsets of the matching elements of
// two inputs that broadcast to it: a stride of 0 repeats an input along that axis.
typedef struct Walk {
    size_t rank;
    size_t dim[TENSOR_MAX_RANK];
    size_t idx[TENSOR_MAX_RANK];
    size_t stride[2][TENSOR_MAX_RANK];
    size_t off[2];
} Walk;

// The strides of `in` seen through the broadcast shape `out` (trailing axes aligned).
static inline void broadcast_strides(size_t *stride, const Shape *in, const Shape *out) {
    ASSERT(in->rank <= out->rank);
    size_t shift = out->rank - in->rank;
    size_t step = 1;
    for (size_t i = out->rank; i-- > 0;) {
        stride[i] = 0;
        if (i < shift)
            continue;
        size_t d = in->dim[i - shift];
        ASSERT(d == out->dim[i] || d == 1);
        if (d != 1)
            stride[i] = step;
        step *= d;
    }
}

static inline void walk_init(Walk *w, const Shape *out, const Shape *a, const Shape *b) {
    memset(w, 0, sizeof(*w));
    w->rank = out->rank;
    memcpy(w->dim, out->dim, sizeof(w->dim));
    broadcast_strides(w->stride[0], a, out);
    broadcast_strides(w->stride[1], b, out);
}

// Jump to element `flat` of the walked axes.
static inline void walk_seek(Walk *w, size_t flat) {
    w->off[0] = w->off[1] = 0;
    for (size_t i = w->rank; i-- > 0;) {
        w->idx[i] = flat % w->dim[i];
        flat /= w->dim[i];
        w->off[0] += w->idx[i] * w->stride[0][i];
        w->off[1] += w->idx[i] * w->stride[1][i];
    }
}

static inline void walk_next(Walk *w) {
    for (size_t i = w->rank; i-- > 0;) {
        w->idx[i]++;
        w->off[0] += w->stride[0][i];
        w->off[1] += w->stride[1][i];
        if (w->idx[i] < w->dim[i])
            return;
        w->off[0] -= w->stride[0][i] * w->dim[i];
        w->off[1] -= w->stride[1][i] * w->dim[i];
        w->idx[i] = 0;
    }
}

// The offsets in three inputs broadcast to out's shape of each element of out, in row-major
// order: calls visit(ctx, i, o0, o1, o2) for each element i (where, clip and their derivatives).
void walk3(const Shape *out, const Shape *s0, const Shape *s1, const Shape *s2,
           void (*visit)(void *ctx, size_t i, size_t o0, size_t o1, size_t o2), void *ctx);

// The matrix view of a matmul operand: its leading (batch) axes and its last two dims, with a
// vector read as a row (left operand) or a column (right operand).
typedef struct MatView {
    Shape batch;
    size_t rows, cols;
} MatView;

static inline MatView mat_view(const Shape *s, bool left) {
    MatView v = {.batch = {.rank = s->rank >= 2 ? s->rank - 2 : 0}};
    memcpy(v.batch.dim, s->dim, v.batch.rank * sizeof(size_t));
    if (s->rank == 1) {
        v.rows = left ? 1 : s->dim[0];
        v.cols = left ? s->dim[0] : 1;
    } else if (s->rank >= 2) {
        v.rows = s->dim[s->rank - 2];
        v.cols = s->dim[s->rank - 1];
    }
    return v;
}

// The positions one axis index selects: count of them, the k-th being list[k] for a LIST and
// first + k otherwise.
typedef struct AxisPick {
    size_t first, count;
    const size_t *list;
} AxisPick;

static inline AxisPick axis_pick(const KernelAxisIndex *ix, size_t dim) {
    switch (ix->kind) {
    case KERNEL_INDEX_ALL:
        return (AxisPick){.first = 0, .count = dim};
    case KERNEL_INDEX_AT:
        return (AxisPick){.first = ix->start, .count = 1};
    case KERNEL_INDEX_RANGE:
        return (AxisPick){.first = ix->start, .count = ix->stop - ix->start};
    case KERNEL_INDEX_LIST:
        return (AxisPick){.count = ix->n_list, .list = ix->list};
    case KERNEL_INDEX_NEW:
        break;
    }
    ASSERT(!"no axis to pick from");
    return (AxisPick){0};
}

static inline size_t axis_pick_at(const AxisPick *p, size_t k) {
    return p->list ? p->list[k] : p->first + k;
}

// Which of x[0], x[step], ..., x[(n - 1) * step] (n > 0) a max (or min) picks: the first nan,
// as in numpy; otherwise the first extreme value (ties: the lowest index).
static inline size_t line_extreme(const double *x, size_t n, size_t step, bool min) {
    size_t best = 0;
    for (size_t i = 1; i < n && !isnan(x[best * step]); i++) {
        double v = x[i * step], b = x[best * step];
        if (isnan(v) || (min ? v < b : v > b))
            best = i;
    }
    return best;
}

// out (..., n, d) += x (..., n, d) with each pair (2i, 2i + 1) of row r turned by the angle
// positions (n) [r] * base^(-2i/d), or back by it (back: the transpose of the rotation, which
// is RoPE's derivative). Leading axes (heads) share the positions.
static inline void rope_turn(Tensor *out, const Tensor *x, const Tensor *positions, double base, bool back) {
    expect_values(positions);
    ASSERT(x->shape.rank >= 2 && shape_equal(&out->shape, &x->shape));
    size_t n = x->shape.dim[x->shape.rank - 2], d = x->shape.dim[x->shape.rank - 1];
    ASSERT(d % 2 == 0 && positions->size == n);
    size_t rows = row_count(x);
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x->data + r * d;
        double *y = out->data + r * d;
        for (size_t i = 0; i < d / 2; i++) {
            double angle = positions->data[r % n] * pow(base, -(double)(2 * i) / (double)d);
            double c = cos(angle), s = back ? -sin(angle) : sin(angle);
            double x0 = xr[2 * i], x1 = xr[2 * i + 1];
            y[2 * i] += x0 * c - x1 * s;
            y[2 * i + 1] += x0 * s + x1 * c;
        }
    }
}

// sum of exp(x[j] - max) over a row of v values, and its max: the stable parts of a
// log-sum-exp (no exp() can overflow).
static inline double row_exp_sum(const double *x, size_t v, double *max) {
    *max = -INFINITY;
    for (size_t j = 0; j < v; j++)
        if (x[j] > *max)
            *max = x[j];
    double sum = 0.0;
    for (size_t j = 0; j < v; j++)
        sum += exp(x[j] - *max);
    return sum;
}

// Does numpy's rule move the LIST's axis first: a ":", range or new axis stands between two
// advanced items (the LIST and the whole numbers beside it)?
static inline bool list_moves_first(const KernelAxisIndex *index, size_t n_index) {
    size_t first = n_index, last = 0, lists = 0;
    for (size_t i = 0; i < n_index; i++) {
        if (index[i].kind != KERNEL_INDEX_AT && index[i].kind != KERNEL_INDEX_LIST)
            continue;
        lists += index[i].kind == KERNEL_INDEX_LIST;
        first = i < first ? i : first;
        last = i;
    }
    if (lists == 0)
        return false;
    for (size_t i = first; i < last; i++)
        if (index[i].kind != KERNEL_INDEX_AT && index[i].kind != KERNEL_INDEX_LIST)
            return true;
    return false;
}

// What indexing a tensor of shape s reads: tail[i] is the number of values in one entry of
// axis i - 1 (the product of dims i..), and own the index items of the tensor's own axes (a
// new axis has size 1 and moves no value). Returns which of them is the LIST, or KERNEL_NO_AXIS.
static inline size_t index_own_axes(const Shape *s, const KernelAxisIndex *index, size_t n_index, size_t *tail,
                                    KernelAxisIndex *own, size_t *n_own) {
    tail[s->rank] = 1;
    for (size_t i = s->rank; i-- > 0;)
        tail[i] = tail[i + 1] * s->dim[i];
    size_t list = KERNEL_NO_AXIS;
    *n_own = 0;
    for (size_t i = 0; i < n_index; i++) {
        if (index[i].kind == KERNEL_INDEX_NEW)
            continue;
        if (index[i].kind == KERNEL_INDEX_LIST)
            list = *n_own;
        own[(*n_own)++] = index[i];
    }
    return list;
}
