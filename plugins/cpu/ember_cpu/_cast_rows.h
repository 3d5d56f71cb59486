/* float32 <-> float16 / bfloat16 over a contiguous run (_copy.pyx's casts, _strided.pyx's
 * staging of half operands): ember/half.h's conversions element for element (round to
 * nearest even; a NaN becomes half's canonical quiet NaN, bfloat16's quieted NaN), each
 * loop vectorised: float16 through F16C where the CPU has it, bfloat16 as integer
 * arithmetic the compiler vectorises. */
#ifndef EMBER_CPU_CAST_ROWS_H
#define EMBER_CPU_CAST_ROWS_H
#include <stdint.h>
#include <string.h>

#include "ember/abi.h"
#include "ember/half.h"
#include "_rowmath.h"

EMBER_ROW_CLONES static void ember_f32_to_bf16(uint16_t *o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, a + i, sizeof u);
        uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        uint32_t q = (u >> 16) | 0x40u;
        o[i] = (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u) ? q : r);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* eight at a time through F16C (round to nearest even, the software rounding); a NaN is
 * rewritten to half.h's canonical one afterwards */
__attribute__((target("avx,f16c"))) static void ember_f32_to_f16_f16c(uint16_t *o,
                                                                      const float *a,
                                                                      int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(a + i);
        __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(o + i), h);
        int nan = _mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        for (int k = 0; nan && k < 8; k++)
            if ((nan >> k) & 1) o[i + k] = ember_float_to_half(a[i + k]);
    }
    for (; i < n; i++) o[i] = ember_float_to_half(a[i]);
}

/* float16 -> float32, eight at a time through F16C (exact); a NaN is rewritten by half.h's
 * conversion afterwards (F16C quiets a signalling one, half.h keeps its payload as is) */
__attribute__((target("avx,f16c"))) static void ember_f16_to_f32_f16c(float *o,
                                                                      const uint16_t *a,
                                                                      int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
        _mm256_storeu_ps(o + i, x);
        int nan = _mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        for (int k = 0; nan && k < 8; k++)
            if ((nan >> k) & 1) o[i + k] = ember_half_to_float(a[i + k]);
    }
    for (; i < n; i++) o[i] = ember_half_to_float(a[i]);
}
#endif

static void ember_f16_to_f32(float *o, const uint16_t *a, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("f16c")) {
        ember_f16_to_f32_f16c(o, a, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) o[i] = ember_half_to_float(a[i]);
}

/* bfloat16 -> float32: the bits shifted into place (vectorises) */
EMBER_ROW_CLONES static void ember_bf16_to_f32(float *o, const uint16_t *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)a[i] << 16;
        memcpy(o + i, &u, sizeof u);
    }
}

static void ember_f32_to_f16(uint16_t *o, const float *a, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("f16c")) {
        ember_f32_to_f16_f16c(o, a, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) o[i] = ember_float_to_half(a[i]);
}

/* Contiguous casts between the everyday dtypes (.float(), .long(), .int(), .double(), a
 * mask's .long()): C's conversions, the values the staged path gives (a float into an
 * integer truncates to int64 first, then wraps into a narrower type; bool reads != 0). */
#define EMBER_CAST_FN(NAME, FROM, TO, CONV)                                               \
EMBER_ROW_CLONES static void NAME(TO *restrict o, const FROM *restrict a, int64_t n) {     \
    for (int64_t i = 0; i < n; i++) { FROM x = a[i]; o[i] = CONV; }                       \
}
EMBER_CAST_FN(ember_cast_f32_f64, float, double, (double)x)
EMBER_CAST_FN(ember_cast_f64_f32, double, float, (float)x)
EMBER_CAST_FN(ember_cast_f32_i64, float, int64_t, (int64_t)x)
EMBER_CAST_FN(ember_cast_f64_i64, double, int64_t, (int64_t)x)
EMBER_CAST_FN(ember_cast_f64_i32, double, int32_t, (int32_t)(int64_t)x)
EMBER_CAST_FN(ember_cast_i64_f32, int64_t, float, (float)x)
EMBER_CAST_FN(ember_cast_i64_f64, int64_t, double, (double)x)
EMBER_CAST_FN(ember_cast_i32_f32, int32_t, float, (float)x)
EMBER_CAST_FN(ember_cast_i32_f64, int32_t, double, (double)x)
EMBER_CAST_FN(ember_cast_i32_i64, int32_t, int64_t, (int64_t)x)
EMBER_CAST_FN(ember_cast_i64_i32, int64_t, int32_t, (int32_t)x)
EMBER_CAST_FN(ember_cast_b_i64, uint8_t, int64_t, (int64_t)(x != 0))
EMBER_CAST_FN(ember_cast_u8_i64, uint8_t, int64_t, (int64_t)x)
EMBER_CAST_FN(ember_cast_b_f32, uint8_t, float, (float)(x != 0))
EMBER_CAST_FN(ember_cast_b_f64, uint8_t, double, (double)(x != 0))
EMBER_CAST_FN(ember_cast_f32_b, float, uint8_t, (uint8_t)(x != 0))
EMBER_CAST_FN(ember_cast_i64_b, int64_t, uint8_t, (uint8_t)(x != 0))
#undef EMBER_CAST_FN

