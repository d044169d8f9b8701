// kernel_grad: the derivatives of the kernel's operations, as vector-Jacobian products for
// reverse-mode differentiation. Like kernel.h, it knows nothing about YAML, names or printing.
//
// For an operation out = f(a, b, ...) and the gradient of a scalar loss with respect to out
// (dout, out's shape), each function ADDS the gradient with respect to one input to din (that
// input's shape): din += dout . d out / d input. Adding rather than writing lets an input used
// several times (X in X @ W_Q, X @ W_K and X + attn) gather every use into one tensor: the
// caller zeroes din once, then adds each use in turn. Sums run in index order, as in kernel.c.
//
//     Tensor *dA = tensor_create(&a->shape);             // zeros
//     kernel_grad_matmul(dA, 0, dC, a, b);               // dA (n, k) += dC (n, m) @ b^T (m, k)
#pragma once

#include <stddef.h>

#include "kernel.h"
#include "tensor.h"

// ---------------------------------------------------------------- elementwise

// out = a op b with broadcasting; input 0 is a, 1 is b. Where an input was broadcast (an axis of
// size 1 or missing, stretched), its gradient is the sum over the copies it made.
// power: d/da = b a^(b-1); d/db = a^b log(a), taken as 0 where a = 0 and b >= 0 (as PyTorch).
void kernel_grad_binary(Tensor *din, size_t input, const Tensor *dout, const Tensor *a,
                        const Tensor *b, KernelBinary op);
// out = op(x): din += dout * op'(x). abs'(0) = 0 and relu'(0) = 0, as PyTorch takes them.
// gelu' is the derivative of the tanh form itself, not of the exact erf GELU.
// where(cond, a, b): input 1 (a) or 2 (b) gets dout where cond picks it.
void kernel_grad_where(Tensor *din, size_t input, const Tensor *dout, const Tensor *cond, const Tensor *a,
                       const Tensor *b);
// clip(x, lo, hi): each of the three gets dout where it is the result (PyTorch's clamp).
void kernel_grad_clip(Tensor *din, size_t input, const Tensor *dout, const Tensor *x, const Tensor *lo,
                      const Tensor *hi);
void kernel_grad_unary(Tensor *din, const Tensor *dout, const Tensor *x, KernelUnary op);

// ---------------------------------------------------------------- matrix product

// out = a @ b as kernel_matmul (batched, vectors as rows or columns). Input 0:
// da (..., n, k) += dout (..., n, m) @ b^T; input 1: db (..., k, m) += a^T @ dout, each summed
// over the batch entries a broadcast operand served.
void kernel_grad_matmul(Tensor *din, size_t input, const Tensor *dout, const Tensor *a, const Tensor *b);
// out (..., m, n) = a (..., n, m): da += dout swapped back.
void kernel_grad_transpose(Tensor *din, const Tensor *dout);
// out = a with its axes in the order axes (kernel_permute): da += dout with its axes put back.
void kernel_grad_permute(Tensor *din, const Tensor *dout, const size_t *axes);

// ---------------------------------------------------------------- rows

// out = softmax(x) per row, w = out: dx_j += w_j (dout_j - sum_i dout_i w_i). A position the
// softmax gave an exact 0 (a -inf score, masked) receives exactly 0.
void kernel_grad_softmax(Tensor *din, const Tensor *dout, const Tensor *out);
// out = layernorm(x, gamma, beta, eps). With xhat = (x - mean) / sd, sd = sqrt(var + eps) and
// g = dout * gamma, per row of d features:
//   input 0: dx_j += (g_j - mean(g) - xhat_j mean(g xhat)) / sd
//   input 1: dgamma_j += sum over rows of dout_j xhat_j (one sum for a scalar gamma)
//   input 2: dbeta_j += sum over rows of dout_j
void kernel_grad_layernorm(Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                           const Tensor *gamma, double eps);
// out = rmsnorm(x, gamma, eps). With rms = sqrt(mean(x^2) + eps) and g = dout * gamma, per row
// of d features:
//   input 0: dx_j += g_j / rms - x_j mean(g x) / rms^3
//   input 1: dgamma_j += sum over rows of dout_j x_j / rms (one sum for a scalar gamma)
void kernel_grad_rmsnorm(Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                         const Tensor *gamma, double eps);
// The same for batchnorm, with the mean and variance of each feature over the rows.
void kernel_grad_batchnorm(Tensor *din, size_t input, const Tensor *dout, const Tensor *x,
                           const Tensor *gamma, double eps);

// ---------------------------------------------------------------- reductions

// out = reduce(x, axis) (kept or dropped axis, the same values). sum: each x gets dout; mean:
// dout / n; var: dout 2 (x - mean) / n; max and min: all of dout goes to the first extreme
// value of each line (ties: the first, the one kernel_reduce picked). argmax has no derivative.
void kernel_grad_reduce(Tensor *din, const Tensor *dout, const Tensor *x, int axis, KernelReduce op);

// ---------------------------------------------------------------- indexing and reshaping

// out = x[index]: scatter-add, dx[picked] += dout; an index listed twice receives twice.
void kernel_grad_index(Tensor *din, const Tensor *dout, const KernelAxisIndex *index, size_t n_index);
// out = take(table, idx): dtable.flat[idx[i]] += dout[i] (repeated indices add up).
void kernel_grad_take(Tensor *din, const Tensor *dout, const Tensor *idx);
// out = take_along_axis(x, idx, axis): dx[where out[i] was read] += dout[i] (repeated picks add up).
void kernel_grad_take_along_axis(Tensor *din, const Tensor *dout, const Tensor *idx, size_t axis);
// out = concat(parts, axis): a part += its own block of dout, which starts at position offset
// of the axis (the sizes of the parts before it, added up).
void kernel_grad_concat(Tensor *din, size_t offset, const Tensor *dout, size_t axis);
// out = split_heads(x): dx += merge_heads(dout); out = merge_heads(x): dx += split_heads(dout).
void kernel_grad_split_heads(Tensor *din, const Tensor *dout);
void kernel_grad_merge_heads(Tensor *din, const Tensor *dout);
// out = rope(x, positions, base): every pair is turned back by its angle, since a rotation's
// transpose is its inverse. positions carry no gradient.
void kernel_grad_rope(Tensor *din, const Tensor *dout, const Tensor *positions, double base);

// ---------------------------------------------------------------- loss

// out = cross_entropy(logits, targets): dlogits[r, j] += dout[r] (softmax(logits[r])_j - [j = t_r]),
// the famous probs - onehot. targets carry no gradient.
void kernel_grad_cross_entropy(Tensor *din, const Tensor *dout, const Tensor *logits, const Tensor *targets);

// ---------------------------------------------------------------- plain copies

// din += dout, same shapes (copy, and any op whose derivative is the identity).
void kernel_grad_identity(Tensor *din, const Tensor *dout);
