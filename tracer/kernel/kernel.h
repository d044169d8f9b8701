// kernel: dense math on plain tensors. It knows nothing about YAML, names or printing.
//
// Every function writes into an output tensor the caller has already created with the right
// shape (the *_shape functions compute it), and reads inputs whose shapes the caller has
// checked: a shape that does not fit is a programming error (ASSERT), never a user error.
// Sums run in one fixed order (index order, left to right), so results are the same on every
// run; no -ffast-math. A fast layer may split large kernels' rows or values among threads (backend.h);
// each value is still computed exactly as on one thread, so the thread count changes no bit.
//
//     Shape s;
//     if (!kernel_matmul_shape(&a->shape, &b->shape, &s)) { /* report */ }
//     Tensor *c = tensor_create(&s);
//     kernel_matmul(c, a, b);            // c (n, m) = a (n, k) @ b (k, m)
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

// ---------------------------------------------------------------- shapes

// numpy broadcasting: align trailing dims; each pair must be equal or one of them 1.
bool kernel_broadcast_shape(const Shape *a, const Shape *b, Shape *out);
// numpy matmul: a [..., n, k] @ b [..., k, m] -> [..., n, m], leading dims broadcast.
// A rank-1 a is a row [1, k] and a rank-1 b a column [k, 1]; that axis is then dropped
// (vector @ vector -> scalar). Neither may be a scalar.
bool kernel_matmul_shape(const Shape *a, const Shape *b, Shape *out);

// ---------------------------------------------------------------- matrix product

// c (n, m) = a (n, k) @ b (k, m), all row-major and contiguous. Every c[i][j] is summed as
// backend.h says: s = 0.0, then s = s + a[i][p] * b[p][j] for p = 0, 1, ..., k - 1, each multiply
// and each add rounded on its own (no fused multiply-add), so the bits are the same on every
// CPU, vector width and thread count. backend_reference_product is the plain loop.
void kernel_gemm(double *c, const double *a, const double *b, size_t n, size_t k, size_t m);
// out = a @ b with the shapes of kernel_matmul_shape (batched over leading axes).
void kernel_matmul(Tensor *out, const Tensor *a, const Tensor *b);
// out [..., m, n] = a [..., n, m]: swap the last two axes (rank < 2: a plain copy).
void kernel_transpose(Tensor *out, const Tensor *a);

// out [a.dim[axes[0]], ..., a.dim[axes[r - 1]]] = a with its axes in a new order, as numpy's
// transpose(a, axes): axis k of out is axis axes[k] of a (axes a permutation of 0..rank-1).
void kernel_permute(Tensor *out, const Tensor *a, const size_t *axes);

// ---------------------------------------------------------------- elementwise

typedef enum KernelBinary {
    KERNEL_ADD,
    KERNEL_SUB,
    KERNEL_MUL,
    KERNEL_DIV,  // x / 0 is inf, -inf or nan as IEEE says: values, not errors
    KERNEL_POW,  // pow(a, b)
    // numpy's floor_divide and remainder (Python's // and %): a // b is floor(a / b) and a % b
    // is a - (a // b) * b with b's sign, each worked out from fmod(a, b) as npy_divmod does, so
    // that their values are numpy's to the bit; by 0, a // 0 is a / 0 and a % 0 is nan.
    KERNEL_FLOOR_DIV,
    KERNEL_MOD,
    // Comparisons give 1 (true) or 0 (false), as numpy's do; nan compares false except with !=.
    KERNEL_EQ,
    KERNEL_NE,
    KERNEL_LT,
    KERNEL_LE,
    KERNEL_GT,
    KERNEL_GE,
    // numpy's maximum and minimum: the larger (smaller) of a and b, nan when either is nan; of
    // two equal numbers the second (maximum(-0.0, 0.0) is 0.0, as in numpy).
    KERNEL_MAXIMUM,
    KERNEL_MINIMUM,
    // numpy's logical_and and logical_or: 1 or 0, any value but 0 true (nan too).
    KERNEL_AND,
    KERNEL_OR,
} KernelBinary;

