/* im2col and its adjoint for the fused convolution kernels (_conv.pyx), for float and
 * double.  Rows of a 28-wide image are ~100 bytes: a memcpy/memset call per row segment
 * cost more than the copy, so these are plain loops (kept from being turned back into
 * those calls) built for several instruction sets. */
#ifndef EMBER_CPU_CONV_COLS_H
#define EMBER_CPU_CONV_COLS_H
#include <stdint.h>
#include "_rowmath.h"

#if defined(__GNUC__) && !defined(__clang__)
#define EMBER_COLS_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define EMBER_COLS_LOOPS
#endif

/* the window taps of cg channels of x [cg, h, w] as col [cg * kh * kw, ho * wo]; with
 * `add`, the adjoint: col summed into x (which the caller zeroed).  g: h, w, kh, kw, ho,
 * wo, stride (2), padding (2), dilation (2). */
#define EMBER_IM2COL(T, S)                                                                 \
EMBER_ROW_CLONES EMBER_COLS_LOOPS static void ember_im2col_##S(                            \
        T *x, T *col, int add, int64_t cg, const int64_t *g) {                            \
    int64_t h = g[0], w = g[1], kh = g[2], kw = g[3], ho = g[4], wo = g[5];               \
    int64_t sh = g[6], sw = g[7], ph = g[8], pw = g[9], dh = g[10], dw = g[11];           \
    int64_t ch, ki, kj, oh, ow;                                                            \
    for (ch = 0; ch < cg; ch++)                                                            \
    for (ki = 0; ki < kh; ki++)                                                            \
    for (kj = 0; kj < kw; kj++) {                                                          \
        T *row = col + ((ch * kh + ki) * kw + kj) * ho * wo;                               \
        int64_t off = kj * dw - pw;          /* input column of output column 0 */        \
        /* the output columns whose tap falls inside the input: [lo, hi) */               \
        int64_t lo = off < 0 ? (-off + sw - 1) / sw : 0;                                   \
        int64_t hi = w - 1 - off >= 0 ? (w - 1 - off) / sw + 1 : 0;                        \
        hi = hi < wo ? hi : wo;                                                            \
        lo = lo < hi ? lo : hi;                                                            \
        for (oh = 0; oh < ho; oh++) {                                                      \
            int64_t ih = oh * sh - ph + ki * dh;                                           \
            T *dst = row + oh * wo;                                                        \
            if (ih < 0 || ih >= h) {                                                       \
                if (!add) for (ow = 0; ow < wo; ow++) dst[ow] = 0;                         \
                continue;                                                                  \
            }                                                                              \
            T *src = x + (ch * h + ih) * w;                                                \
            if (add && sw == 1) {                                                          \
                for (ow = lo; ow < hi; ow++) src[ow + off] += dst[ow];                     \
            } else if (add) {                                                              \
                for (ow = lo; ow < hi; ow++) src[ow * sw + off] += dst[ow];                \
            } else {                                                                       \
                for (ow = 0; ow < lo; ow++) dst[ow] = 0;                                   \
                if (sw == 1)                                                               \
                    for (ow = lo; ow < hi; ow++) dst[ow] = src[ow + off];                  \
                else                                                                       \
                    for (ow = lo; ow < hi; ow++) dst[ow] = src[ow * sw + off];             \
                for (ow = hi; ow < wo; ow++) dst[ow] = 0;                                  \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
}

EMBER_IM2COL(float, f32)
EMBER_IM2COL(double, f64)

#endif
