// kernel_triangle: the identity matrix and the triangles of matrices (numpy's eye, tril and
// triu), and the derivative of a triangle. A triangle keeps the entries on one side of a
// diagonal of the last two axes, counted from the main one by k (k > 0: above it):
//
//     // out (..., n, m) = x (..., n, m) where j <= i + k, else 0
//     kernel_triangle(out, x, 0, KERNEL_LOWER);
#pragma once

#include "tensor.h"

typedef enum KernelTriangle {
    KERNEL_LOWER,  // tril: on and below diagonal k, j <= i + k
    KERNEL_UPPER,  // triu: on and above diagonal k, j >= i + k
} KernelTriangle;

// out (n, n) = 1 on the diagonal, 0 elsewhere
void kernel_eye(Tensor *out);
// out (..., n, m) = x where (i, j) is in the triangle, else 0; x has at least two axes.
void kernel_triangle(Tensor *out, const Tensor *x, long long k, KernelTriangle side);
// din (..., n, m) += dout where (i, j) is in the triangle: the entries set to 0 pass nothing back.
void kernel_grad_triangle(Tensor *din, const Tensor *dout, long long k, KernelTriangle side);