// out = a op b, numpy broadcasting (out has the broadcast shape).
void kernel_binary(Tensor *out, const Tensor *a, const Tensor *b, KernelBinary op);
double kernel_binary_apply(KernelBinary op, double a, double b);

// out (broadcast of cond, a, b) = a where cond is nonzero, else b (numpy's where; nan is nonzero).
void kernel_where(Tensor *out, const Tensor *cond, const Tensor *a, const Tensor *b);
// out (broadcast of x, lo, hi) = minimum(maximum(x, lo), hi), as numpy's clip: hi wins where lo > hi.
void kernel_clip(Tensor *out, const Tensor *x, const Tensor *lo, const Tensor *hi);
// The shape three tensors broadcast to (numpy's rule, as kernel_broadcast_shape); false if none.
bool kernel_broadcast_shape3(const Shape *a, const Shape *b, const Shape *c, Shape *out);

// numpy's isclose: |a - b| <= atol + rtol * |b| (not symmetric: b is the reference). nan is
// never close; inf is close only to the same inf.
bool kernel_isclose(double a, double b, double rtol, double atol);
// out [] = 1 when every element of a is close to the element of b it meets under
// broadcasting, else 0 (numpy's allclose).
void kernel_allclose(Tensor *out, const Tensor *a, const Tensor *b, double rtol, double atol);

typedef enum KernelUnary {
    KERNEL_NEG,
    KERNEL_EXP,
    KERNEL_LOG,   // log(0) = -inf
    KERNEL_SQRT,
    KERNEL_ABS,
    KERNEL_RELU,  // max(x, 0)
    // GPT-2's GELU, the tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    KERNEL_GELU,
    KERNEL_TANH,
    KERNEL_SIN,
    KERNEL_COS,
    KERNEL_SILU,  // x * sigmoid(x), computed as x / (1 + e^-x) (SwiGLU's gate in LLaMA)
    KERNEL_SIGMOID,  // 1 / (1 + e^-x)
    // Whole numbers: the largest not above x, the smallest not below, the nearest (half to
    // even, numpy's round: round(0.5) = 0, round(1.5) = 2, round(-0.5) = -0).
    KERNEL_FLOOR,
    KERNEL_CEIL,
    KERNEL_ROUND,
    KERNEL_LOGICAL_NOT,  // numpy's logical_not: 1 where x is 0, else 0 (nan is true, so not nan is 0)
} KernelUnary;

void kernel_unary(Tensor *out, const Tensor *a, KernelUnary op);
double kernel_unary_apply(KernelUnary op, double x);
// op'(x), for kernel_grad_unary (kernel_grad.h): abs'(0) = relu'(0) = 0, as PyTorch takes them.
// floor, ceil, round and logical_not have none: their entries have no .grad, and asking is a
// programming error.
double kernel_unary_derivative(KernelUnary op, double x);

// ---------------------------------------------------------------- rows

// Softmax over the last axis; subtract the row max first so exp() cannot overflow
// ([1000, 2000, 3000] is fine). -inf entries give exact zeros. A row that is all -inf has no
// finite max and gives nan, as numpy does.
void kernel_softmax(Tensor *out, const Tensor *a);
// LayerNorm over the last axis (size d): (x - mean) / sqrt(var + eps) * gamma + beta, with the
// population variance (divide by d). gamma and beta are scalars or [d]. A constant row has
// variance 0 and gives beta (no nan while eps > 0).
void kernel_layernorm(Tensor *out, const Tensor *x, const Tensor *gamma, const Tensor *beta,
                      double eps);
// RMSNorm over the last axis (size d), as LLaMA normalises: x / sqrt(mean(x^2) + eps) * gamma,
// with no mean subtracted and no beta. gamma is a scalar or [d]. A zero row stays 0 while eps > 0.
void kernel_rmsnorm(Tensor *out, const Tensor *x, const Tensor *gamma, double eps);
// BatchNorm as at training time: each feature (last axis, size d) is normalised with the
// mean and population variance over every other axis (batch and sequence), then * gamma + beta
// (scalars or [d]).
void kernel_batchnorm(Tensor *out, const Tensor *x, const Tensor *gamma, const Tensor *beta,
                      double eps);

// ---------------------------------------------------------------- reductions

