// gemm: the tracer's one matrix product, fast and exact.
//
// The promise: every output element is the same double on every machine, build, run, vector
// width and thread count. Element c[i][j] is
//
//     s = 0.0;  s = s + a[i][0] * b[0][j];  s = s + a[i][1] * b[1][j];  ...  up to p = k - 1
//
// a multiply rounded to double, then an add rounded to double, in increasing p, with no fused
// multiply-add (the build has -ffp-contract=off, and no path calls an FMA instruction). That
// is exactly gemm_reference's triple loop. The fast path only changes which elements are
// computed together and when: it packs panels of a and b, blocks them for the caches,
// computes a tile of MR rows by NR columns in vector registers (each lane one output
// element, so a vector's lanes never add into one another), and splits the rows (or, for a
// short product, the columns) among threads. A sum cut into blocks of k is stored to c and
// read back, which is exact. A product of fewer than 2^11 multiply-adds (a hand-sized
// lesson's) is not worth packing and runs the reference order on its operands as they are,
// a batch of them split among threads by entries.
// Which code runs for the others is chosen once, from the CPU:
//
//     GEMM_PORTABLE   plain C (GCC vector extensions of 2 doubles)
//     GEMM_AVX2       256-bit vectors, 6 x 8 tiles
//     GEMM_AVX512     512-bit vectors, 8 x 24 tiles
//
// and all three give the same bits (tests/test_gemm.c checks each against the reference).
//
//     GemmMatrix a = gemm_dense(a_data, n, k), b = gemm_dense(b_data, k, m);
//     gemm(c, &a, &b, n, k, m);          // c (n, m) = a (n, k) @ b (k, m)
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum GemmPath {
    GEMM_PORTABLE,
    GEMM_AVX2,
    GEMM_AVX512,
    GEMM_PATH_COUNT,
} GemmPath;

// An operand: element (r, col) of batch entry b is data[off(b) + r * row_step + col * col_step],
// where off(b) walks up to two leading (batch) axes with their own steps (0 repeats an
// operand along a broadcast axis). A transposed matrix is the same data with the steps swapped.
typedef struct GemmMatrix {
    const double *data;
    size_t row_step, col_step;
    size_t batch_step[2];
} GemmMatrix;

// Where a product's values go: element (r, col) of batch entry (i, j) is
// data[i * batch_step[0] + j * batch_step[1] + r * row_step + col], a row's columns side by side.
typedef struct GemmOutput {
    double *data;
    size_t row_step;
    size_t batch_step[2];
} GemmOutput;

// A contiguous row-major matrix (rows, cols) with no batch axes.
GemmMatrix gemm_dense(const double *data, size_t rows, size_t cols);

// c (n, m) = a (n, k) @ b (k, m); c is row-major and contiguous.
void gemm(double *c, const GemmMatrix *a, const GemmMatrix *b, size_t n, size_t k, size_t m);
// The same for every entry (i, j) of a batch of batch[0] x batch[1] products:
// c + (i * batch[1] + j) * n * m = a[i, j] @ b[i, j].
void gemm_batched(double *c, const GemmMatrix *a, const GemmMatrix *b, const size_t batch[2], size_t n,
                  size_t k, size_t m);
// The same, each product written where c says: into another tensor's layout, with the same bits.
void gemm_batched_to(const GemmOutput *c, const GemmMatrix *a, const GemmMatrix *b, const size_t batch[2],
                     size_t n, size_t k, size_t m);

// The readable triple loop every path must match bit for bit: c (n, m) = a (n, k) @ b (k, m),
// contiguous row-major.
void gemm_reference(double *c, const double *a, const double *b, size_t n, size_t k, size_t m);

// Force a path (the tests do, to compare them); false when this CPU cannot run it.
bool gemm_set_path(GemmPath path);
GemmPath gemm_path(void);
const char *gemm_path_name(GemmPath path);
