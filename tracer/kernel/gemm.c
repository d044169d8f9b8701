// gemm: the matrix product (see gemm.h for the summation order every path keeps).
//
// The loops are the usual five around a register tile (Goto and van de Geijn, as BLIS names
// them): columns of b by NC, k by KC (pack that block of b), rows of a by MC (pack that block
// of a), then tiles of NR columns by MR rows. Every tile adds the products of one KC block to
// what c holds, in increasing p, so cutting k into blocks never changes a bit.
#include "gemm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "util.h"

// Cache blocks, in values: a packed KC x NR panel of b (48 KiB with AVX-512) is read by every
// tile of a block and stays near L1; the packed MC x KC block of a (192 KiB) stays in L2; the
// KC x NC block of b in L3. MC and NC are multiples of every path's MR and NR.
enum { GEMM_KC = 256, GEMM_MC = 96, GEMM_NC = 2400 };
// Below this many multiply-adds a second thread costs more than it saves.
#define GEMM_THREAD_MIN_WORK ((size_t)1 << 18)
// A product (one entry of a batch) of fewer is not packed either: a hand-sized lesson's
// products, and the finite-difference checks that run them again and again, go straight
// through the reference order.
#define GEMM_PACK_MIN_WORK ((size_t)1 << 11)

// ---------------------------------------------------------------- register tiles

#define TILE_NAME tile_portable
#define TILE_ATTR
#define TILE_VEC vec_portable
#define TILE_LANES 2
#define TILE_MR 4
#define TILE_NV 2
#include "gemm_tile.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_HAVE_X86 1
// target("avx512f") also allows FMA instructions; -ffp-contract=off (meson.build) is what
// keeps `acc += b * a` a multiply and an add: test_gemm.c checks the bits, no_fma.sh the code.
#define TILE_NAME tile_avx2
#define TILE_ATTR __attribute__((target("avx2")))
#define TILE_VEC vec_avx2
#define TILE_LANES 4
#define TILE_MR 6
#define TILE_NV 2
#include "gemm_tile.h"

#define TILE_NAME tile_avx512
#define TILE_ATTR __attribute__((target("avx512f")))
#define TILE_VEC vec_avx512
#define TILE_LANES 8
#define TILE_MR 8
#define TILE_NV 3
#include "gemm_tile.h"
#else
#define GEMM_HAVE_X86 0
#endif

typedef void TileFn(size_t kc, const double *restrict ap, const double *restrict bp, double *restrict c, size_t ldc,
                    size_t rows, size_t cols, bool first);

typedef struct PathInfo {
    const char *name;
    TileFn *tile;  // NULL when this build has no such path
    size_t mr, nr;
} PathInfo;

static const PathInfo paths[GEMM_PATH_COUNT] = {
    [GEMM_PORTABLE] = {"portable", tile_portable, 4, 4},
#if GEMM_HAVE_X86
    [GEMM_AVX2] = {"avx2", tile_avx2, 6, 8},
    [GEMM_AVX512] = {"avx512", tile_avx512, 8, 24},
#else
    [GEMM_AVX2] = {"avx2", NULL, 6, 8},
    [GEMM_AVX512] = {"avx512", NULL, 8, 24},
#endif
};

static bool path_supported(GemmPath p) {
    if (p >= GEMM_PATH_COUNT || !paths[p].tile)
        return false;
#if GEMM_HAVE_X86
    if (p == GEMM_AVX2)
        return __builtin_cpu_supports("avx2");
    if (p == GEMM_AVX512)
        return __builtin_cpu_supports("avx512f");
#endif
    return true;
}

// -1: not chosen yet (the best the CPU runs, on first use).
static int chosen_path = -1;

bool gemm_set_path(GemmPath path) {
    if (!path_supported(path))
        return false;
    chosen_path = (int)path;
    return true;
}

GemmPath gemm_path(void) {
    if (chosen_path < 0)
        chosen_path = path_supported(GEMM_AVX512) ? GEMM_AVX512 : path_supported(GEMM_AVX2) ? GEMM_AVX2 : GEMM_PORTABLE;
    return (GemmPath)chosen_path;
}

const char *gemm_path_name(GemmPath path) {
    return path < GEMM_PATH_COUNT ? paths[path].name : "?";
}

// ---------------------------------------------------------------- reference

// c (n, m) = a (n, k) @ b (k, m): the definition, one element at a time.
void gemm_reference(double *c, const double *a, const double *b, size_t n, size_t k, size_t m) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) {
            double sum = 0.0;
            for (size_t p = 0; p < k; p++)
                sum += a[i * k + p] * b[p * m + j];
            c[i * m + j] = sum;
        }
}

