/* Row loops of max pooling (_pool.pyx) for windows that lie inside the plane, so without
 * the generic loop's bounds checks and window arithmetic per tap: 2x2 windows of stride 2
 * 12 -> 3.5 ms on [64, 64, 24, 24] float32 (PyTorch 13 ms).  Each output takes its window's
 * taps in row-major order; a tap wins when it is greater than the best so far or a NaN:
 * the first maximum wins, and a NaN beats any number (the last NaN, as PyTorch's kernels'
 * `val > maxval || isnan(val)`).  Indices are into the plane (ih * W + iw), PyTorch's.
 * (Scalar branch-free selects measured 2.7x slower: the compare-with-NaN chains
 * serialise; float32 rows select in vector registers instead, below.) */
#ifndef EMBER_CPU_POOL_ROWS_H
#define EMBER_CPU_POOL_ROWS_H
#include <stdint.h>
#include <string.h>
#include "_rowmath.h"

#define EMBER_POOL_TAKE(v, best) ((v) > (best) || (v) != (v))

#define EMBER_MAX2X2(T, S)                                                                  \
/* outputs [0, n) of the row whose window rows start at x (index base), kernel and stride  \
 * 2: taps x[2o], x[2o + 1], x[W + 2o], x[W + 2o + 1] */                                    \
static inline void ember_max2x2_scalar_##S(const T *restrict x, int64_t W, int64_t base,    \
        T *restrict y, int64_t *restrict ix, int64_t n) {                                  \
    for (int64_t o = 0; o < n; o++) {                                                       \
        const T *t = x + 2 * o;                                                             \
        T best = t[0], v;                                                                   \
        int64_t bi = base + 2 * o;                                                          \
        int take;                                                                           \
        v = t[1];                                                                           \
        take = EMBER_POOL_TAKE(v, best);                                                    \
        best = take ? v : best; bi = take ? base + 2 * o + 1 : bi;                          \
        v = t[W];                                                                           \
        take = EMBER_POOL_TAKE(v, best);                                                    \
        best = take ? v : best; bi = take ? base + W + 2 * o : bi;                          \
        v = t[W + 1];                                                                       \
        take = EMBER_POOL_TAKE(v, best);                                                    \
        best = take ? v : best; bi = take ? base + W + 2 * o + 1 : bi;                     \
        y[o] = best;                                                                        \
        ix[o] = bi;                                                                         \
    }                                                                                       \
}                                                                                           \
/* one output whose window (kh x kw taps, strides dh, dw between taps) starts at x */      \
static inline void ember_max_window_##S(const T *x, int64_t W, int64_t base, int64_t kh,   \
        int64_t kw, int64_t dh, int64_t dw, T *y, int64_t *ix) {                            \
    T best = x[0];                                                                          \
    int64_t bi = base, i, k;                                                                \
    for (i = 0; i < kh; i++)                                                                \
        for (k = 0; k < kw; k++) {                                                          \
            T v = x[i * dh * W + k * dw];                                                   \
            int take = EMBER_POOL_TAKE(v, best);                                            \
            best = take ? v : best; bi = take ? base + i * dh * W + k * dw : bi;            \
        }                                                                                   \
    *y = best;                                                                              \
    *ix = bi;                                                                               \
}

EMBER_MAX2X2(float, f32)
EMBER_MAX2X2(double, f64)

EMBER_ROW_CLONES static void ember_max2x2_row_f64(const double *restrict x, int64_t W,
        int64_t base, double *restrict y, int64_t *restrict ix, int64_t n) {
    ember_max2x2_scalar_f64(x, W, base, y, ix, n);
}

/* float32 rows eight outputs at a time in vector registers: the even and odd taps of each
 * window row split by shuffles, the same take-rule as masks.  The pooled rows of a CNN are
 * short (12 outputs of a 24-wide plane), too short for gcc's 16-lane loop, and the scalar
 * loop's branches mispredict on real data: [64, 16, 24, 24] took 730 us, now 160.  A row
 * of n >= 8 ends with the last eight outputs again (overlapping: the same values). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
typedef float ember_pool_f8 __attribute__((vector_size(32)));
typedef int32_t ember_pool_i8 __attribute__((vector_size(32)));

#define EMBER_POOL_STEP8(v, best, off, o)                                                   \
    do {                                                                                    \
        ember_pool_i8 m_ = ((v) > (best)) | ((v) != (v));                                   \
        (best) = (ember_pool_f8)(((ember_pool_i8)(v) & m_) | ((ember_pool_i8)(best) & ~m_));\
        (off) = (m_ & (int32_t)(o)) | ((off) & ~m_);                                        \
    } while (0)

static inline void ember_max2x2_eight_f32(const float *restrict x, int64_t W, int64_t base,
        float *restrict y, int64_t *restrict ix, int64_t o) {
    ember_pool_f8 r0a, r0b, r1a, r1b, best, v;
    ember_pool_i8 off = {0};
    const float *t = x + 2 * o;
    memcpy(&r0a, t, sizeof r0a);
    memcpy(&r0b, t + 8, sizeof r0b);
    memcpy(&r1a, t + W, sizeof r1a);
    memcpy(&r1b, t + W + 8, sizeof r1b);
    best = __builtin_shufflevector(r0a, r0b, 0, 2, 4, 6, 8, 10, 12, 14);
    v = __builtin_shufflevector(r0a, r0b, 1, 3, 5, 7, 9, 11, 13, 15);
    EMBER_POOL_STEP8(v, best, off, 1);
    v = __builtin_shufflevector(r1a, r1b, 0, 2, 4, 6, 8, 10, 12, 14);
    EMBER_POOL_STEP8(v, best, off, W);
    v = __builtin_shufflevector(r1a, r1b, 1, 3, 5, 7, 9, 11, 13, 15);
    EMBER_POOL_STEP8(v, best, off, W + 1);
    memcpy(y + o, &best, sizeof best);
    for (int j = 0; j < 8; j++)
        ix[o + j] = base + 2 * (o + j) + off[j];
}

EMBER_ROW_CLONES static void ember_max2x2_row_f32(const float *restrict x, int64_t W,
        int64_t base, float *restrict y, int64_t *restrict ix, int64_t n) {
    int64_t o;
    if (n < 8 || W >= INT32_MAX) {              /* the offsets are int32 lanes */
        ember_max2x2_scalar_f32(x, W, base, y, ix, n);
        return;
    }
    for (o = 0; o + 8 <= n; o += 8)
        ember_max2x2_eight_f32(x, W, base, y, ix, o);
    if (o < n)
        ember_max2x2_eight_f32(x, W, base, y, ix, n - 8);
}
#else
EMBER_ROW_CLONES static void ember_max2x2_row_f32(const float *restrict x, int64_t W,
        int64_t base, float *restrict y, int64_t *restrict ix, int64_t n) {
    ember_max2x2_scalar_f32(x, W, base, y, ix, n);
}
#endif

#endif
