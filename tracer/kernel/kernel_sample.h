// kernel_sample: what a sampler does to a next-token distribution, each last-axis row alone:
// nucleus (top-p) filtering, and the id drawn for a given uniform number (inverse CDF).
//
//     // kept (..., n) = probs' smallest set of largest values whose sum reaches 0.9, renormalised
//     kernel_top_p(kept, probs, 0.9);
//     // ids (...) = the id whose stretch of the cumulative sum holds u
//     kernel_sample(ids, kept, u);
#pragma once

#include <stdbool.h>

#include "tensor.h"

// out (..., n) from x (..., n), a row of probabilities (0 or more) each: the values ranked
// largest first (of equal values the earlier position first, kernel_sort.h's order) are kept
// while the sum of those ranked above is below p, so the kept set is the smallest whose sum
// reaches p; they are divided by their sum (added in rank order) and the rest set to 0.
// False when memory runs out.
bool kernel_top_p(Tensor *out, const Tensor *x, double p);
// din (..., n) += the derivative of top_p with the kept set held fixed: for a kept j,
// (dout[j] - sum over kept i of dout[i] out[i]) / S, S the kept sum; 0 for the rest.
// False when memory runs out.
bool kernel_grad_top_p(Tensor *din, const Tensor *dout, const Tensor *x, const Tensor *out, double p);

// out (...) from probs (..., n), n >= 1, whose rows have values 0 or more and a sum above 0, and
// u (a single number, or one per row) in [0, 1): the first id i whose cdf[i] > u, where
// cdf = cumsum(row) / sum(row), added in order (numpy's choice(n, p=row) for the same u: the
// id i with cdf[i - 1] <= u < cdf[i]; an id of probability 0 is never drawn).
void kernel_sample(Tensor *out, const Tensor *probs, const Tensor *u);
// cdf[i] of row r of probs, as kernel_sample reads it.
double kernel_sample_cdf(const Tensor *probs, size_t r, size_t i);
