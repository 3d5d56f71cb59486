/* Scalar math for the C kernels ember.compile generates (ember_cpu/codegen.py): what the
 * fused loops call, written so the loops vectorise.
 *
 * sin/cos for float32: the argument is reduced in double precision by a multiple n of pi/2
 * (pi/2 in three parts, Cody-Waite; exact for |x| < 1e5, where the kernels use it) and the
 * Taylor polynomials of sin and cos on [-pi/4, pi/4] are evaluated in double, so results are
 * within one float ulp of the exact value.  The quadrant comes from the low bits of
 * n + 1.5 * 2^52 (a bit move, not a conversion, so it vectorises).  Kernels flag arguments
 * outside the fast range (and NaN/inf) and recompute those chunks with libm. */
#ifndef EMBER_CPU_CODEGEN_MATH_H
#define EMBER_CPU_CODEGEN_MATH_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_rowmath.h"

#define EMBER_FAST_TRIG_LIMIT 1e5f

static inline double ember_trig_core(float xf, int64_t shift) {
    double x = (double)xf;
    double t = x * 0.63661977236758134308 + 6755399441055744.0;
    int64_t bits;
    memcpy(&bits, &t, sizeof bits);
    double n = t - 6755399441055744.0;
    double r = ((x - n * 1.57079632673412561417e+00) - n * 6.07710050630396597660e-11)
               - n * 2.02226624871116645580e-21;
    int64_t q = bits + shift;
    double r2 = r * r;
    double s = r + r * r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (
        1.0 / 362880 + r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800.0))))));
    double c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (
        -1.0 / 3628800 + r2 * (1.0 / 479001600 + r2 * (-1.0 / 87178291200.0)))))));
    double v = (q & 1) ? c : s;
    return (q & 2) ? -v : v;
}

static inline float ember_fast_sinf(float x) { return (float)ember_trig_core(x, 0); }
static inline float ember_fast_cosf(float x) { return (float)ember_trig_core(x, 1); }

/* x when x > y or x is NaN, else y: PyTorch's NaN-propagating maximum (and minimum) */
#define EMBER_MAX(x, y) (((x) > (y)) | ((x) != (x)) ? (x) : (y))
#define EMBER_MIN(x, y) (((x) < (y)) | ((x) != (x)) ? (x) : (y))

#endif
