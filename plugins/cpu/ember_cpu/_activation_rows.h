/* The pointwise activations and their gradients over one run of elements (abi.h's
 * EMBER_ACTIVATION_* formulas, _activation.pyx): one pass each way where the core's
 * composites take three to eight.  Parameters are rounded to the element type first, as
 * PyTorch's kernels take them.  float32 uses libm-free exp, expm1 and log1p, so every
 * loop vectorises in the cloned forms; float64 calls libm.  Each op's loop is a function of
 * its own: one function holding them all spilled the constants of every loop to the stack.
 * min/max are written as comparisons so that NaN is kept (fmaxf would drop it). */
#ifndef EMBER_CPU_ACTIVATION_ROWS_H
#define EMBER_CPU_ACTIVATION_ROWS_H
#include <math.h>
#include "ember/abi.h"
#include "_rowmath.h"
#include "_vecmath.h"

/* log1p(z) for z >= 0 (what softplus, logsigmoid and mish take: an exp) in float arithmetic:
 * u = 1 + z rounded, log1p(z) = log(u) + (z - (u - 1)) / u; log(u) = e ln 2 + log(m) with m
 * in [sqrt(1/2), sqrt(2)), log(1 + f) = f - f^2/2 + f^3 Q(f), Q a degree-8 least-squares fit
 * (relative error 4e-9); ln 2 in two parts so e ln2_hi is exact.  Within 0.86 ulp of the
 * exact value over every float z >= 0; inf stays inf, NaN NaN. */
static inline float ember_log1pf_nonneg(float z) {
    float u = 1.0f + z;
    float c = (z - (u - 1.0f)) / u;
    int32_t b;
    memcpy(&b, &u, sizeof b);
    int32_t e = ((b >> 23) & 0xff) - 127, mb = (b & 0x7fffff) | 0x3f800000;
    float m;
    memcpy(&m, &mb, sizeof m);
    int32_t big = m > 1.41421356f;
    m = big ? m * 0.5f : m;
    float ef = (float)(e + big), f = m - 1.0f, f2 = f * f;
    static const float Q[9] = {0.0714972841456084f, -0.11571210008360744f,
                               0.11661526107879405f, -0.12411049838613562f,
                               0.14249934551779958f, -0.16668480244344505f,
                               0.20000707565352527f, -0.24999989049117313f,
                               0.3333333118984669f};
    float q = ember_hornerf(f, Q, 9);
    float r = (f2 * f * q - 0.5f * f2 + (ef * -2.12194440e-4f + c)) + f + ef * 0.693359375f;
    return z == INFINITY ? z : r;
}

/* one op's loop: x = a[i]; p0..p2 the parameters, p01 = p0 * p1 (ELU's alpha * scale);
 * g is NULL in the forward ops */
#define EMBER_ACT_FN(S, T, NAME, BODY)                                                      \
EMBER_ROW_CLONES static void ember_act_##NAME##_##S(const T *p, T *o, const T *a,          \
                                                    const T *g, int64_t n) {                \
    const T p0 = p[0], p1 = p[1], p2 = p[2], p01 = p[3];                                    \
    (void)p0; (void)p1; (void)p2; (void)p01; (void)g;                                      \
    for (int64_t i = 0; i < n; i++) {                                                       \
        const T x = a[i];                                                                   \
        BODY;                                                                               \
    }                                                                                       \
}

#define EMBER_ACT_ROWS(S, T, EXP, EXPM1, LOG1P)                                       \
EMBER_ACT_FN(S, T, leaky_relu, o[i] = x > 0 ? x : x * p0)                                   \
EMBER_ACT_FN(S, T, leaky_relu_bw, o[i] = x > 0 ? g[i] : g[i] * p0)                          \
EMBER_ACT_FN(S, T, hardtanh, o[i] = x <= p0 ? p0 : (x >= p1 ? p1 : x))                      \
EMBER_ACT_FN(S, T, hardtanh_bw, o[i] = (x <= p0 || x >= p1) ? 0 : g[i])                     \
EMBER_ACT_FN(S, T, clamp, T t = x < p0 ? p0 : x; o[i] = t > p1 ? p1 : t)                    \
EMBER_ACT_FN(S, T, clamp_bw, o[i] = (x >= p0 && x <= p1) ? g[i] : 0)                        \
EMBER_ACT_FN(S, T, hardsigmoid, T t = x + 3; t = t < 0 ? 0 : t; o[i] = (t > 6 ? 6 : t) / 6) \
/* PyTorch's slope 1/6 is a float even for double */                                       \
EMBER_ACT_FN(S, T, hardsigmoid_bw, o[i] = (x > -3 && x < 3) ? g[i] * (T)(1.0f / 6.0f) : 0)  \
EMBER_ACT_FN(S, T, hardswish, T t = x + 3; t = t < 0 ? 0 : t; o[i] = x * (t > 6 ? 6 : t) / 6)\
EMBER_ACT_FN(S, T, hardswish_bw,                                                            \
             o[i] = x <= -3 ? 0 : (x < 3 ? g[i] * (x / 3 + (T)0.5) : g[i]))                 \
