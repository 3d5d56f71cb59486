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
typedef T ember_sum_vec_##S __attribute__((vector_size(32)));                             \
/* the accumulators a[0..7] folded, then the tail x[nb..n) added in order */              \
static inline __attribute__((always_inline)) T                                            \
ember_sum_finish_##S(const ember_sum_vec_##S *a, const T *x, int64_t nb, int64_t n) {     \
    typedef ember_sum_vec_##S vec;                                                        \
    enum { V = 32 / sizeof(T), W = 2 * V };                                               \
    vec lo = (a[0] + a[2]) + (a[4] + a[6]), hi = (a[1] + a[3]) + (a[5] + a[7]);           \
    T lane[W], s;                                                                         \
    int64_t i;                                                                            \
    int j;                                                                                \
    memcpy(lane, &lo, sizeof lo);                                                         \
    memcpy(lane + V, &hi, sizeof hi);                                                     \
    for (j = 0; j < W / 2; j++) lane[j] += lane[j + W / 2];                               \
    for (j = 0; j < W / 4; j++) lane[j] += lane[j + W / 4];                               \
    for (j = 0; j < W / 8; j++) lane[j] += lane[j + W / 8];                               \
    if (W == 16) lane[0] += lane[1];                                                      \
    s = lane[0];                                                                          \
    for (i = nb; i < n; i++) s += x[i];                                                   \
    return s;                                                                             \
}                                                                                         \
EMBER_ROW_CLONES static T ember_sum_block_##S(const T *x, int64_t n) {                    \
    typedef ember_sum_vec_##S vec;                                                        \
    enum { V = 32 / sizeof(T), W = 2 * V };                                               \
    vec a[8] = {{0}}, v;                                                                  \
    int64_t i, nb = n - n % (4 * W);                                                      \
    int k;                                                                                \
    for (i = 0; i < nb; i += 4 * W)                                                       \
        for (k = 0; k < 8; k++) {                                                         \
            memcpy(&v, x + i + k * V, sizeof v);                                          \
            a[k] += v;                                                                    \
        }                                                                                 \
    return ember_sum_finish_##S(a, x, nb, n);                                             \
}                                                                                         \
/* two consecutive blocks of n, each summed as ember_sum_block sums it (the same bits):  \
 * two streams of loads in flight read a sum bigger than the caches 5-12% faster, and    \
 * one that fits them as fast */                                                          \
EMBER_ROW_CLONES static void ember_sum_block2_##S(const T *x, int64_t n, T *out) {       \
    typedef ember_sum_vec_##S vec;                                                        \
    enum { V = 32 / sizeof(T), W = 2 * V };                                               \
    vec a[8] = {{0}}, b[8] = {{0}}, v;                                                    \
    const T *y = x + n;                                                                   \
    int64_t i, nb = n - n % (4 * W);                                                      \
    int k;                                                                                \
    for (i = 0; i < nb; i += 4 * W) {                                                     \
        for (k = 0; k < 8; k++) {                                                         \
            memcpy(&v, x + i + k * V, sizeof v);                                          \
            a[k] += v;                                                                    \
        }                                                                                 \
        for (k = 0; k < 8; k++) {                                                         \
            memcpy(&v, y + i + k * V, sizeof v);                                          \
            b[k] += v;                                                                    \
        }                                                                                 \
    }                                                                                     \
    out[0] = ember_sum_finish_##S(a, x, nb, n);                                           \
    out[1] = ember_sum_finish_##S(b, y, nb, n);                                           \
}

EMBER_SUM_BLOCK(float, f32)
EMBER_SUM_BLOCK(double, f64)

/* max/min of a reduction block of floats (_reduce.pyx), at most BLOCK contiguous elements:
 * four 32-byte vectors of accumulators over the whole groups, combined (a0 . a1) . (a2 . a3),
 * then lane j takes lane j + w for w = W/2 .. 1, then the tail in order; each step keeps x
 * when x CMP y or x is NaN, else y (_scalar.pxd's _max/_min).  The order depends only on n,
 * so the result does not depend on the clone or the thread count; order decides only which
 * of +0 and -0 (or which NaN) comes back.  Held in registers as vector types: an array of
 * 32 accumulators went through the stack on every call. */