// The same order on strided operands: what a thread falls back to when it cannot get memory
// for its packed panels (slow, never wrong).
static void strided_reference(double *c, size_t ldc, const double *a, size_t ars, size_t acs, const double *b,
                              size_t brs, size_t bcs, size_t n, size_t k, size_t m) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) {
            double sum = 0.0;
            for (size_t p = 0; p < k; p++)
                sum += a[i * ars + p * acs] * b[p * brs + j * bcs];
            c[i * ldc + j] = sum;
        }
}

// Two doubles side by side: the j loop of a small product, two columns at a time (SSE2 on
// every x86-64; each lane is the same multiply and add as the scalar loop).
typedef double Pair __attribute__((vector_size(2 * sizeof(double))));

// Rows of a product too small to pack with m columns, m fixed when compiled and at most 16:
// each row of c is summed in registers, p outer and j inner, and stored once. Every element
// gets 0.0, then each a[i][p] * b[p][j] in p order, as in the reference.
static inline __attribute__((always_inline)) void narrow_product(double *c, size_t ldc, const double *a, size_t ars,
                                                                 size_t acs, const double *b, size_t brs, size_t n,
                                                                 size_t k, const size_t m) {
    for (size_t i = 0; i < n; i++) {
        Pair acc[8] = {{0.0, 0.0}};
        double last = 0.0;  // an odd m's last column
        for (size_t p = 0; p < k; p++) {
            const double x = a[i * ars + p * acs];
            const Pair xx = {x, x};
            const double *brow = b + p * brs;
            for (size_t j = 0; j + 2 <= m; j += 2) {
                Pair y;
                memcpy(&y, brow + j, sizeof(y));
                acc[j / 2] += xx * y;
            }
            if (m % 2)
                last += x * brow[m - 1];
        }
        double *row = c + i * ldc;
        for (size_t j = 0; j + 2 <= m; j += 2)
            memcpy(row + j, &acc[j / 2], sizeof(Pair));
        if (m % 2)
            row[m - 1] = last;
    }
}

// A product too small to pack, in the same order: when b's rows are contiguous and c has at
// most 16 columns, in registers (narrow_product); otherwise each row of c is summed in place,
// p outer and j inner. Every element still gets 0.0, then each a[i][p] *
// b[p][j] in p order, so the bits are the reference's; the j loop runs two columns at a time.
static void small_product(double *c, size_t ldc, const double *a, size_t ars, size_t acs, const double *b,
                          size_t brs, size_t bcs, size_t n, size_t k, size_t m) {
    if (bcs != 1) {
        strided_reference(c, ldc, a, ars, acs, b, brs, bcs, n, k, m);
        return;
    }
    switch (m) {
#define NARROW(M)                                                \
    case M:                                                      \
        narrow_product(c, ldc, a, ars, acs, b, brs, n, k, M);    \
        return;
        NARROW(1) NARROW(2) NARROW(3) NARROW(4) NARROW(5) NARROW(6) NARROW(7) NARROW(8)
        NARROW(9) NARROW(10) NARROW(11) NARROW(12) NARROW(13) NARROW(14) NARROW(15) NARROW(16)
#undef NARROW
    default:
        break;
    }
    for (size_t i = 0; i < n; i++) {
        double *restrict row = c + i * ldc;
        for (size_t j = 0; j < m; j++)
            row[j] = 0.0;
        for (size_t p = 0; p < k; p++) {
            const double x = a[i * ars + p * acs];
            const double *restrict brow = b + p * brs;
            const Pair xx = {x, x};
            size_t j = 0;
            for (; j + 2 <= m; j += 2) {
                Pair r, y;
                memcpy(&r, row + j, sizeof(r));
                memcpy(&y, brow + j, sizeof(y));
                r += xx * y;
                memcpy(row + j, &r, sizeof(r));
            }
            for (; j < m; j++)
                row[j] += x * brow[j];
        }
    }
}

// ---------------------------------------------------------------- packing

// dst: the rows of a (mc, kc) in panels of mr rows, each panel p-major (mr values per p), the
// rows past mc zero.
static void pack_a(double *restrict dst, const double *a, size_t rs, size_t cs, size_t mc, size_t kc, size_t mr) {
    for (size_t i0 = 0; i0 < mc; i0 += mr) {
        size_t rows = mc - i0 < mr ? mc - i0 : mr;
        const double *src = a + i0 * rs;
        for (size_t p = 0; p < kc; p++) {
            for (size_t r = 0; r < rows; r++)
                dst[r] = src[r * rs + p * cs];
            for (size_t r = rows; r < mr; r++)
                dst[r] = 0.0;
            dst += mr;
        }
    }
}

