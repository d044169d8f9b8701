// kernel_sort: each last-axis row in order (sort, argsort) and its k largest (topk, argtopk),
// and the derivative of the sorted values. The order is a total one, the same on every machine:
// smaller values first (topk: larger first), nan above every number as numpy sorts it, and of
// two equal values the earlier position first (a stable sort).
//
//     // out (..., k) = the k largest of x (..., n) per row, largest first
//     kernel_sort(out, x, KERNEL_TOPK, k);
#pragma once

#include <stddef.h>

#include "tensor.h"

typedef enum KernelSort {
    KERNEL_SORT,     // the values, smallest first
    KERNEL_ARGSORT,  // their positions
    KERNEL_TOPK,     // the k largest values, largest first
    KERNEL_ARGTOPK,  // their positions
} KernelSort;

// out (..., k) from x (..., n): k = n for sort and argsort. False when memory runs out.
bool kernel_sort(Tensor *out, const Tensor *x, KernelSort kind, size_t k);
// din (..., n) += dout (..., k) sent back to the position each sorted value came from
// (KERNEL_SORT, KERNEL_TOPK). False when memory runs out.
bool kernel_grad_sort(Tensor *din, const Tensor *dout, const Tensor *x, KernelSort kind, size_t k);