typedef enum KernelReduce {
    KERNEL_SUM,
    KERNEL_MEAN,
    KERNEL_VAR,  // population variance: divide by the count
    KERNEL_MAX,
    KERNEL_MIN,
    KERNEL_ARGMAX,  // index of the first largest value, as a double
    KERNEL_ALL,     // 1 when every value is nonzero (nan counts as nonzero, as in numpy), else 0
    KERNEL_ANY,     // 1 when some value is nonzero, else 0
    KERNEL_NORM,    // the L2 norm sqrt(x0^2 + x1^2 + ...), squared at a power-of-two scale
} KernelReduce;

#define KERNEL_ALL_AXES (-1)

// axis is 0..rank-1, or KERNEL_ALL_AXES for one value over the whole tensor. The reduced axis
// is removed unless keepdims, which leaves it with size 1.
bool kernel_reduce_shape(const Shape *a, int axis, bool keepdims, Shape *out);
void kernel_reduce(Tensor *out, const Tensor *a, int axis, KernelReduce op);

// ---------------------------------------------------------------- indexing and reshaping

typedef enum KernelIndexKind {
    KERNEL_INDEX_ALL,    // ":"      keeps the axis
    KERNEL_INDEX_AT,     // "2"      removes the axis
    KERNEL_INDEX_RANGE,  // "0:2"    keeps the axis with stop - start entries
    KERNEL_INDEX_LIST,   // "[0, 2]" keeps the axis with n_list entries, gathered in that order
    KERNEL_INDEX_NEW,    // "None"   a new axis of size 1; reads no axis of the tensor
} KernelIndexKind;

// Index items in one indexing: one per axis of the tensor at most, plus the new axes (None),
// whose result still has at most TENSOR_MAX_RANK axes.
#define KERNEL_MAX_INDEX (2 * TENSOR_MAX_RANK)

typedef struct KernelAxisIndex {
    KernelIndexKind kind;
    size_t start;  // AT: the index; RANGE: first index
    size_t stop;   // RANGE: one past the last (start <= stop <= dim)
    const size_t *list;
    size_t n_list;
} KernelAxisIndex;

// The items name the leading axes in order (a NEW names none); the rest are ":". At most one
// LIST. numpy's rule for advanced indices: when a LIST and the whole numbers (AT) around it
// are separated by a ":", a range or a NEW, as in x[0, :, [2, 0, 1]], the gathered axis goes
// first ([3, 2] for x of [1, 2, 3]); otherwise it stays where its axis was. Indices already
// checked.
bool kernel_index_shape(const Shape *a, const KernelAxisIndex *index, size_t n_index,
                        Shape *out);
void kernel_index(Tensor *out, const Tensor *a, const KernelAxisIndex *index, size_t n_index);
// The axis of the result that the LIST gathers along (0 when numpy's rule moves it first), or
// KERNEL_NO_AXIS without a LIST.
#define KERNEL_NO_AXIS ((size_t)-1)
size_t kernel_index_list_axis(const KernelAxisIndex *index, size_t n_index);

// reshape: dims with at most one -1 (worked out from the size), each other >= 0, product equal
// to a's size. KERNEL_RESHAPE_OK with *out filled, or what is wrong with dims.
typedef enum KernelReshape {
    KERNEL_RESHAPE_OK,
    KERNEL_RESHAPE_TOO_MANY_AXES,  // more than TENSOR_MAX_RANK dims
    KERNEL_RESHAPE_NEGATIVE,       // a dim below -1
    KERNEL_RESHAPE_TWO_UNKNOWN,    // -1 twice
    KERNEL_RESHAPE_UNKNOWN_OF_ZERO,  // -1 beside a 0: any size would do
    KERNEL_RESHAPE_SIZE_DIFFERS,   // the product is not a's size (or -1 cannot make it so)
} KernelReshape;
KernelReshape kernel_reshape_shape(const Shape *a, const long long *dims, size_t n, Shape *out);
// out = a's values in the same row-major order under out's shape (same size).
void kernel_reshape(Tensor *out, const Tensor *a);

