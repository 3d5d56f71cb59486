/* Philox4x32-10 (Salmon et al., SC'11) over a block of consecutive counters, the words
 * stored lane by lane: counter first + i, key (k0, k1), gives w0..w3[i], bit for bit what
 * _random.pyx's scalar philox4x32_10 gives for that counter (_random_rows.h turns them
 * into values).  gcc does not vectorise the 32x32->64-bit products well (it emulates a
 * 64x64 multiply), so x86-64 with AVX2 gets them spelled as vpmuludq, four counters a
 * vector; elsewhere the plain loop. */
#ifndef EMBER_CPU_PHILOX_H
#define EMBER_CPU_PHILOX_H
#include <stdint.h>

#define EMBER_PHILOX_M0 0xD2511F53u
#define EMBER_PHILOX_M1 0xCD9E8D57u
#define EMBER_PHILOX_W0 0x9E3779B9u
#define EMBER_PHILOX_W1 0xBB67AE85u

static void ember_philox_scalar(uint32_t *restrict w0, uint32_t *restrict w1,
                                uint32_t *restrict w2, uint32_t *restrict w3, uint64_t first,
                                int64_t n, uint32_t k0, uint32_t k1) {
    for (int64_t i = 0; i < n; i++) {
        uint64_t ctr = first + (uint64_t)i;
        uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
        uint32_t a = k0, b = k1;
        for (int r = 0; r < 10; r++) {
            uint64_t p0 = (uint64_t)EMBER_PHILOX_M0 * c0, p1 = (uint64_t)EMBER_PHILOX_M1 * c2;
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ a, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ b;
            c1 = (uint32_t)p1;
            c3 = (uint32_t)p0;
            c0 = n0;
            c2 = n2;
            a += EMBER_PHILOX_W0;
            b += EMBER_PHILOX_W1;
        }
        w0[i] = c0;
        w1[i] = c1;
        w2[i] = c2;
        w3[i] = c3;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* Each 64-bit lane holds one counter's 32-bit word in its low half.  vpmuludq reads only
 * the low halves, so the high halves may hold garbage between rounds (no masking); the
 * words are packed to 32 bits at the store. */
typedef struct { __m256i c[4]; } ember_philox_x4;

__attribute__((target("avx2"), always_inline)) static inline ember_philox_x4
ember_philox_rounds_x4(__m256i ctr, const __m256i *ka, const __m256i *kb) {
    const __m256i m0 = _mm256_set1_epi64x(EMBER_PHILOX_M0), m1 = _mm256_set1_epi64x(EMBER_PHILOX_M1);
    __m256i c0 = ctr, c1 = _mm256_srli_epi64(ctr, 32), c2 = _mm256_setzero_si256(), c3 = c2;
    for (int r = 0; r < 10; r++) {
        __m256i p0 = _mm256_mul_epu32(c0, m0), p1 = _mm256_mul_epu32(c2, m1);
        c0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1), ka[r]);
        c2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3), kb[r]);
        c1 = p1;
        c3 = p0;
    }
    return (ember_philox_x4){{c0, c1, c2, c3}};
}

/* eight counters an iteration, two independent chains of four (the rounds are a serial
 * dependency: the second chain fills the multiplier's latency) */
__attribute__((target("avx2"))) static void ember_philox_avx2(
        uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
        uint32_t *restrict w3, uint64_t first, int64_t n, uint32_t k0, uint32_t k1) {
    __m256i ka[10], kb[10];
    uint32_t a = k0, b = k1;
    for (int r = 0; r < 10; r++, a += EMBER_PHILOX_W0, b += EMBER_PHILOX_W1) {
        ka[r] = _mm256_set1_epi64x(a);
        kb[r] = _mm256_set1_epi64x(b);
    }
    const __m256i pack = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    uint32_t *w[4] = {w0, w1, w2, w3};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t c = first + (uint64_t)i;
        __m256i lo = _mm256_setr_epi64x((long long)c, (long long)(c + 1), (long long)(c + 2),
                                        (long long)(c + 3));
        ember_philox_x4 x = ember_philox_rounds_x4(lo, ka, kb);
        ember_philox_x4 y = ember_philox_rounds_x4(_mm256_add_epi64(lo, _mm256_set1_epi64x(4)),
                                                   ka, kb);
        for (int k = 0; k < 4; k++)
            _mm256_storeu_si256((__m256i *)(w[k] + i), _mm256_permute2x128_si256(
                _mm256_permutevar8x32_epi32(x.c[k], pack),
                _mm256_permutevar8x32_epi32(y.c[k], pack), 0x20));
    }
    ember_philox_scalar(w0 + i, w1 + i, w2 + i, w3 + i, first + (uint64_t)i, n - i, k0, k1);
}
#endif

static void ember_philox_block(uint32_t *restrict w0, uint32_t *restrict w1,
                               uint32_t *restrict w2, uint32_t *restrict w3, uint64_t first,
                               int64_t n, uint32_t k0, uint32_t k1) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
        ember_philox_avx2(w0, w1, w2, w3, first, n, k0, k1);
        return;
    }
#endif
    ember_philox_scalar(w0, w1, w2, w3, first, n, k0, k1);
}

#endif
