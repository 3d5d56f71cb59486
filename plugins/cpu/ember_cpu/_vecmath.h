/* float32 log, log2, log10, log1p, expm1, exp2, sin, cos, tan, atan, atan2, asin, acos, sinh,
 * cosh and fmod without libm calls, so that the loops calling them vectorise (glibc's scalar calls ran 3-9x slower than PyTorch's SLEEF
 * loops).  Each is computed in double precision from a float argument, so the result is the
 * exact value rounded once to float but for ~1e-12 relative: correctly rounded save rare
 * double-rounding ties.  Shared by the eager kernels (_unary_math.h) and the C that
 * ember.compile generates (_codegen_math.h), so compiled and eager results agree bit for
 * bit.  Only 64-bit logical shifts and integer/double bit moves are used: AVX2 has no
 * 64-bit arithmetic shift or int64 <-> double conversion, which would scalarise the loops. */
#ifndef EMBER_CPU_VECMATH_H
#define EMBER_CPU_VECMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EMBER_LN2 0.69314718055994530942
#define EMBER_LOG2E 1.44269504088896340736
#define EMBER_LOG10_2 0.30102999566398119521
#define EMBER_LOG10E 0.43429448190325182765
#define EMBER_ROUND_D 6755399441055744.0          /* 1.5 * 2^52: x + it rounds x to an integer */

static inline double ember_bits_to_d(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static inline uint64_t ember_d_to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* c[0] x^(n-1) + ... + c[n-1] by Horner's rule (n is a constant where it is called, so the
 * loop unrolls and the coefficients become vector constants) */
static inline double ember_horner(double x, const double *c, int n) {
    double p = c[0];
    for (int i = 1; i < n; i++) p = p * x + c[i];
    return p;
}
static inline float ember_hornerf(float x, const float *c, int n) {
    float p = c[0];
    for (int i = 1; i < n; i++) p = p * x + c[i];
    return p;
}

/* log(u) for a positive normal double u, as e + log(m) with u = 2^e m, m in [sqrt(1/2),
 * sqrt(2)): log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, odd series to s^15
 * (truncation below 1e-13 relative); `e` comes back separately for log2 and log10. */
static inline double ember_log_parts(double u, double *e) {
    uint64_t b = ember_d_to_bits(u);
    /* the biased exponent as a double: its 11 bits in the mantissa of 2^52, minus 2^52 */
    double ex = ember_bits_to_d((b >> 52) | 0x4330000000000000ULL) - 4503599627371519.0;
    double m = ember_bits_to_d((b & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL);
    int big = m > 1.41421356237309504880;
    m = big ? m * 0.5 : m;
    *e = big ? ex + 1.0 : ex;
    static const double c[] = {2.0 / 15, 2.0 / 13, 2.0 / 11, 2.0 / 9, 2.0 / 7, 2.0 / 5,
                               2.0 / 3, 2.0};
    double s = (m - 1.0) / (m + 1.0);
    return s * ember_horner(s * s, c, 8);
}

/* e^r - 1 for |r| <= ln(2)/2: Taylor to r^13 (truncation below 2e-17) */
static inline double ember_expm1_core(double r) {
    static const double c[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                               1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
                               1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0};
    return ember_horner(r, c, 13) * r;
}

/* 2^n for an integral double n in [-1022, 1023]: n + 1023 in the low bits of t, shifted
 * into the exponent field (the bits above it fall off) */
static inline double ember_pow2i(double n) {
    return ember_bits_to_d(ember_d_to_bits(n + (1023.0 + EMBER_ROUND_D)) << 52);
}

/* the logs' special values around r: -inf at +-0, NaN below 0 and at NaN, inf at inf */
static inline float ember_log_specials(float x, float r) {
    r = x == INFINITY ? x : r;
    r = x == 0.0f ? -INFINITY : r;
    return x < 0.0f || x != x ? NAN : r;
}

static inline float ember_fast_logf(float x) {
    double e, l = ember_log_parts((double)x, &e);
    return ember_log_specials(x, (float)(e * EMBER_LN2 + l));
}

static inline float ember_fast_log2f(float x) {
    double e, l = ember_log_parts((double)x, &e);
    return ember_log_specials(x, (float)(e + l * EMBER_LOG2E));    /* exact at powers of 2 */
}

static inline float ember_fast_log10f(float x) {
    double e, l = ember_log_parts((double)x, &e);
    return ember_log_specials(x, (float)(e * EMBER_LOG10_2 + l * EMBER_LOG10E));
}

/* log1p: u = 1 + x in double is exact for |x| >= 2^-29 (x has 24 bits), so log(u) is the
 * answer; below, log1p(x) = x - x^2/2 rounds to x itself in float (and -0 stays -0).  No
 * division: the correction log(u) x / (u - 1) it replaces was a second one. */
static inline float ember_fast_log1pf(float x) {
    double xd = (double)x, u = 1.0 + xd, e;
    double um = u > 0.0 ? u : 1.0;                   /* keeps the core on its domain */
    double l = ember_log_parts(um, &e);
    l = e * EMBER_LN2 + l;
    float r = (float)(fabs(xd) < 0x1p-29 ? xd : l);
    r = x == INFINITY ? x : r;
    r = x == -1.0f ? -INFINITY : r;
    return x < -1.0f || x != x ? NAN : r;
}

/* e^x - 1 for a double x in [-104, 100]: n = round(x / ln 2), r = x - n ln 2 (ln 2 in two
 * parts, n ln2_hi exact), then 2^n (e^r - 1) + (2^n - 1) */
static inline double ember_expm1_d(double x) {
    double n = (x * EMBER_LOG2E + EMBER_ROUND_D) - EMBER_ROUND_D;
    double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
    double s = ember_pow2i(n);
    return s * ember_expm1_core(r) + (s - 1.0);
}

/* expm1: x clamped to [-104, 89], beyond which float gives -1 / inf */
static inline float ember_fast_expm1f(float x) {
    float res = (float)ember_expm1_d((double)(x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x)));
    return x != x || x == 0.0f ? x : res;           /* -0 stays -0 */
}