// dst: the columns of b (kc, nc) in panels of nr columns, each panel p-major (nr values per p),
// the columns past nc zero.
static void pack_b(double *restrict dst, const double *b, size_t rs, size_t cs, size_t kc, size_t nc, size_t nr) {
    for (size_t j0 = 0; j0 < nc; j0 += nr) {
        size_t cols = nc - j0 < nr ? nc - j0 : nr;
        const double *src = b + j0 * cs;
        for (size_t p = 0; p < kc; p++) {
            const double *row = src + p * rs;
            if (cs == 1)
                memcpy(dst, row, cols * sizeof(double));
            else
                for (size_t j = 0; j < cols; j++)
                    dst[j] = row[j * cs];
            for (size_t j = cols; j < nr; j++)
                dst[j] = 0.0;
            dst += nr;
        }
    }
}

static size_t round_up(size_t x, size_t to) {
    return (x + to - 1) / to * to;
}

// ---------------------------------------------------------------- one thread's share

// A product split among threads: by rows when there are enough of them, else (a short
// product, such as a vector times a matrix) by columns, in units of whole tiles.
typedef struct Task {
    const PathInfo *path;
    const GemmOutput *c;
    const GemmMatrix *a, *b;
    size_t batch[2];
    size_t n, k, m;
    bool by_rows;
    size_t unit;  // MR (by rows) or NR (by columns)
} Task;

// Doubles of packing space for a block of a and one of b, plus alignment slack.
static size_t pack_size(const PathInfo *path, size_t k, size_t cols) {
    size_t kc = k < GEMM_KC ? k : GEMM_KC;
    size_t nc = cols < GEMM_NC ? cols : GEMM_NC;
    return kc * (GEMM_MC + round_up(nc, path->nr)) + 8;
}

// c (rows, cols), row step ldc, = a (rows, k) @ b (k, cols), both strided; pack holds
// pack_size doubles.
static void blocked(const PathInfo *path, double *pack, double *c, size_t ldc, const double *a, size_t ars, size_t acs,
                    const double *b, size_t brs, size_t bcs, size_t rows, size_t k, size_t cols) {
    if (k == 0) {
        for (size_t i = 0; i < rows; i++)
            memset(c + i * ldc, 0, cols * sizeof(double));
        return;
    }
    // 64-byte aligned: a packed panel row then never straddles a cache line more than needed
    double *a_pack = (double *)(((uintptr_t)pack + 63) & ~(uintptr_t)63);
    double *b_pack = a_pack + GEMM_MC * (k < GEMM_KC ? k : GEMM_KC);
    for (size_t jc = 0; jc < cols; jc += GEMM_NC) {
        size_t nc = cols - jc < GEMM_NC ? cols - jc : GEMM_NC;
        for (size_t pc = 0; pc < k; pc += GEMM_KC) {
            size_t kc = k - pc < GEMM_KC ? k - pc : GEMM_KC;
            pack_b(b_pack, b + pc * brs + jc * bcs, brs, bcs, kc, nc, path->nr);
            for (size_t ic = 0; ic < rows; ic += GEMM_MC) {
                size_t mc = rows - ic < GEMM_MC ? rows - ic : GEMM_MC;
                pack_a(a_pack, a + ic * ars + pc * acs, ars, acs, mc, kc, path->mr);
                for (size_t jr = 0; jr < nc; jr += path->nr)
                    for (size_t ir = 0; ir < mc; ir += path->mr)
                        path->tile(kc, a_pack + ir * kc, b_pack + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,
                                   mc - ir < path->mr ? mc - ir : path->mr, nc - jr < path->nr ? nc - jr : path->nr,
                                   pc == 0);
            }
        }
    }
}