EMBER_ACT_FN(S, T, silu, o[i] = x / (1 + EXP(-x)))                                          \
EMBER_ACT_FN(S, T, silu_bw, T s = 1 / (1 + EXP(-x)); o[i] = g[i] * s * (1 + x * (1 - s)))   \
EMBER_ACT_FN(S, T, elu, o[i] = x <= 0 ? EXPM1(x * p2) * p01 : x * p1)                       \
EMBER_ACT_FN(S, T, elu_bw, o[i] = x <= 0 ? g[i] * p2 * p01 * EXP(x * p2) : g[i] * p1)       \
EMBER_ACT_FN(S, T, softplus, T b = x * p0; o[i] = b > p1 ? x : LOG1P(EXP(b)) / p0)          \
EMBER_ACT_FN(S, T, softplus_bw,                                                             \
             T b = x * p0; T z = EXP(b); o[i] = b > p1 ? g[i] : g[i] * z / (z + 1))         \
EMBER_ACT_FN(S, T, log_sigmoid, o[i] = (x < 0 ? x : 0) - LOG1P(EXP(-(x < 0 ? -x : x))))    \
EMBER_ACT_FN(S, T, log_sigmoid_bw, T z = EXP(-(x < 0 ? -x : x)); T q = z / (1 + z);         \
             o[i] = g[i] * (x < 0 ? 1 - q : q))                                             \
EMBER_ACT_FN(S, T, hardshrink, o[i] = (x >= -p0 && x <= p0) ? 0 : x)                        \
EMBER_ACT_FN(S, T, shrink_bw, o[i] = (x >= -p0 && x <= p0) ? 0 : g[i])                      \
EMBER_ACT_FN(S, T, softshrink, o[i] = x > p0 ? x - p0 : (x < -p0 ? x + p0 : x * 0))         \
/* mish: tanh(log1p(e)) = n / (n + 2) with n = e (e + 2), e = exp(x) (x above 20 gives 1);   \
 * a NaN x stays NaN through the clamp */                                                   \
EMBER_ACT_FN(S, T, mish, T e = EXP(x > 20 ? 20 : x); T m = e * (e + 2); o[i] = x * (m / (m + 2)))\
EMBER_ACT_FN(S, T, mish_bw, T e = EXP(x > 20 ? 20 : x); T m = e * (e + 2); T t = m / (m + 2); \
             T s = e / (e + 1); o[i] = g[i] * (t + x * s * (1 - t * t)))                   \
/* op code, forward (g NULL) or backward: 0, or 1 for an unknown op */                      \
static int ember_activation_##S(int op, const double *params, T *o, const T *a,            \
                                const T *g, int64_t n) {                                    \
    const T p[4] = {(T)params[0], (T)params[1], (T)params[2], (T)params[0] * (T)params[1]}; \
    void (*fn)(const T *, T *, const T *, const T *, int64_t);                              \
    int bw = g != NULL;                                                                     \
    switch (op) {                                                                           \
    case EMBER_ACTIVATION_LEAKY_RELU: fn = bw ? ember_act_leaky_relu_bw_##S                 \
                                              : ember_act_leaky_relu_##S; break;            \
    case EMBER_ACTIVATION_HARDTANH: fn = bw ? ember_act_hardtanh_bw_##S                     \
                                            : ember_act_hardtanh_##S; break;                \
    case EMBER_ACTIVATION_CLAMP: fn = bw ? ember_act_clamp_bw_##S : ember_act_clamp_##S;    \
        break;                                                                              \
    case EMBER_ACTIVATION_HARDSIGMOID: fn = bw ? ember_act_hardsigmoid_bw_##S               \
                                               : ember_act_hardsigmoid_##S; break;          \
    case EMBER_ACTIVATION_HARDSWISH: fn = bw ? ember_act_hardswish_bw_##S                   \
                                             : ember_act_hardswish_##S; break;              \
    case EMBER_ACTIVATION_SILU: fn = bw ? ember_act_silu_bw_##S : ember_act_silu_##S; break;\
    case EMBER_ACTIVATION_ELU: fn = bw ? ember_act_elu_bw_##S : ember_act_elu_##S; break;   \
    case EMBER_ACTIVATION_SOFTPLUS: fn = bw ? ember_act_softplus_bw_##S                     \
                                            : ember_act_softplus_##S; break;                \
    case EMBER_ACTIVATION_LOG_SIGMOID: fn = bw ? ember_act_log_sigmoid_bw_##S               \
                                               : ember_act_log_sigmoid_##S; break;          \
    case EMBER_ACTIVATION_HARDSHRINK: fn = bw ? ember_act_shrink_bw_##S                     \
                                              : ember_act_hardshrink_##S; break;            \
    case EMBER_ACTIVATION_SOFTSHRINK: fn = bw ? ember_act_shrink_bw_##S                     \
                                              : ember_act_softshrink_##S; break;            \
    case EMBER_ACTIVATION_MISH: fn = bw ? ember_act_mish_bw_##S : ember_act_mish_##S; break;\
    default: return 1;                                                                      \
    }                                                                                       \
    fn(p, o, a, g, n);                                                                      \
    return 0;                                                                               \
}

EMBER_ACT_ROWS(f32, float, ember_fast_expf, ember_fast_expm1f, ember_log1pf_nonneg)
EMBER_ACT_ROWS(f64, double, exp, expm1, log1p)

#endif
