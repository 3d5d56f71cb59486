/* Whole-array float32/float64 add, sub, mul and div for the elementwise kernels
 * (_elementwise.pyx): 32 bytes at a time in GCC vector types (wider ones went through the
 * stack in the AVX2 clone), built for several instruction sets.  `o` may be `a` or `b`
 * (an in-place op; the core never passes a partial overlap), which sends a plain loop to
 * the scalar branch of its alias check.  Plain IEEE arithmetic: the same bits as a scalar
 * loop.  Below them, float32 fmod, remainder, floor_divide and atan2 by chunks. */
#ifndef EMBER_CPU_BINARY_MATH_H
#define EMBER_CPU_BINARY_MATH_H
#include <string.h>

#include "_rowmath.h"
#include "_vecmath.h"

#define EMBER_EW_ARITH(T, S, NAME, OP)                                                     \
EMBER_ROW_CLONES static void ember_##NAME##_##S(T *o, const T *a, const T *b, int64_t n) { \
    typedef T vec __attribute__((vector_size(32)));                                        \
    enum { W = 32 / sizeof(T) };                                                           \
    int64_t i = 0;                                                                         \
    for (; i + W <= n; i += W) {                                                           \
        vec x, y;                                                                          \
        memcpy(&x, a + i, sizeof x);                                                       \
        memcpy(&y, b + i, sizeof y);                                                       \
        x = x OP y;                                                                        \
        memcpy(o + i, &x, sizeof x);                                                       \
    }                                                                                      \
    for (; i < n; i++) o[i] = a[i] OP b[i];                                                \
}

/* the same with one operand a broadcast number: o = a OP s, or o = s OP a (`rev`) */
#define EMBER_EW_ARITH_SCALAR(T, S, NAME, OP)                                              \
EMBER_ROW_CLONES static void ember_##NAME##_scalar_##S(T *o, const T *a, T s, int rev,     \
                                                       int64_t n) {                        \
    typedef T vec __attribute__((vector_size(32)));                                        \
    enum { W = 32 / sizeof(T) };                                                           \
    int64_t i = 0;                                                                         \
    for (; i + W <= n; i += W) {                                                           \
        vec x;                                                                             \
        memcpy(&x, a + i, sizeof x);                                                       \
        x = rev ? s OP x : x OP s;                                                         \
        memcpy(o + i, &x, sizeof x);                                                       \
    }                                                                                      \
    for (; i < n; i++) o[i] = rev ? s OP a[i] : a[i] OP s;                                 \
}

/* maximum/minimum with one operand a broadcast number (clamp's bounds): _scalar.pxd's
 * _max/_min element for element (the first operand wins a tie, NaN propagates), in a
 * branch-free select the compiler vectorises */
#define EMBER_EW_EXTREMUM_SCALAR(T, S, NAME, CMP)                                          \
EMBER_ROW_CLONES static void ember_##NAME##_scalar_##S(T *o, const T *a, T s, int rev,     \
                                                       int64_t n) {                        \
    if (rev) {                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                  \
            T x = a[i];                                                                    \
            o[i] = ((s CMP x) | (s != s)) ? s : x;                                         \
        }                                                                                  \
    } else {                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                  \
            T x = a[i];                                                                    \
            o[i] = ((x CMP s) | (x != x)) ? x : s;                                         \
        }                                                                                  \
    }                                                                                      \
}

EMBER_EW_EXTREMUM_SCALAR(float, f32, maximum, >) EMBER_EW_EXTREMUM_SCALAR(float, f32, minimum, <)
EMBER_EW_EXTREMUM_SCALAR(double, f64, maximum, >) EMBER_EW_EXTREMUM_SCALAR(double, f64, minimum, <)

/* each (type, suffix, op) once, for both forms */
#define EMBER_EW_EACH(FORM)                                                                \
    FORM(float, f32, add, +) FORM(float, f32, sub, -) FORM(float, f32, mul, *)             \
    FORM(float, f32, div, /) FORM(double, f64, add, +) FORM(double, f64, sub, -)           \
    FORM(double, f64, mul, *) FORM(double, f64, div, /)

EMBER_EW_EACH(EMBER_EW_ARITH)
EMBER_EW_EACH(EMBER_EW_ARITH_SCALAR)

/* float32 binary rows by chunks: a chunk whose operands all pass OK takes FAST, computed in
 * double (_vecmath.h), any other libm's SLOW; r is that result, EXPR the row's value from x,
 * y and r.  fmod is exact either way, so remainder and floor_divide (PyTorch's formulas on
 * top of it) keep libm's bits.  The test comes before any store, so o may alias a or b. */
#define EMBER_CHUNKED_ROW(NAME, OK, FAST, SLOW, EXPR)                                     \
EMBER_ROW_CLONES static void ember_##NAME##_row_f32(float *o, const float *a,             \
                                                    const float *b, int64_t n) {          \
    for (int64_t i0 = 0; i0 < n; i0 += EMBER_LIBM_CHUNK) {                                \
        int64_t m = n - i0 < EMBER_LIBM_CHUNK ? n - i0 : EMBER_LIBM_CHUNK, j;             \
        int fast = 1;                                                                     \
        for (j = 0; j < m; j++) fast &= OK(a[i0 + j], b[i0 + j]);                         \
        if (fast)                                                                         \
            for (j = 0; j < m; j++) {                                                     \
                float x = a[i0 + j], y = b[i0 + j], r = FAST(x, y);                       \
                o[i0 + j] = EXPR;                                                         \
            }                                                                             \
        else                                                                              \
            for (j = 0; j < m; j++) {                                                     \
                float x = a[i0 + j], y = b[i0 + j], r = SLOW(x, y);                       \
                o[i0 + j] = EXPR;                                                         \
            }                                                                             \
    }                                                                                     \
}

EMBER_CHUNKED_ROW(fmod, EMBER_FMOD_FAST_OK, ember_fast_fmodf, fmodf, r)
EMBER_CHUNKED_ROW(remainder, EMBER_FMOD_FAST_OK, ember_fast_fmodf, fmodf,
                  ember_remainder_f32(y, r))
EMBER_CHUNKED_ROW(floor_divide, EMBER_FMOD_FAST_OK, ember_fast_fmodf, fmodf,
                  ember_floor_divide_f32(x, y, r))
EMBER_CHUNKED_ROW(atan2, EMBER_ATAN2_FAST_OK, ember_fast_atan2f, atan2f, r)

#endif