// Units u0..u1-1 (of rows or columns) of every batch entry.
static void run_units(void *ctx, size_t u0, size_t u1) {
    const Task *task = ctx;
    const GemmMatrix *a = task->a, *b = task->b;
    const GemmOutput *out = task->c;
    size_t extent = task->by_rows ? task->n : task->m;
    size_t from = u0 * task->unit, to = u1 * task->unit < extent ? u1 * task->unit : extent;
    size_t row0 = task->by_rows ? from : 0, rows = task->by_rows ? to - from : task->n;
    size_t col0 = task->by_rows ? 0 : from, cols = task->by_rows ? task->m : to - from;
    // Without memory for its packed panels a thread computes its share with the reference
    // loop: recovered, not reported, so this bypasses util_malloc's failure-injection hook.
    double *pack = malloc(pack_size(task->path, task->k, cols) * sizeof(double));
    for (size_t i = 0; i < task->batch[0]; i++)
        for (size_t j = 0; j < task->batch[1]; j++) {
            double *c = out->data + i * out->batch_step[0] + j * out->batch_step[1] + row0 * out->row_step + col0;
            const double *ad = a->data + i * a->batch_step[0] + j * a->batch_step[1] + row0 * a->row_step;
            const double *bd = b->data + i * b->batch_step[0] + j * b->batch_step[1] + col0 * b->col_step;
            if (pack)
                blocked(task->path, pack, c, out->row_step, ad, a->row_step, a->col_step, bd, b->row_step, b->col_step,
                        rows, task->k, cols);
            else
                strided_reference(c, out->row_step, ad, a->row_step, a->col_step, bd, b->row_step, b->col_step, rows,
                                  task->k, cols);
        }
    free(pack);
}

// Products too small to pack, entries e0 to e1 of the batch (flattened), each alone.
typedef struct SmallTask {
    const GemmOutput *c;
    const GemmMatrix *a, *b;
    size_t batch1;  // entries along the second batch axis
    size_t n, k, m;
} SmallTask;

static void run_small(void *ctx, size_t e0, size_t e1) {
    const SmallTask *t = ctx;
    const GemmOutput *c = t->c;
    const GemmMatrix *a = t->a, *b = t->b;
    for (size_t e = e0; e < e1; e++) {
        size_t i = e / t->batch1, j = e % t->batch1;
        small_product(c->data + i * c->batch_step[0] + j * c->batch_step[1], c->row_step,
                      a->data + i * a->batch_step[0] + j * a->batch_step[1], a->row_step, a->col_step,
                      b->data + i * b->batch_step[0] + j * b->batch_step[1], b->row_step, b->col_step, t->n, t->k,
                      t->m);
    }
}

// ---------------------------------------------------------------- entry points

GemmMatrix gemm_dense(const double *data, size_t rows, size_t cols) {
    (void)rows;
    return (GemmMatrix){.data = data, .row_step = cols, .col_step = 1};
}

void gemm(double *c, const GemmMatrix *a, const GemmMatrix *b, size_t n, size_t k, size_t m) {
    const size_t one[2] = {1, 1};
    gemm_batched(c, a, b, one, n, k, m);
}

void gemm_batched(double *c, const GemmMatrix *a, const GemmMatrix *b, const size_t batch[2], size_t n, size_t k,
                  size_t m) {
    GemmOutput out = {.data = c, .row_step = m, .batch_step = {batch[1] * n * m, n * m}};
    gemm_batched_to(&out, a, b, batch, n, k, m);
}

void gemm_batched_to(const GemmOutput *c, const GemmMatrix *a, const GemmMatrix *b, const size_t batch[2],
                     size_t n, size_t k, size_t m) {
    size_t entries = batch[0] * batch[1];
    if (entries == 0 || n == 0 || m == 0)
        return;
    size_t per_entry = n * m * (k ? k : 1), work = entries * per_entry;
    if (per_entry < GEMM_PACK_MIN_WORK) {
        // many small products (a gradient stage's passes run together) split by entries
        SmallTask task = {.c = c, .a = a, .b = b, .batch1 = batch[1], .n = n, .k = k, .m = m};
        parallel_for(entries, (GEMM_THREAD_MIN_WORK + per_entry - 1) / per_entry, run_small, &task);
        return;
    }
    const PathInfo *path = &paths[gemm_path()];
    Task task = {.path = path, .c = c, .a = a, .b = b, .batch = {batch[0], batch[1]}, .n = n, .k = k, .m = m};
    task.by_rows = n >= m || n >= 4 * path->mr * parallel_threads();
    task.unit = task.by_rows ? path->mr : path->nr;
    size_t units = ((task.by_rows ? n : m) + task.unit - 1) / task.unit;
    // each thread gets at least GEMM_THREAD_MIN_WORK multiply-adds
    size_t min_units = work / units ? (GEMM_THREAD_MIN_WORK + work / units - 1) / (work / units) : units;
    parallel_for(units, min_units ? min_units : 1, run_units, &task);
}
