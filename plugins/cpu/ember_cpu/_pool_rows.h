/* Row loops of max pooling (_pool.pyx) for windows that lie inside the plane, so without
 * the generic loop's bounds checks and window arithmetic per tap: 2x2 windows of stride 2
 * 12 -> 3.5 ms on [64, 64, 24, 24] float32 (PyTorch 13 ms).  Each output takes its window's
 * taps in row-major order; a tap wins when it is greater than the best so far or a NaN:
 * the first maximum wins, and a NaN beats any number (the last NaN, as PyTorch's kernels'
 * `val > maxval || isnan(val)`).  Indices are into the plane (ih * W + iw), PyTorch's.
 * (Branch-free selects measured 2.7x slower here: rows are short, and the
 * compare-with-NaN chains serialise.) */
#ifndef EMBER_CPU_POOL_ROWS_H
#define EMBER_CPU_POOL_ROWS_H
#include <stdint.h>
#include "_rowmath.h"

#define EMBER_POOL_TAKE(v, best) ((v) > (best) || (v) != (v))

#define EMBER_MAX2X2(T, S)                                                                  \
/* outputs [0, n) of the row whose window rows start at x (index base), kernel and stride  \
 * 2: taps x[2o], x[2o + 1], x[W + 2o], x[W + 2o + 1] */                                    \
EMBER_ROW_CLONES static void ember_max2x2_row_##S(const T *restrict x, int64_t W,           \
        int64_t base, T *restrict y, int64_t *restrict ix, int64_t n) {                     \
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

#endif
