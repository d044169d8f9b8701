// gemm_tile.h: one register tile of the matrix product, written once and included by gemm.c
// once per path (no #pragma once). The includer defines
//     TILE_NAME    the function's name
//     TILE_ATTR    its target attribute (empty for the portable path)
//     TILE_VEC     a fresh name for the vector type
//     TILE_LANES   doubles per vector
//     TILE_MR      rows of the tile
//     TILE_NV      vectors per row of the tile (NR = TILE_NV * TILE_LANES columns)
//
// c (rows, cols) (+)= ap (rows, kc) @ bp (kc, cols) with rows <= MR and cols <= NR; ap holds
// MR values per p (the packed A panel), bp NR values per p (the packed B panel). Each lane of
// each accumulator is one element of c, so element (r, j) receives its products in increasing
// p, a multiply then an add, and nothing else: the order gemm.h promises.
typedef double TILE_VEC __attribute__((vector_size(TILE_LANES * sizeof(double))));

TILE_ATTR static void TILE_NAME(size_t kc, const double *restrict ap, const double *restrict bp, double *restrict c,
                                size_t ldc, size_t rows, size_t cols, bool first) {
    enum { MR = TILE_MR, NV = TILE_NV, L = TILE_LANES, NR = TILE_NV * TILE_LANES };
    // A partial tile is computed whole in `edge` and only its valid part copied.
    double edge[MR * NR];
    double *out = c;
    size_t ld = ldc;
    if (rows != MR || cols != NR) {
        memset(edge, 0, sizeof(edge));
        out = edge;
        ld = NR;
        for (size_t r = 0; r < rows && !first; r++)
            memcpy(edge + r * NR, c + r * ldc, cols * sizeof(double));
    }
    TILE_VEC acc[MR][NV];
#pragma GCC unroll 32
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            if (first)
                acc[r][v] = (TILE_VEC){0};
            else
                memcpy(&acc[r][v], out + r * ld + v * L, sizeof(TILE_VEC));
        }
    for (size_t p = 0; p < kc; p++) {
        TILE_VEC b[NV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            memcpy(&b[v], bp + p * NR + v * L, sizeof(TILE_VEC));
#pragma GCC unroll 32
        for (int r = 0; r < MR; r++) {
            double a = ap[p * MR + r];
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++)
                acc[r][v] += b[v] * a;  // a multiply, then an add: -ffp-contract=off
        }
    }
#pragma GCC unroll 32
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            memcpy(out + r * ld + v * L, &acc[r][v], sizeof(TILE_VEC));
    if (out == edge)
        for (size_t r = 0; r < rows; r++)
            memcpy(c + r * ldc, edge + r * NR, cols * sizeof(double));
}

#undef TILE_NAME
#undef TILE_ATTR
#undef TILE_VEC
#undef TILE_LANES
#undef TILE_MR
#undef TILE_NV