/* float32 -> int32 as (int32_t)(int64_t)x: eight at a time through cvttps2dq where every
 * lane lies inside int32's range (the same value then), else element by element */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void ember_cast_f32_i32_avx2(int32_t *o, const float *a,
                                                                    int64_t n) {
    const __m256 lo = _mm256_set1_ps(-2147483648.0f), hi = _mm256_set1_ps(2147483648.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(a + i);
        __m256 in = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GE_OQ),
                                  _mm256_cmp_ps(x, hi, _CMP_LT_OQ));
        if (_mm256_movemask_ps(in) == 0xff)
            _mm256_storeu_si256((__m256i *)(o + i), _mm256_cvttps_epi32(x));
        else
            for (int k = 0; k < 8; k++) o[i + k] = (int32_t)(int64_t)a[i + k];
    }
    for (; i < n; i++) o[i] = (int32_t)(int64_t)a[i];
}
#endif

static void ember_cast_f32_i32(int32_t *o, const float *a, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
        ember_cast_f32_i32_avx2(o, a, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) o[i] = (int32_t)(int64_t)a[i];
}

/* the contiguous loop for (out, in) dtypes, or 0 when none here takes them */
static inline int ember_cast_contiguous(int out, int in, void *o, const void *a, int64_t n) {
#define EMBER_PAIR(OUT, IN) ((OUT) * 64 + (IN))
    switch (EMBER_PAIR(out, in)) {
    case EMBER_PAIR(EMBER_FLOAT16, EMBER_FLOAT32): ember_f32_to_f16(o, a, n); return 1;
    case EMBER_PAIR(EMBER_BFLOAT16, EMBER_FLOAT32): ember_f32_to_bf16(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT32, EMBER_FLOAT16): ember_f16_to_f32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT32, EMBER_BFLOAT16): ember_bf16_to_f32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT64, EMBER_FLOAT32): ember_cast_f32_f64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT32, EMBER_FLOAT64): ember_cast_f64_f32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT64, EMBER_FLOAT32): ember_cast_f32_i64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT64, EMBER_FLOAT64): ember_cast_f64_i64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT32, EMBER_FLOAT32): ember_cast_f32_i32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT32, EMBER_FLOAT64): ember_cast_f64_i32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT32, EMBER_INT64): ember_cast_i64_f32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT64, EMBER_INT64): ember_cast_i64_f64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT32, EMBER_INT32): ember_cast_i32_f32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT64, EMBER_INT32): ember_cast_i32_f64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT64, EMBER_INT32): ember_cast_i32_i64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT32, EMBER_INT64): ember_cast_i64_i32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT64, EMBER_BOOL): ember_cast_b_i64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_INT64, EMBER_UINT8): ember_cast_u8_i64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT32, EMBER_BOOL): ember_cast_b_f32(o, a, n); return 1;
    case EMBER_PAIR(EMBER_FLOAT64, EMBER_BOOL): ember_cast_b_f64(o, a, n); return 1;
    case EMBER_PAIR(EMBER_BOOL, EMBER_FLOAT32): ember_cast_f32_b(o, a, n); return 1;
    case EMBER_PAIR(EMBER_BOOL, EMBER_INT64): ember_cast_i64_b(o, a, n); return 1;
    default: return 0;
    }
#undef EMBER_PAIR
}

#endif
