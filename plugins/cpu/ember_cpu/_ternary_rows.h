/* lerp, addcmul and addcdiv over n elements of unit stride (_ternary.pyx): abi.h's
 * EMBER_TERNARY_* formulas, each product-add one fused multiply-add, which is what
 * PyTorch's CPU kernels compute, bit for bit.  w NULL: the number p (already rounded to T).
 * o may be a (the in-place forms), so neither is restrict.  The x86-64-v3/v4 clones have
 * the FMA instruction; the baseline clone calls libm's fma (correct, slower). */
#ifndef EMBER_CPU_TERNARY_ROWS_H
#define EMBER_CPU_TERNARY_ROWS_H
#include <math.h>
#include <stdint.h>
#include "_rowmath.h"

#define EMBER_TERNARY_ROWS(T, S, FMA, ABS)                                                 \
/* lerp: fma(|w| < 0.5 ? w : w - 1, b - a, |w| < 0.5 ? a : b) */                           \
EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_lerp_##S(                             \
        T *o, const T *a, const T *b, const T *w, T p, int64_t n) {                        \
    int64_t i;                                                                             \
    if (w == NULL) {                                                                       \
        const int small = ABS(p) < (T)0.5;                                                 \
        const T coeff = small ? p : p - (T)1;                                              \
        if (small)                                                                         \
            for (i = 0; i < n; i++) o[i] = FMA(coeff, b[i] - a[i], a[i]);                  \
        else                                                                               \
            for (i = 0; i < n; i++) o[i] = FMA(coeff, b[i] - a[i], b[i]);                  \
        return;                                                                            \
    }                                                                                      \
    for (i = 0; i < n; i++) {                                                              \
        const T x = a[i], y = b[i], v = w[i];                                              \
        const int small = ABS(v) < (T)0.5;                                                 \
        o[i] = FMA(small ? v : v - (T)1, y - x, small ? x : y);                            \
    }                                                                                      \
}                                                                                          \
/* addcmul: fma(p * b, c, a) */                                                            \
EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_addcmul_##S(                          \
        T *o, const T *a, const T *b, const T *c, T p, int64_t n) {                        \
    for (int64_t i = 0; i < n; i++) o[i] = FMA(p * b[i], c[i], a[i]);                      \
}                                                                                          \
/* addcdiv: a + (p * b) / c */                                                             \
EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_addcdiv_##S(                          \
        T *o, const T *a, const T *b, const T *c, T p, int64_t n) {                        \
    for (int64_t i = 0; i < n; i++) o[i] = a[i] + (p * b[i]) / c[i];                       \
}

EMBER_TERNARY_ROWS(float, f32, __builtin_fmaf, __builtin_fabsf)
EMBER_TERNARY_ROWS(double, f64, __builtin_fma, __builtin_fabs)

#endif
