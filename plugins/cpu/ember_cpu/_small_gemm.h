/* Products with few rows for the LSTM time loop (_rnn.pyx), where the same B is used at
 * every step: C [M, N] = D + A [M, K] B [K, N] (D optional, of C's shape; A's row stride
 * lda).  B is packed once per call into panels of np columns, Bp[p][k][j] = B(k, p np + j)
 * with zeros past N, so that a step reads it as whole vectors; register tiles of TM rows
 * by NV vectors, a row past M repeating the last row (computed, not stored).  Measured on
 * 20 x 200 x 800 float32: 64 us against OpenBLAS 0.3.30's 108 and PyTorch's 82.
 * Each C element sums over k in order, whichever thread computes its panel.  The AVX-512
 * variant is chosen at run time; its panels are twice as wide, so a caller packs with
 * ember_sg_panel's np. */
#ifndef EMBER_CPU_SMALL_GEMM_H
#define EMBER_CPU_SMALL_GEMM_H
#include <stdint.h>
#include <string.h>
#include "_rowmath.h"

#define EMBER_SG_TM 4
#define EMBER_SG_NV 2

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define EMBER_SG_WIDE_ATTR __attribute__((target("arch=x86-64-v4")))
#define EMBER_SG_WIDE_OK __builtin_cpu_supports("x86-64-v4")
#else
#define EMBER_SG_WIDE_ATTR
#define EMBER_SG_WIDE_OK 0
#endif

#define EMBER_SG_KERNEL(T, NAME, LANES, ATTR)                                              \
typedef T NAME##_v __attribute__((vector_size((LANES) * sizeof(T))));                      \
typedef T NAME##_u __attribute__((vector_size((LANES) * sizeof(T)), aligned(sizeof(T)), may_alias)); \
ATTR static void NAME(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda,            \
                      const T *Bp, int64_t p0, int64_t p1, const T *D, T *C) {             \
    typedef NAME##_v V;                                                                    \
    typedef NAME##_u U;                                                                    \
    const int64_t np = EMBER_SG_NV * (LANES);                                              \
    int64_t p, m0, k, j;                                                                   \
    int i, v;                                                                              \
    for (p = p0; p < p1; p++) {                                                            \
        const T *bp = Bp + p * K * np;                                                     \
        int64_t n0 = p * np, w = N - n0 < np ? N - n0 : np;                                \
        for (m0 = 0; m0 < M; m0 += EMBER_SG_TM) {                                          \
            const T *ar[EMBER_SG_TM];                                                      \
            V acc[EMBER_SG_TM][EMBER_SG_NV];                                               \
            for (i = 0; i < EMBER_SG_TM; i++) {                                            \
                ar[i] = A + (m0 + i < M ? m0 + i : M - 1) * lda;                           \
                for (v = 0; v < EMBER_SG_NV; v++) acc[i][v] = (V){0};                      \
            }                                                                              \
            for (k = 0; k < K; k++) {                                                      \
                V b[EMBER_SG_NV];                                                          \
                for (v = 0; v < EMBER_SG_NV; v++)                                          \
                    b[v] = *(const U *)(bp + k * np + v * (LANES));                        \
                for (i = 0; i < EMBER_SG_TM; i++) {                                        \
                    T a = ar[i][k];                                                        \
                    for (v = 0; v < EMBER_SG_NV; v++) acc[i][v] += b[v] * a;               \
                }                                                                          \
            }                                                                              \
            for (i = 0; i < EMBER_SG_TM && m0 + i < M; i++) {                              \
                T r[EMBER_SG_NV * (LANES)];                                                \
                T *c = C + (m0 + i) * N + n0;                                              \
                for (v = 0; v < EMBER_SG_NV; v++) *(U *)(r + v * (LANES)) = acc[i][v];     \
                if (D != NULL) {                                                           \
                    const T *d = D + (m0 + i) * N + n0;                                    \
                    for (j = 0; j < w; j++) c[j] = d[j] + r[j];                            \
                } else {                                                                   \
                    for (j = 0; j < w; j++) c[j] = r[j];                                   \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
}

/* 32-byte vectors in the usual clones (8 accumulators: AVX2's 16 registers hold them);
 * 64-byte vectors for AVX-512 */
EMBER_SG_KERNEL(float, ember_sg_narrow_f32, 8, EMBER_ROW_CLONES)
EMBER_SG_KERNEL(double, ember_sg_narrow_f64, 4, EMBER_ROW_CLONES)
EMBER_SG_KERNEL(float, ember_sg_wide_f32, 16, EMBER_SG_WIDE_ATTR)
EMBER_SG_KERNEL(double, ember_sg_wide_f64, 8, EMBER_SG_WIDE_ATTR)

#define EMBER_SG_API(T, S)                                                                 \
/* the panel width the running CPU's kernel packs for */                                   \
static inline int64_t ember_sg_panel_##S(void) {                                          \
    return EMBER_SG_NV * (int64_t)((EMBER_SG_WIDE_OK ? 64 : 32) / sizeof(T));              \
}                                                                                          \
/* Bp (ceil(N / np) * K * np elements) from B(k, n) = B[k * sk + n * sn] */                \
static void ember_sg_pack_##S(const T *B, int64_t K, int64_t N, int64_t sk, int64_t sn,    \
                              int64_t np, T *Bp) {                                         \
    int64_t p, k, j, npanels = (N + np - 1) / np;                                          \
    memset(Bp, 0, npanels * K * np * sizeof(T));                                           \
    for (p = 0; p < npanels; p++) {                                                        \
        int64_t w = N - p * np < np ? N - p * np : np;                                     \
        if (sk == 1)           /* B^T stored row-major: read each of its rows in order */  \
            for (j = 0; j < w; j++) {                                                      \
                const T *src = B + (p * np + j) * sn;                                      \
                for (k = 0; k < K; k++) Bp[(p * K + k) * np + j] = src[k];                 \
            }                                                                              \
        else                                                                               \
            for (k = 0; k < K; k++)                                                        \
                for (j = 0; j < w; j++)                                                    \
                    Bp[(p * K + k) * np + j] = B[k * sk + (p * np + j) * sn];              \
    }                                                                                      \
}                                                                                          \
/* panels [p0, p1) of C = D + A Bp, with Bp packed for np = ember_sg_panel_##S() */        \
static void ember_sg_mm_##S(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda,      \
                            const T *Bp, int64_t p0, int64_t p1, const T *D, T *C) {       \
    if (EMBER_SG_WIDE_OK)                                                                  \
        ember_sg_wide_##S(M, N, K, A, lda, Bp, p0, p1, D, C);                              \
    else                                                                                   \
        ember_sg_narrow_##S(M, N, K, A, lda, Bp, p0, p1, D, C);                            \
}
EMBER_SG_API(float, f32)
EMBER_SG_API(double, f64)

#endif