#define EMBER_EXTREMUM_BLOCK(T, I, S, NAME, CMP)                                          \
static inline T ember_##NAME##_pick_##S(T x, T y) { return ((x CMP y) | (x != x)) ? x : y; } \
EMBER_ROW_CLONES static T ember_##NAME##_block_##S(const T *x, int64_t n) {               \
    typedef T vec __attribute__((vector_size(32)));                                       \
    typedef I ivec __attribute__((vector_size(32)));                                      \
    enum { V = 32 / sizeof(T) };                                                          \
    T lane[V], r = x[0];                                                                  \
    int64_t i = 1;                                                                        \
    int j, k;                                                                             \
    if (n >= 4 * V) {                                                                     \
        vec a[4], v;                                                                      \
        ivec keep;                                                                        \
        memcpy(a, x, sizeof a);                                                           \
        for (i = 4 * V; i + 4 * V <= n; i += 4 * V)                                       \
            for (k = 0; k < 4; k++) {                                                     \
                memcpy(&v, x + i + k * V, sizeof v);                                      \
                keep = (a[k] CMP v) | (a[k] != a[k]);                                     \
                a[k] = (vec)(((ivec)a[k] & keep) | ((ivec)v & ~keep));                    \
            }                                                                             \
        for (k = 0; k < 4; k += 2) {                                                      \
            keep = (a[k] CMP a[k + 1]) | (a[k] != a[k]);                                  \
            a[k] = (vec)(((ivec)a[k] & keep) | ((ivec)a[k + 1] & ~keep));                 \
        }                                                                                 \
        keep = (a[0] CMP a[2]) | (a[0] != a[0]);                                          \
        a[0] = (vec)(((ivec)a[0] & keep) | ((ivec)a[2] & ~keep));                         \
        memcpy(lane, &a[0], sizeof lane);                                                 \
        for (k = V / 2; k > 0; k /= 2)                                                    \
            for (j = 0; j < k; j++) lane[j] = ember_##NAME##_pick_##S(lane[j], lane[j + k]); \
        r = lane[0];                                                                      \
    }                                                                                     \
    for (; i < n; i++) r = ember_##NAME##_pick_##S(r, x[i]);                              \
    return r;                                                                             \
}

EMBER_EXTREMUM_BLOCK(float, int32_t, f32, max, >)
EMBER_EXTREMUM_BLOCK(float, int32_t, f32, min, <)
EMBER_EXTREMUM_BLOCK(double, int64_t, f64, max, >)
EMBER_EXTREMUM_BLOCK(double, int64_t, f64, min, <)

/* A tile of an outer-layout reduction (_reduce.pyx: sum over a non-contiguous dim, every
 * Linear's bias gradient): rows x[r] (rstride elements apart) folded in sequence into acc
 * (acc = STEP(acc, row)), which the first of them sets when `first`.  One step per element
 * in row order, so the bits do not depend on the clone; C and cloned because the Cython
 * module's own loops build for SSE2 and a call per row cost more than the work on narrow
 * tiles. */
#define EMBER_COL_REDUCE(T, S, NAME, STEP)                                                \
EMBER_ROW_CLONES static void ember_col_##NAME##_##S(T *restrict acc, const T *restrict x, \
                                                    int64_t rstride, int64_t rows,        \
                                                    int64_t w, int first) {               \
    int64_t r = 0, i;                                                                     \
    if (first && rows > 0) {                                                              \
        memcpy(acc, x, (size_t)w * sizeof(T));                                            \
        r = 1;                                                                            \
    }                                                                                     \
    for (; r < rows; r++)                                                                 \
        for (i = 0; i < w; i++) acc[i] = STEP(acc[i], x[r * rstride + i]);                \
}

#define EMBER_ADD_STEP(a, v) ((a) + (v))
EMBER_COL_REDUCE(float, f32, sum, EMBER_ADD_STEP)
EMBER_COL_REDUCE(double, f64, sum, EMBER_ADD_STEP)
EMBER_COL_REDUCE(float, f32, max, ember_max_pick_f32)
EMBER_COL_REDUCE(double, f64, max, ember_max_pick_f64)
EMBER_COL_REDUCE(float, f32, min, ember_min_pick_f32)
EMBER_COL_REDUCE(double, f64, min, ember_min_pick_f64)

/* one entry per type: kind > 0 max, < 0 min, 0 sum */
#define EMBER_COL_REDUCE_KIND(T, S)                                                       \
static inline void ember_col_reduce_##S(int kind, T *acc, const T *x, int64_t rstride,    \
                                        int64_t rows, int64_t w, int first) {             \
    if (kind > 0)                                                                         \
        ember_col_max_##S(acc, x, rstride, rows, w, first);                               \
    else if (kind < 0)                                                                    \
        ember_col_min_##S(acc, x, rstride, rows, w, first);                               \
    else                                                                                  \
        ember_col_sum_##S(acc, x, rstride, rows, w, first);                               \
}
EMBER_COL_REDUCE_KIND(float, f32)
EMBER_COL_REDUCE_KIND(double, f64)

#endif
