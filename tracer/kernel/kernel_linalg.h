// kernel_linalg: what a matrix's values say of it as a whole, each matrix of the last two axes
// alone: its eigenvalues and its singular values. Plain algorithms of fixed steps (EISPACK's,
// as Numerical Recipes writes them), every sum in one order, only +, -, ×, / and sqrt (each
// rounded once, as IEEE arithmetic says), so the bits are the same on every machine.
//
//     // ev (..., n, 2) = the eigenvalues of a (..., n, n), (real, imaginary), largest |λ| first
//     size_t failed;
//     KernelLinalg status = kernel_eigvals(ev, a, KERNEL_EIG_ITERATIONS, &failed);
//     // sv (..., min(m, n)) = the singular values of b (..., m, n), largest first
//     status = kernel_svdvals(sv, b, KERNEL_SVD_SWEEPS, &failed);
#pragma once

#include <stddef.h>

#include "tensor.h"

typedef enum KernelLinalg {
    KERNEL_LINALG_OK,
    KERNEL_LINALG_NO_MEMORY,
    KERNEL_LINALG_NO_CONVERGENCE,  // the iteration stopped at its limit: *failed says which matrix
} KernelLinalg;

// QR steps allowed for each eigenvalue (EISPACK's hqr gives up at 30; exceptional shifts at 10
// and 20 break the cycles of matrices such as a cyclic permutation).
#define KERNEL_EIG_ITERATIONS 30

// Two moduli, or two real parts, of a matrix's eigenvalues closer than this times the largest
// modulus count as equal when they are put in order: equal ones may differ in their last digits.
#define KERNEL_EIG_TIE 1e-12

// out (..., n, 2) from a (..., n, n), every value finite: each matrix's n eigenvalues as
// (real part, imaginary part), the largest modulus first, then the larger real part, then the
// larger imaginary part (a conjugate pair: + first), moduli and real parts compared as
// KERNEL_EIG_TIE says, by a stable insertion sort. The matrix is scaled by a power of two to
// entries below 1; rows and columns that hold an eigenvalue alone (all of a triangular matrix)
// are moved aside by swaps, and their diagonal values taken as they are; the rest is balanced
// (rows and columns scaled by powers of two, which is exact), reduced to upper Hessenberg form
// by Householder reflections (EISPACK's orthes) and its eigenvalues found by the Francis
// double-shift QR iteration (hqr), at most `iterations` steps for each. On
// KERNEL_LINALG_NO_CONVERGENCE, *failed is the flat number of the matrix that did not converge.
KernelLinalg kernel_eigvals(Tensor *out, const Tensor *a, size_t iterations, size_t *failed);

// Sweeps allowed over every pair of columns (one-sided Jacobi converges quadratically once the
// columns are nearly orthogonal: a few sweeps suffice).
#define KERNEL_SVD_SWEEPS 60

// out (..., min(m, n)) from a (..., m, n), every value finite: each matrix's singular values,
// largest first. The matrix (or its transpose, so that columns are no longer than rows) is
// scaled by a power of two to entries below 1, and its columns made orthogonal by plane
// rotations (one-sided Jacobi, Hestenes's), the pairs (j, k), j < k, in order in each sweep,
// a pair rotated when |column j · column k| is above DBL_EPSILON times the product of their
// lengths; after a sweep with no rotation the singular values are the columns' lengths. At
// most `sweeps` sweeps; on KERNEL_LINALG_NO_CONVERGENCE, *failed is the flat number of the
// matrix that did not converge.
KernelLinalg kernel_svdvals(Tensor *out, const Tensor *a, size_t sweeps, size_t *failed);
