/* float32 -> float16 / bfloat16 over a contiguous run (_copy.pyx's casts): ember/half.h's
 * conversions element for element (round to nearest even; a NaN becomes half's canonical
 * quiet NaN, bfloat16's quieted NaN), each loop vectorised: float16 through F16C where the
 * CPU has it, bfloat16 as integer arithmetic the compiler vectorises. */
#ifndef EMBER_CPU_CAST_ROWS_H
#define EMBER_CPU_CAST_ROWS_H
#include <stdint.h>
#include <string.h>

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
#endif

static void ember_f32_to_f16(uint16_t *o, const float *a, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("f16c")) {
        ember_f32_to_f16_f16c(o, a, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) o[i] = ember_float_to_half(a[i]);
}

#endif