// Join n tensors along axis; all other dims must agree.
bool kernel_concat_shape(const Shape *const *parts, size_t n, size_t axis, Shape *out);
void kernel_concat(Tensor *out, const Tensor *const *parts, size_t n, size_t axis);

// Heads as PyTorch splits them: head h takes columns h*d_head .. (h+1)*d_head - 1.
// split: x [..., n, d] -> [..., heads, n, d / heads]; merge is its inverse.
bool kernel_split_heads_shape(const Shape *x, size_t heads, Shape *out);
void kernel_split_heads(Tensor *out, const Tensor *x, size_t heads);
bool kernel_merge_heads_shape(const Shape *x, Shape *out);
void kernel_merge_heads(Tensor *out, const Tensor *x);

// numpy's take_along_axis: x and idx of one rank, their sizes broadcast on every axis but `axis`,
// along which out has idx's size. False when the ranks differ or a size does not broadcast.
bool kernel_take_along_axis_shape(const Shape *x, const Shape *idx, size_t axis, Shape *out);
// out[..., j, ...] = x[..., idx[..., j, ...], ...] along axis: each line of x along the axis picks
// the entries its line of idx names. Every idx value is a whole number from -n to n - 1, n the
// size of x's axis (the caller checks); a negative one counts from the end.
void kernel_take_along_axis(Tensor *out, const Tensor *x, const Tensor *idx, size_t axis);

// out = table.flat[idx] elementwise: out has idx's shape. Every idx value is an integer in
// [0, table->size) (the caller checks).
void kernel_take(Tensor *out, const Tensor *table, const Tensor *idx);

// ---------------------------------------------------------------- builders

// [n, n]: 0 on and below the diagonal, -inf above it (a query may not see later keys).
void kernel_causal_mask(Tensor *out);
// [n, m]: i - j, how far key j lies behind query i (ALiBi and relative position bias).
void kernel_relative_positions(Tensor *out);
// [n]: 0, 1, ..., n-1.
void kernel_arange(Tensor *out);
// [n, d]: PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(pos / base^(2i/d)).
void kernel_sinusoidal(Tensor *out, double base);
// x [n, d] (d even) rotated by position: the pair (2i, 2i+1) of row r turns by the angle
// positions[r] * base^(-2i/d). positions has n values.
void kernel_rope(Tensor *out, const Tensor *x, const Tensor *positions, double base);
// [h]: ALiBi's head slopes 2^(-8k/h) for k = 1..h.
void kernel_alibi_slopes(Tensor *out);
// Square identity on the last two axes (other axes repeat it).
void kernel_identity(Tensor *out);
void kernel_fill(Tensor *out, double value);

typedef enum KernelDistribution {
    KERNEL_UNIFORM,  // uniform on [-scale, scale)
    KERNEL_NORMAL,   // normal with mean 0 and standard deviation scale (Box-Muller)
    KERNEL_UNIT,     // uniform on [0, 1): each value the draw u itself (scale unused)
} KernelDistribution;

// Deterministic pseudo-random fill from a 64-bit seed with splitmix64:
//   state += 0x9E3779B97F4A7C15; z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//   z = (z ^ (z >> 27)) * 0x94D049BB133111EB; z ^= z >> 31;
//   u = (z >> 11) * 2^-53 in [0, 1).
// uniform: scale * (2u - 1); unit: u. normal: two draws u1, u2 per pair of values,
//   r = sqrt(-2 log(1 - u1)), values r cos(2 pi u2) and r sin(2 pi u2), times scale
//   (an odd count drops the last sine).
void kernel_fill_random(Tensor *out, KernelDistribution dist, double scale, uint64_t seed);
// Token ids drawn the same way: value i is floor(u_i * vocab) for the i-th draw u_i of
// splitmix64 from seed, each id from 0 to vocab - 1 equally likely.
void kernel_fill_tokens(Tensor *out, uint64_t vocab, uint64_t seed);

// ---------------------------------------------------------------- loss

// Cross-entropy of logits [..., V] against integer targets of shape [...] (every value in
// [0, V), checked by the caller): out[...] = logsumexp(row) - row[target], computed stably.
void kernel_cross_entropy(Tensor *out, const Tensor *logits, const Tensor *targets);