/* sinh and cosh from m = e^|x| - 1 (no cancellation near 0): sinh = (m + m / (m + 1)) / 2,
 * cosh = (m + 1 + 1 / (m + 1)) / 2; |x| clamped to 100 (float overflows from ~89.4) */
static inline float ember_fast_sinhf(float x) {
    float ax = fabsf(x);
    double m = ember_expm1_d((double)(ax > 100.0f ? 100.0f : ax));
    float r = (float)(0.5 * (m + m / (m + 1.0)));
    return x != x ? x : copysignf(r, x);
}

static inline float ember_fast_coshf(float x) {
    float ax = fabsf(x);
    double e = ember_expm1_d((double)(ax > 100.0f ? 100.0f : ax)) + 1.0;
    float r = (float)(0.5 * (e + 1.0 / e));
    return x != x ? x : r;
}

/* exp2: n = round(x), 2^n e^((x - n) ln 2); x clamped to [-152, 129] (0 and inf beyond) */
static inline float ember_fast_exp2f(float x) {
    double xd = (double)(x < -152.0f ? -152.0f : (x > 129.0f ? 129.0f : x));
    double n = (xd + EMBER_ROUND_D) - EMBER_ROUND_D;
    double s = ember_pow2i(n);
    float res = (float)(s + s * ember_expm1_core((xd - n) * EMBER_LN2));
    return x != x ? x : res;
}

/* sin/cos: the argument reduced in double by a multiple n of pi/2 (pi/2 in three parts,
 * Cody-Waite; exact for |x| < EMBER_FAST_TRIG_LIMIT), then the Taylor polynomials of sin
 * and cos on [-pi/4, pi/4] in double.  The quadrant comes from the low bits of
 * n + 1.5 * 2^52 (a bit move, not a conversion).  Callers send arguments outside the range
 * (and NaN, inf) to libm. */
#define EMBER_FAST_TRIG_LIMIT 1e5f
#define EMBER_LIBM_CHUNK 256        /* elements a row loop tests before taking the fast path */

/* sin r and cos r of the argument reduced by n pi/2; returns n's low bits (the quadrant) */
static inline int64_t ember_trig_parts(float xf, double *s, double *c) {
    double x = (double)xf;
    double t = x * 0.63661977236758134308 + EMBER_ROUND_D;
    int64_t bits;
    memcpy(&bits, &t, sizeof bits);
    double n = t - EMBER_ROUND_D;
    double r = ((x - n * 1.57079632673412561417e+00) - n * 6.07710050630396597660e-11)
               - n * 2.02226624871116645580e-21;
    double r2 = r * r;
    *s = r + r * r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (
        1.0 / 362880 + r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800.0))))));
    *c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (
        -1.0 / 3628800 + r2 * (1.0 / 479001600 + r2 * (-1.0 / 87178291200.0)))))));
    return bits;
}

static inline double ember_trig_core(float xf, int64_t shift) {
    double s, c;
    int64_t q = ember_trig_parts(xf, &s, &c) + shift;
    double v = (q & 1) ? c : s;
    return (q & 2) ? -v : v;
}

static inline float ember_fast_sinf(float x) { return (float)ember_trig_core(x, 0); }
static inline float ember_fast_cosf(float x) { return (float)ember_trig_core(x, 1); }

/* tan: the same reduction, sin r / cos r in quadrants 0 and 2, -cos r / sin r in 1 and 3 */
static inline float ember_fast_tanf(float x) {
    double s, c;
    return (float)((ember_trig_parts(x, &s, &c) & 1) ? -c / s : s / c);
}

