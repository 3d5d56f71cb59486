/* Whole-array float32 math for the elementwise kernels (_elementwise.pyx): libm-free loops
 * that vectorise, built for several instruction sets.  exp is within float rounding of the
 * exact value (1-2 ulp), erf within 3 ulp, GELU with PyTorch's erf; the logs, expm1, exp2,
 * the trigonometric and hyperbolic functions are computed in double (_vecmath.h); the cheap
 * ops (neg ... round) are one IEEE operation each. */
#ifndef EMBER_CPU_UNARY_MATH_H
#define EMBER_CPU_UNARY_MATH_H
#include "_rowmath.h"
#include "_vecmath.h"

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
#define EMBER_UNARY_ROW_T(T, S, NAME, EXPR)                                               \
EMBER_ROW_CLONES static void ember_##NAME##_##S(T *o, const T *a, int64_t n) {            \
    for (int64_t i = 0; i < n; i++) o[i] = EXPR(a[i]);                                    \
}
#define EMBER_UNARY_ROW(NAME, EXPR) EMBER_UNARY_ROW_T(float, f32, NAME, EXPR)
#define EMBER_RSQRTF(x) (1.0f / sqrtf(x))
EMBER_UNARY_ROW(log, ember_fast_logf)
EMBER_UNARY_ROW(log2, ember_fast_log2f)
EMBER_UNARY_ROW(log10, ember_fast_log10f)
EMBER_UNARY_ROW(log1p, ember_fast_log1pf)
EMBER_UNARY_ROW(expm1, ember_fast_expm1f)
EMBER_UNARY_ROW(exp2, ember_fast_exp2f)
EMBER_UNARY_ROW(rsqrt, EMBER_RSQRTF)
EMBER_UNARY_ROW(atan, ember_fast_atanf)
EMBER_UNARY_ROW(asin, ember_fast_asinf)
EMBER_UNARY_ROW(acos, ember_fast_acosf)
EMBER_UNARY_ROW(sinh, ember_fast_sinhf)
EMBER_UNARY_ROW(cosh, ember_fast_coshf)

/* the cheap float ops, one IEEE operation each (the same bits as _scalar.pxd's): cloned
 * because the module's own loops build for SSE2, which has no rounding instruction (floor
 * and round were a libm call an element, 10-15x PyTorch's time) */
#define EMBER_NEG(x) (-(x))
#define EMBER_RELU(x) ((x) < 0 ? 0 : (x))
#define EMBER_SQUARE(x) ((x) * (x))
#define EMBER_RECIP(x) (1 / (x))
#define EMBER_SIGN(x) (((x) > 0) - ((x) < 0))      /* NaN and -0.0: +0 */
#define EMBER_CHEAP_ROWS(T, S, FABS, SQRT, FLOOR, CEIL, TRUNC, NEARBYINT)                 \
EMBER_UNARY_ROW_T(T, S, neg, EMBER_NEG)                                                   \
EMBER_UNARY_ROW_T(T, S, abs, FABS)                                                        \
EMBER_UNARY_ROW_T(T, S, relu, EMBER_RELU)                                                 \
EMBER_UNARY_ROW_T(T, S, square, EMBER_SQUARE)                                             \
EMBER_UNARY_ROW_T(T, S, reciprocal, EMBER_RECIP)                                          \
EMBER_UNARY_ROW_T(T, S, sqrt, SQRT)                                                       \
EMBER_UNARY_ROW_T(T, S, floor, FLOOR)                                                     \
EMBER_UNARY_ROW_T(T, S, ceil, CEIL)                                                       \
EMBER_UNARY_ROW_T(T, S, trunc, TRUNC)                                                     \
EMBER_UNARY_ROW_T(T, S, round, NEARBYINT)                                                 \
EMBER_UNARY_ROW_T(T, S, sign, EMBER_SIGN)
EMBER_CHEAP_ROWS(float, f32, fabsf, sqrtf, floorf, ceilf, truncf, nearbyintf)
EMBER_CHEAP_ROWS(double, f64, fabs, sqrt, floor, ceil, trunc, nearbyint)

/* sin and cos by chunks: a chunk whose arguments are all within the fast range runs the
 * double-precision polynomial, any other (a huge argument, NaN, inf) libm; the test comes
 * before any store, so o may alias a */
#define EMBER_TRIG_ROW(NAME, FAST, LIBM)                                                  \
EMBER_ROW_CLONES static void ember_##NAME##_f32(float *o, const float *a, int64_t n) {    \
    for (int64_t i0 = 0; i0 < n; i0 += EMBER_LIBM_CHUNK) {                                \
        int64_t m = n - i0 < EMBER_LIBM_CHUNK ? n - i0 : EMBER_LIBM_CHUNK, j;             \
        int fast = 1;                                                                     \
        for (j = 0; j < m; j++) fast &= fabsf(a[i0 + j]) < EMBER_FAST_TRIG_LIMIT;         \
        if (fast)                                                                         \
            for (j = 0; j < m; j++) o[i0 + j] = FAST(a[i0 + j]);                          \
        else                                                                              \
            for (j = 0; j < m; j++) o[i0 + j] = LIBM(a[i0 + j]);                          \
    }                                                                                     \
}
EMBER_TRIG_ROW(sin, ember_fast_sinf, sinf)
EMBER_TRIG_ROW(cos, ember_fast_cosf, cosf)
EMBER_TRIG_ROW(tan, ember_fast_tanf, tanf)

/* GELU, x Phi(x), and its gradient g (Phi(x) + x phi(x)); o may alias an input */
EMBER_ROW_CLONES static void ember_gelu_f32(float *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = ember_gelu_f(a[i]);
}
EMBER_ROW_CLONES static void ember_gelu_backward_f32(float *o, const float *g, const float *x,
                                                     int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = ember_gelu_grad_f(g[i], x[i]);
}

#endif
