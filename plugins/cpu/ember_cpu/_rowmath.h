/* Row helpers shared by the fused row kernels (softmax, cross-entropy) and ember.compile's
 * kernels: float32 exp, erf, tanh and GELU that vectorise, and the function multi-versioning
 * attribute for row loops. */
#ifndef EMBER_CPU_ROWMATH_H
#define EMBER_CPU_ROWMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for float32 in plain arithmetic and bit moves (no libm call), so that loops
 * calling it vectorise.  exp(x) = 2^n e^r with n = round(x / ln 2) and |r| <= ln(2)/2
 * (ln 2 split in two so n ln 2 is exact); a degree-7 Taylor polynomial gives e^r to
 * within float rounding.  2^n is built from exponent bits in two halves, so overflow
 * (inf) and gradual underflow (subnormals, then 0) come out right; NaN stays NaN. */
static inline float ember_fast_expf(float x) {
    float xc = x < -104.0f ? -104.0f : x;
    xc = xc > 89.0f ? 89.0f : xc;
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693145751953125f;
    r = r - n * 1.42860682030941723e-6f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t ni = (int32_t)n;
    int32_t half = ni / 2;
    int32_t b1 = (half + 127) << 23, b2 = (ni - half + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float res = p * s1 * s2;
    return x != x ? x : res;
}

/* erf(x) for float32 without libm calls, so that loops calling it vectorise (within 3 ulp
 * of the exact value).  |x| < 0.75: x P(x^2), P the first 11 terms of erf's Taylor series;
 * above: 1 - exp(-x^2) R(u), R a degree-9 least-squares fit of erfc(x) exp(x^2) in
 * u = 5.3846 / (1 + |x|) - 2.0769 (in [-1, 1] over [0.75, 4]); erf(4) rounds to 1. */
static inline float ember_fast_erff(float x) {
    float ax = x < 0 ? -x : x;
    ax = ax > 4.0f ? 4.0f : ax;
    float z = ax * ax;
    float q = 1.4807192805221803e-08f;
    q = q * z - 1.6365844146548625e-07f;
    q = q * z + 1.6462114444948384e-06f;
    q = q * z - 1.4925650248187594e-05f;
    q = q * z + 0.00012055332626914605f;
    q = q * z - 0.0008548327023163438f;
    q = q * z + 0.005223977845162153f;
    q = q * z - 0.02686617150902748f;
    q = q * z + 0.11283791810274124f;
    q = q * z - 0.37612637877464294f;
    q = q * z + 1.128379225730896f;
    float u = 5.384615384615385f / (1.0f + ax) - 2.076923076923077f;
    float p = -1.5177243994912715e-07f;
    p = p * u + 1.1915853974642232e-06f;
    p = p * u - 2.326312369405059e-06f;
    p = p * u - 1.3556204976339359e-05f;
    p = p * u + 0.00011181785521330312f;
    p = p * u - 0.00014906658907420933f;
    p = p * u - 0.002791482489556074f;
    p = p * u + 0.015067159198224545f;
    p = p * u + 0.18765123188495636f;
    p = p * u + 0.3070628345012665f;
    float r = ax < 0.75f ? ax * q : 1.0f - ember_fast_expf(-z) * p;
    r = x < 0 ? -r : r;
    return x != x ? x : r;
}

/* exp(x) for x <= 0 as GELU's tails need it: arguments below -87 give exp(-87) (GELU adds
 * it to or multiplies it by values it cannot change), so one power-of-two scale serves
 * where ember_fast_expf needs two; degree 6, within 2e-7 relative.  A third cheaper than
 * ember_fast_expf, which made GELU's forward 1.4x PyTorch's time. */
static inline float ember_gelu_exp_neg(float x) {
    float xc = x < -87.0f ? -87.0f : x;
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693145751953125f;
    r = r - n * 1.42860682030941723e-6f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t b = ((int32_t)n + 127) << 23;
    float s;
    memcpy(&s, &b, sizeof s);
    return p * s;
}

/* erf for GELU's CDF, as PyTorch's vectorised GELU computes it (Abramowitz & Stegun
 * 7.1.26: 1 - t P(t) exp(-x^2), t = 1 / (1 + 0.3275911 |x|)): absolute error under 1.5e-7,
 * which is what 0.5 (1 + erf) needs, at half the cost of ember_fast_erff's relative
 * accuracy (one polynomial of degree 5 instead of two of degree 10). */
static inline float ember_gelu_erf(float x) {
    float ax = x < 0 ? -x : x;
    float t = 1.0f / (1.0f + 0.3275911f * ax);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    float r = 1.0f - p * t * ember_gelu_exp_neg(-ax * ax);
    return x < 0 ? -r : r;
}

/* GELU (x Phi(x)) and its gradient (g (Phi(x) + x phi(x))) for one float: the eager
 * kernels' loops and ember.compile's fused kernels call these, so both give the same bits */
static inline float ember_gelu_f(float x) {
    return 0.5f * x * (1.0f + ember_gelu_erf(x * 0.70710678118654752f));
}
static inline float ember_gelu_grad_f(float g, float x) {
    float cdf = 0.5f * (1.0f + ember_gelu_erf(x * 0.70710678118654752f));
    float pdf = 0.39894228040143268f * ember_gelu_exp_neg(-0.5f * x * x);
    return g * (cdf + x * pdf);
}

/* tanh(x) for float32 without libm calls, so that loops calling it vectorise (within 1.4
 * ulp of the exact value over every float).  |x| < 0.625: x + x^3 P(x^2), P a degree-5
 * least-squares fit of (tanh(x) - x) / x^3 in x^2 (relative error 2e-10); above:
 * 1 - 2 / (exp(2|x|) + 1), no cancellation there; the sign is copied back, so -0 stays -0. */
static inline float ember_fast_tanhf(float x) {
    float ax = x < 0 ? -x : x;
    float z = ax * ax;
    float p = 0.0021382074950991384f;
    p = p * z - 0.008171768752331722f;
    p = p * z + 0.021698201656792725f;
    p = p * z - 0.05394625145396365f;
    p = p * z + 0.13333201332787503f;
    p = p * z - 0.33333330657349736f;
    float e = ember_fast_expf(2.0f * (ax > 10.0f ? 10.0f : ax));   /* rounds to 1 above 9.1 */
    float r = ax < 0.625f ? ax + ax * z * p : 1.0f - 2.0f / (e + 1.0f);
    r = __builtin_copysignf(r, x);
    return x != x ? x : r;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define EMBER_ROW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EMBER_ROW_CLONES
#endif

/* one rounding per operation where the bits must equal another device's or an unfused
 * form's (gcc would contract a * b + c into an FMA in the x86-64-v3/v4 clones) */
#if defined(__GNUC__) && !defined(__clang__)
#define EMBER_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define EMBER_NO_CONTRACT
#endif

/* Sums over a row in blocks of EMBER_ROW_NACC independent accumulators combined in a fixed
 * order (a pairwise tree): the loops vectorise without -ffast-math and the bits do not depend on which
 * thread runs the row.  ACC names the accumulators; the caller declares i, k (int64_t),
 * j (int), n and nb = n - n % EMBER_ROW_NACC; EXPR reads element k. */
#define EMBER_ROW_NACC 16

/* acc[j] += EXPR(k) over [0, nb) in blocks, combined in order, then the tail, added one
 * by one.  A row of at least one block evaluates its tail's EXPR as the last whole block
 * [n - NACC, n) (a vector loop; the lanes before nb are dropped): an expensive EXPR such as
 * an exp ran scalar in the tail, 11 of a 27-class row's 27.  Same values, same order. */
#define EMBER_ROW_SUM(T, ACC, EXPR, OUT)                                        \
    do {                                                                         \
        T ACC##v[EMBER_ROW_NACC] = {0}, ACC##s = 0;                             \
        for (i = 0; i < nb; i += EMBER_ROW_NACC)                                \
            for (j = 0; j < EMBER_ROW_NACC; j++) { k = i + j; ACC##v[j] += (EXPR); } \
        for (int w_ = EMBER_ROW_NACC / 2; w_ >= 1; w_ /= 2) /* a tree, not a chain */ \
            for (j = 0; j < w_; j++) ACC##v[j] += ACC##v[j + w_];               \
        ACC##s = ACC##v[0];                                                      \
        if (nb > 0 && nb < n) {                                                  \
            for (j = 0; j < EMBER_ROW_NACC; j++) {                               \
                k = n - EMBER_ROW_NACC + j; ACC##v[j] = (EXPR);                  \
            }                                                                    \
            for (j = EMBER_ROW_NACC - (int)(n - nb); j < EMBER_ROW_NACC; j++)   \
                ACC##s += ACC##v[j];                                             \
        } else {                                                                 \
            for (k = nb; k < n; k++) ACC##s += (EXPR);                           \
        }                                                                        \
        OUT = ACC##s;                                                            \
    } while (0)

/* The maximum of a[0..n), n >= 1, 32 bytes at a time in GCC vector types (a `>` select on
 * scalars stays scalar: GCC vectorises a max only under -ffinite-math-only).  A NaN may or
 * may not win; that is exact for NaN-free rows and enough for a softmax shift: a NaN
 * element reaches every output through exp(NaN - m) in the row's sum whatever m is. */
#define EMBER_ROW_MAX_FN(T, NAME)                                                \
static inline T NAME(const T *a, int64_t n) {                                    \
    typedef T vec __attribute__((vector_size(32)));                              \
    enum { W = 32 / sizeof(T) };                                                 \
    T s = a[0];                                                                  \
    int64_t i, nb = n - n % W;                                                   \
    int j;                                                                       \
    if (nb) {                                                                    \
        vec v, x;                                                                \
        memcpy(&v, a, sizeof v);                                                 \
        for (i = W; i < nb; i += W) {                                            \
            memcpy(&x, a + i, sizeof x);                                         \
            __typeof__(v > x) g = v > x;                                         \
            v = (vec)(((__typeof__(g))v & g) | ((__typeof__(g))x & ~g));         \
        }                                                                        \
        if (nb < n) {         /* the tail as the last whole vector (seen twice) */ \
            memcpy(&x, a + n - W, sizeof x);                                     \
            __typeof__(v > x) g = v > x;                                         \
            v = (vec)(((__typeof__(g))v & g) | ((__typeof__(g))x & ~g));         \
        }                                                                        \
        for (j = 0; j < W; j++) s = s > v[j] ? s : v[j];                         \
        return s;                                                                \
    }                                                                            \
    for (i = 0; i < n; i++) s = s > a[i] ? s : a[i];                             \
    return s;                                                                    \
}
EMBER_ROW_MAX_FN(float, ember_row_max_f32)
EMBER_ROW_MAX_FN(double, ember_row_max_f64)

#endif