/* atan of a double u in [0, 1]: above tan(pi/8), pi/4 + atan((u - 1) / (u + 1)); then the
 * odd Taylor series to v^27 on |v| <= tan(pi/8) (truncation below 2e-12 relative) */
static inline double ember_atan_unit(double u) {
    int big = u > 0.41421356237309504880;
    static const double c[] = {-1.0 / 27, 1.0 / 25, -1.0 / 23, 1.0 / 21, -1.0 / 19, 1.0 / 17,
                               -1.0 / 15, 1.0 / 13, -1.0 / 11, 1.0 / 9, -1.0 / 7, 1.0 / 5,
                               -1.0 / 3, 1.0};
    double v = big ? (u - 1.0) / (u + 1.0) : u;
    return (big ? 0.78539816339744830962 : 0.0) + v * ember_horner(v * v, c, 14);
}

/* atan2 of finite doubles: the angle of min(|x|, |y|) / max(|x|, |y|), then the octant
 * (pi/2 - a above the diagonal, pi - a for x < 0 or x = -0, y's sign); callers send
 * infinities and NaN to libm */
static inline double ember_atan2_d(double y, double x) {
    double ay = fabs(y), ax = fabs(x);
    double hi = ay > ax ? ay : ax, lo = ay > ax ? ax : ay;
    double a = ember_atan_unit(hi == 0.0 ? 0.0 : lo / hi);
    a = ay > ax ? 1.57079632679489661923 - a : a;
    a = (int64_t)ember_d_to_bits(x) < 0 ? 3.14159265358979323846 - a : a;     /* sign bit */
    return copysign(a, y);
}

/* atan: as atan2(x, 1); its limits at +-inf (pi/2, rounded to float) come out of 1 / |x| */
static inline float ember_fast_atanf(float x) {
    double ax = fabs((double)x);
    double a = ax > 1.0 ? 1.57079632679489661923 - ember_atan_unit(1.0 / ax) : ember_atan_unit(ax);
    return x != x ? x : (float)copysign(a, (double)x);
}

/* asin and acos of |x| <= 1 as atan2 with sqrt((1 - x)(1 + x)), exact operands in double;
 * NaN outside [-1, 1] */
static inline float ember_fast_asinf(float x) {
    double xd = (double)x, q = (1.0 - xd) * (1.0 + xd), c = sqrt(q > 0.0 ? q : 0.0);
    float r = (float)ember_atan2_d(xd, c);
    return fabsf(x) <= 1.0f ? r : NAN;
}

static inline float ember_fast_acosf(float x) {
    double xd = (double)x, q = (1.0 - xd) * (1.0 + xd), s = sqrt(q > 0.0 ? q : 0.0);
    float r = (float)ember_atan2_d(s, xd);
    return fabsf(x) <= 1.0f ? r : NAN;
}

#define EMBER_ATAN2_FAST_OK(y, x) ((fabsf(y) < INFINITY) & (fabsf(x) < INFINITY))
static inline float ember_fast_atan2f(float y, float x) {
    return (float)ember_atan2_d((double)y, (double)x);
}

/* fmod of floats, exactly (as libm): when |a / b| < 2^28 the double quotient truncates to
 * the true one (a non-integral quotient of two floats is 2^-24 or more from an integer,
 * beyond its rounding error), n b and a - n b are exact in double, and the result takes a's
 * sign (-0 included).  Callers send other chunks (b zero, inf or NaN, a inf or NaN, huge
 * quotients) to libm. */
#define EMBER_FMOD_FAST_OK(a, b) ((fabsf(a) < 0x1p28f * fabsf(b)) & (fabsf(b) < INFINITY))

static inline float ember_fast_fmodf(float a, float b) {
    double ad = (double)a, bd = (double)b;
    double n = trunc(ad / bd);
    return (float)copysign(ad - n * bd, ad);
}

/* torch.remainder (the divisor's sign) and floor_divide of floats, from r = fmod(a, b):
 * PyTorch's div_floor_floating, in selects rather than branches so loops vectorise */
#define EMBER_FLOOR_MOD(T, S, FLOOR, COPYSIGN)                                            \
static inline T ember_remainder_##S(T b, T r) {                                           \
    return ((r != 0) & ((r < 0) != (b < 0))) ? r + b : r;                                 \
}                                                                                         \
static inline T ember_floor_divide_##S(T a, T b, T r) {                                   \
    T d = (a - r) / b;                                                                    \
    d = ((r != 0) & ((b < 0) != (r < 0))) ? d - 1 : d;                                    \
    T f = FLOOR(d);                                                                       \
    f = d - f > (T)0.5 ? f + 1 : f;                                                       \
    T res = d != 0 ? f : COPYSIGN((T)0, a / b);                                           \
    return b == 0 ? a / b : res;                                                          \
}

EMBER_FLOOR_MOD(float, f32, floorf, copysignf)
EMBER_FLOOR_MOD(double, f64, floor, copysign)

#endif
