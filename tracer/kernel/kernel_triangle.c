// kernel_triangle: the identity matrix, and the lower and upper triangles of matrices.
#include "kernel_triangle.h"

#include "kernel_private.h"

void kernel_eye(Tensor *out) {
    expect_values(out);
    ASSERT(out->shape.rank == 2 && out->shape.dim[0] == out->shape.dim[1]);
    size_t n = out->shape.dim[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            out->data[i * n + j] = i == j ? 1.0 : 0.0;
}

// Whether (i, j) lies in the triangle: compared as signed numbers, since i + k may be negative.
static bool in_triangle(size_t i, size_t j, long long k, KernelTriangle side) {
    long long d = (long long)j - (long long)i;
    return side == KERNEL_LOWER ? d <= k : d >= k;
}

void kernel_triangle(Tensor *out, const Tensor *x, long long k, KernelTriangle side) {
    expect_shape(out, &x->shape);
    expect_values(x);
    ASSERT(x->shape.rank >= 2);
    size_t n = x->shape.dim[x->shape.rank - 2], m = x->shape.dim[x->shape.rank - 1];
    size_t blocks = dims_product(&x->shape, 0, x->shape.rank - 2);
    for (size_t b = 0; b < blocks; b++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++) {
                size_t at = (b * n + i) * m + j;
                out->data[at] = in_triangle(i, j, k, side) ? x->data[at] : 0.0;
            }
}

void kernel_grad_triangle(Tensor *din, const Tensor *dout, long long k, KernelTriangle side) {
    expect_values(din);
    expect_values(dout);
    ASSERT(shape_equal(&din->shape, &dout->shape) && dout->shape.rank >= 2);
    size_t n = dout->shape.dim[dout->shape.rank - 2], m = dout->shape.dim[dout->shape.rank - 1];
    size_t blocks = dims_product(&dout->shape, 0, dout->shape.rank - 2);
    for (size_t b = 0; b < blocks; b++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                if (in_triangle(i, j, k, side))
                    din->data[(b * n + i) * m + j] += dout->data[(b * n + i) * m + j];
}
