/* Whole-array float32 exp, erf, tanh and sigmoid for the elementwise kernels (_elementwise.pyx):
 * libm-free loops that vectorise, built for several instruction sets.  exp is within float
 * rounding of the exact value (1-2 ulp), erf within 3 ulp. */
#ifndef EMBER_CPU_UNARY_MATH_H
#define EMBER_CPU_UNARY_MATH_H
#include "_rowmath.h"

EMBER_ROW_CLONES static void ember_exp_f32(float *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = ember_fast_expf(a[i]);
}
EMBER_ROW_CLONES static void ember_erf_f32(float *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = ember_fast_erff(a[i]);
}
EMBER_ROW_CLONES static void ember_tanh_f32(float *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = ember_fast_tanhf(a[i]);
}
EMBER_ROW_CLONES static void ember_sigmoid_f32(float *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = 1.0f / (1.0f + ember_fast_expf(-a[i]));
}
/* the exact GELU, x Phi(x), and its gradient g (Phi(x) + x phi(x)); o may alias an input */
EMBER_ROW_CLONES static void ember_gelu_f32(float *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        o[i] = 0.5f * a[i] * (1.0f + ember_fast_erff(a[i] * 0.70710678118654752f));
}
EMBER_ROW_CLONES static void ember_gelu_backward_f32(float *o, const float *g, const float *x,
                                                     int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        float cdf = 0.5f * (1.0f + ember_fast_erff(v * 0.70710678118654752f));
        float pdf = 0.39894228040143268f * ember_fast_expf(-0.5f * v * v);
        o[i] = g[i] * (cdf + v * pdf);
    }
}

#endif
