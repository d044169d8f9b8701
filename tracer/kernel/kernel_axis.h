// kernel_axis: kernels that run along one chosen axis of a tensor, and their derivatives:
// softmax and log-softmax along any axis, the running sum (cumsum), and each slice repeated in
// place (repeat_interleave). Each treats the tensor as lines along the axis, every line read
// with the step of that axis:
//
//     // out (2, 3) = softmax(x (2, 3)) along axis 0: each column sums to 1
//     kernel_softmax_axis(out, x, 0, KERNEL_SOFTMAX);
#pragma once

#include <stddef.h>

#include "tensor.h"

typedef enum KernelSoftmax {
    KERNEL_SOFTMAX,      // exp(x - max) / sum of exp(x - max)
    KERNEL_LOG_SOFTMAX,  // x - max - log(sum of exp(x - max)): the log of the softmax, without its rounding
} KernelSoftmax;

// Softmax or log-softmax along axis (0..rank-1) of x; out has x's shape. The line's max is
// subtracted first so exp() cannot overflow; a -inf entry gives an exact 0 (log: -inf), and a
// line that is all -inf gives nan, as numpy and PyTorch do.
void kernel_softmax_axis(Tensor *out, const Tensor *x, size_t axis, KernelSoftmax kind);
// The derivative: din (x's shape) += the share of dout through out = softmax(x) (or log-softmax)
// along axis. softmax: w (dout - sum(dout w)); log-softmax: dout - exp(out) sum(dout).
void kernel_grad_softmax_axis(Tensor *din, const Tensor *dout, const Tensor *out, size_t axis, KernelSoftmax kind);

// out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...] along axis, added in index order.
void kernel_cumsum(Tensor *out, const Tensor *x, size_t axis);
// din[..., k, ...] += dout[..., k, ...] + ... + dout[..., n-1, ...]: every later running sum holds x[k].
void kernel_grad_cumsum(Tensor *din, const Tensor *dout, size_t axis);

// out (..., n·r, ...) = x (..., n, ...) with slice i along axis repeated r times, each copy
// next to the last: out[..., i, ...] = x[..., i / r, ...] (PyTorch's repeat_interleave).
void kernel_repeat_interleave(Tensor *out, const Tensor *x, size_t axis, size_t r);
// din[..., j, ...] += the sum of dout[..., j·r + c, ...] over the r copies c.
void kernel_grad_repeat_interleave(Tensor *din, const Tensor *dout, size_t axis, size_t r);
