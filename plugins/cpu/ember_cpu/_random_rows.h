/* The values of the random fills (_random.pyx) from Philox words stored lane by lane
 * (_philox.h): one loop per distribution, free of libm calls in float32, so they vectorise.
 * Element i uses its own counter's words: uniform float32 24 bits of w0, float64 53 bits
 * of (w0, w1); normal is Box-Muller, sqrt(-2 log u1) cos(2 pi u2), with u1 in (0, 1] from
 * w0 and u2 in [0, 1) from w1 (float64: u1 from (w0, w1), u2 from (w2, w3)). */
#ifndef EMBER_CPU_RANDOM_ROWS_H
#define EMBER_CPU_RANDOM_ROWS_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "_rowmath.h"

static inline float ember_u24(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

static inline double ember_u53(uint32_t hi, uint32_t lo) {
    return ((double)(hi >> 5) * 67108864.0 + (double)(lo >> 6)) * (1.0 / 9007199254740992.0);
}

/* log(x) for normal float32 x > 0 (Box-Muller's u1 >= 2^-24), within 1-2 ulp: x = m 2^e
 * with m in [sqrt(1/2), sqrt(2)), log(1 + f) = f - f^2/2 + f^3 P(f) (Cephes' logf
 * coefficients), ln 2 split in two so e ln 2 adds exactly. */
static inline float ember_logf_positive(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int32_t e = (int32_t)(bits >> 23) - 126;
    bits = (bits & 0x007fffffu) | 0x3f000000u;          /* m in [0.5, 1) */
    float m;
    memcpy(&m, &bits, sizeof m);
    int32_t low = m < 0.70710678118654752f;
    e -= low;
    float f = low ? m + m - 1.0f : m - 1.0f;
    float z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    float fe = (float)e;
    float y = p * f * z - 2.12194440e-4f * fe - 0.5f * z;
    return (f + y) + 0.693359375f * fe;
}

/* cos(2 pi u) for u in [0, 1), within 1-2 ulp: folded by symmetry to an angle in
 * [0, pi/4] (every fold exact: u is a multiple of 2^-24), then Cephes' cos or sin
 * polynomial there. */
static inline float ember_cos_2pi(float u) {
    float a = fabsf(u - 0.5f);                 /* cos(2 pi u) = -cos(2 pi a), a in [0, 1/2] */
    float sign = a > 0.25f ? 1.0f : -1.0f;     /* cos(2 pi a) = -cos(2 pi (1/2 - a)) */
    float b = a > 0.25f ? 0.5f - a : a;        /* b in [0, 1/4] */
    int use_sin = b > 0.125f;                  /* cos(2 pi b) = sin(2 pi (1/4 - b)) */
    float x = 6.28318530717958648f * (use_sin ? 0.25f - b : b);
    float z = x * x;
    float c = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z
               + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
    float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * x + x;
    return sign * (use_sin ? s : c);
}

/* uniform in [lo, hi): `below` is the float just under hi, where rounding reached hi; the
 * product and the sum round apart, as ember-cuda's and the reference device's draws */
EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_uniform_f32(float *restrict o, const uint32_t *restrict w0,
                                               int64_t n, float lo, float hi, float below) {
    int clip = hi > lo;
    for (int64_t i = 0; i < n; i++) {
        float v = lo + (hi - lo) * ember_u24(w0[i]);
        o[i] = (clip && v >= hi) ? below : v;
    }
}

EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_uniform_f64(double *restrict o, const uint32_t *restrict w0,
                                               const uint32_t *restrict w1, int64_t n,
                                               double lo, double hi, double below) {
    int clip = hi > lo;
    for (int64_t i = 0; i < n; i++) {
        double v = lo + (hi - lo) * ember_u53(w0[i], w1[i]);
        o[i] = (clip && v >= hi) ? below : v;
    }
}

EMBER_ROW_CLONES static void ember_normal_f32(float *restrict o, const uint32_t *restrict w0,
                                              const uint32_t *restrict w1, int64_t n,
                                              float mean, float std) {
    for (int64_t i = 0; i < n; i++) {
        float u1 = ember_u24(w0[i]) + 1.0f / 16777216.0f;
        float r = sqrtf(-2.0f * ember_logf_positive(u1));
        o[i] = mean + std * (r * ember_cos_2pi(ember_u24(w1[i])));
    }
}

/* float64 keeps libm's log and cos (their accuracy is what a float64 draw is for) */
static void ember_normal_f64(double *restrict o, const uint32_t *restrict w0,
                             const uint32_t *restrict w1, const uint32_t *restrict w2,
                             const uint32_t *restrict w3, int64_t n, double mean, double std) {
    for (int64_t i = 0; i < n; i++) {
        double u1 = ember_u53(w0[i], w1[i]) + 1.0 / 9007199254740992.0;
        o[i] = mean + std * (sqrt(-2.0 * log(u1))
                             * cos(6.283185307179586 * ember_u53(w2[i], w3[i])));
    }
}

#endif
