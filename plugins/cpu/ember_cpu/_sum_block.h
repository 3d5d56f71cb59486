/* The float sum of one reduction block (_reduce.pyx), at most BLOCK contiguous elements:
 * 64 independent accumulators (float32; 32 for float64), so that enough adds are in flight
 * to read at cache speed.  Seen as four 64-byte groups a0..a3 of W lanes, they combine as
 * (a0 + a1) + (a2 + a3), then lane j takes lane j + w for w = W/2 .. 1 (a fixed tree),
 * then the tail adds in order.  The order depends only on n, never on the instruction set
 * a clone runs (a sum has no FMA to contract), so the bits are the same on every machine
 * and thread count.  They are held as eight 32-byte vectors (a group is two of them): gcc
 * spilled 64-byte vectors through the stack in the AVX2 clone (4x slower on a machine
 * without AVX-512). */
#ifndef EMBER_CPU_SUM_BLOCK_H
#define EMBER_CPU_SUM_BLOCK_H
#include "_rowmath.h"

#define EMBER_SUM_BLOCK(T, S)                                                             \
EMBER_ROW_CLONES static T ember_sum_block_##S(const T *x, int64_t n) {                    \
    typedef T vec __attribute__((vector_size(32)));                                       \
    enum { V = 32 / sizeof(T), W = 2 * V };                                               \
    vec a[8] = {{0}}, v, lo, hi;                                                          \
    T lane[W], s;                                                                         \
    int64_t i, nb = n - n % (4 * W);                                                      \
    int j, k;                                                                             \
    for (i = 0; i < nb; i += 4 * W)                                                       \
        for (k = 0; k < 8; k++) {                                                         \
            memcpy(&v, x + i + k * V, sizeof v);                                          \
            a[k] += v;                                                                    \
        }                                                                                 \
    lo = (a[0] + a[2]) + (a[4] + a[6]);                                                   \
    hi = (a[1] + a[3]) + (a[5] + a[7]);                                                   \
    memcpy(lane, &lo, sizeof lo);                                                         \
    memcpy(lane + V, &hi, sizeof hi);                                                     \
    for (j = 0; j < W / 2; j++) lane[j] += lane[j + W / 2];                               \
    for (j = 0; j < W / 4; j++) lane[j] += lane[j + W / 4];                               \
    for (j = 0; j < W / 8; j++) lane[j] += lane[j + W / 8];                               \
    if (W == 16) lane[0] += lane[1];                                                      \
    s = lane[0];                                                                          \
    for (i = nb; i < n; i++) s += x[i];                                                   \
    return s;                                                                             \
}

EMBER_SUM_BLOCK(float, f32)
EMBER_SUM_BLOCK(double, f64)

/* A tile of the outer-layout sum (_reduce.pyx): rows x[r] (rstride elements apart) added
 * in sequence into acc, which the first of them sets when `first`; acc[i] += y[i] with
 * one row is the cascade's step.  One add per element in row order, so the bits do not
 * depend on the clone; C and cloned because the Cython module's own loops build for SSE2
 * and a call per row cost more than the adds on narrow tiles. */
#define EMBER_COL_SUM(T, S)                                                               \
EMBER_ROW_CLONES static void ember_col_sum_##S(T *restrict acc, const T *restrict x,      \
                                               int64_t rstride, int64_t rows, int64_t w,  \
                                               int first) {                               \
    int64_t r = 0, i;                                                                     \
    if (first && rows > 0) {                                                              \
        memcpy(acc, x, (size_t)w * sizeof(T));                                            \
        r = 1;                                                                            \
    }                                                                                     \
    for (; r < rows; r++)                                                                 \
        for (i = 0; i < w; i++) acc[i] += x[r * rstride + i];                             \
}

EMBER_COL_SUM(float, f32)
EMBER_COL_SUM(double, f64)

#endif
