/* Products with few rows for the LSTM time loop (_rnn.pyx), where the same B is used at
 * every step: C [M, N] = D + A [M, K] B [K, N] (D optional, of C's shape; A's row stride
 * lda).  B is packed once per call into panels of np columns, Bp[p][k][j] = B(k, p np + j)
 * with zeros past N, so that a step reads it as whole vectors; register tiles of TM rows
 * by NV vectors, a row past M repeating the last row (computed, not stored).  Measured on
 * 20 x 200 x 800 float32: 64 us against OpenBLAS 0.3.30's 108 and PyTorch's 82.
 * Each C element sums over k in order, whichever thread computes its panel.  The AVX-512
 * variants are chosen at run time: panels of two vectors (twice as wide as AVX2's), or of
 * one vector by 8 rows when C has at most one vector's columns (attention's 16-wide heads
 * left half of each wide panel empty and stored C element by element: 1.6-2.4x PyTorch's
 * time); a caller packs with ember_sg_panel(N)'s np and passes it to ember_sg_mm. */
#ifndef EMBER_CPU_SMALL_GEMM_H
#define EMBER_CPU_SMALL_GEMM_H
#include <stdint.h>
#include <string.h>
#include "_rowmath.h"
#include "_transpose8.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define EMBER_SG_WIDE_ATTR __attribute__((target("arch=x86-64-v4")))
#define EMBER_SG_WIDE_OK __builtin_cpu_supports("x86-64-v4")
#else
#define EMBER_SG_WIDE_ATTR
#define EMBER_SG_WIDE_OK 0
#endif

#define EMBER_SG_KERNEL(T, NAME, LANES, NV, TM, ATTR)                                      \
typedef T NAME##_v __attribute__((vector_size((LANES) * sizeof(T))));                      \
typedef T NAME##_u __attribute__((vector_size((LANES) * sizeof(T)), aligned(sizeof(T)), may_alias)); \
ATTR static void NAME(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, int64_t ka, \
                      const T *Bp, int64_t p0, int64_t p1, const T *D, T *C) {             \
    typedef NAME##_v V;                                                                    \
    typedef NAME##_u U;                                                                    \
    const int64_t np = NV * (LANES);                                                       \
    int64_t p, m0, k, j;                                                                   \
    int i, v;                                                                              \
    for (p = p0; p < p1; p++) {                                                            \
        const T *bp = Bp + p * K * np;                                                     \
        int64_t n0 = p * np, w = N - n0 < np ? N - n0 : np;                                \
        for (m0 = 0; m0 < M; m0 += TM) {                                                   \
            const T *ar[TM];                                                               \
            V acc[TM][NV];                                                                 \
            for (i = 0; i < TM; i++) {                                                     \
                ar[i] = A + (m0 + i < M ? m0 + i : M - 1) * lda;                           \
                for (v = 0; v < NV; v++) acc[i][v] = (V){0};                               \
            }                                                                              \
            for (k = 0; k < K; k++) {                                                      \
                V b[NV];                                                                   \
                for (v = 0; v < NV; v++)                                                   \
                    b[v] = *(const U *)(bp + k * np + v * (LANES));                        \
                for (i = 0; i < TM; i++) {                                                 \
                    T a = ar[i][k * ka];                                                   \
                    for (v = 0; v < NV; v++) acc[i][v] += b[v] * a;                        \
                }                                                                          \
            }                                                                              \
            for (i = 0; i < TM && m0 + i < M; i++) {                                       \
                T r[NV * (LANES)];                                                         \
                T *c = C + (m0 + i) * N + n0;                                              \
                if (w == np) {      /* a whole panel: vector stores (short K made the      \
                                       element-wise copy a third of a tile's time) */      \
                    for (v = 0; v < NV; v++) {                                             \
                        V x = acc[i][v];                                                   \
                        if (D != NULL)                                                     \
                            x = *(const U *)(D + (m0 + i) * N + n0 + v * (LANES)) + x;     \
                        *(U *)(c + v * (LANES)) = x;                                       \
                    }                                                                      \
                    continue;                                                              \
                }                                                                          \
                for (v = 0; v < NV; v++) *(U *)(r + v * (LANES)) = acc[i][v];              \
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

/* tiles of 4 rows by 2 vectors (8 accumulators: AVX2's 16 registers hold them): 32-byte
 * vectors in the usual clones, 64-byte vectors for AVX-512; and 8 rows by one 64-byte
 * vector for narrow C on AVX-512 */
EMBER_SG_KERNEL(float, ember_sg_narrow_f32, 8, 2, 4, EMBER_ROW_CLONES)
EMBER_SG_KERNEL(double, ember_sg_narrow_f64, 4, 2, 4, EMBER_ROW_CLONES)
EMBER_SG_KERNEL(float, ember_sg_wide_f32, 16, 2, 4, EMBER_SG_WIDE_ATTR)
EMBER_SG_KERNEL(double, ember_sg_wide_f64, 8, 2, 4, EMBER_SG_WIDE_ATTR)
EMBER_SG_KERNEL(float, ember_sg_tall_f32, 16, 1, 8, EMBER_SG_WIDE_ATTR)
EMBER_SG_KERNEL(double, ember_sg_tall_f64, 8, 1, 8, EMBER_SG_WIDE_ATTR)

/* dst[c * ds + r] = src[r * ss + c] for an 8 x 8 block of floats */
static inline void ember_sg_transpose8_f32(const float *src, int64_t ss, float *dst,
                                           int64_t ds) {
    ember_v8f r[8], o[8];
    int i;
    for (i = 0; i < 8; i++) r[i] = *(const ember_u8f *)(src + i * ss);
    ember_transpose8_f32(r, o);
    for (i = 0; i < 8; i++) *(ember_u8f *)(dst + i * ds) = o[i];
}

#define EMBER_SG_API(T, S)                                                                 \
/* the panel width the running CPU's kernels pack for, for a C of N columns */             \
static inline int64_t ember_sg_panel_##S(int64_t N) {                                      \
    int64_t wide = EMBER_SG_WIDE_OK ? (int64_t)(64 / sizeof(T)) : 0;                       \
    if (wide && N > wide) return 2 * wide;                                                 \
    return wide ? wide : 2 * (int64_t)(32 / sizeof(T));                                    \
}                                                                                          \
/* dst[r * ld + c] = src[r * s0 + c * s1] for r < rows, c < cols: a matrix of any strides as \
 * rows of unit stride; a column-major float source (s0 == 1) goes 8 x 8 blocks at a time */ \
EMBER_ROW_CLONES static void ember_sg_gather_##S(const T *src, int64_t rows, int64_t cols, \
                                                 int64_t s0, int64_t s1, T *dst, int64_t ld) { \
    int64_t r, c, r0 = 0, c0 = 0;                                                          \
    if (s0 == 1 && s1 != 1 && sizeof(T) == 4)                                              \
        for (r0 = 0; r0 + 8 <= rows; r0 += 8)                                              \
            for (c0 = 0; c0 + 8 <= cols; c0 += 8)                                          \
                ember_sg_transpose8_f32((const float *)(src + c0 * s1 + r0), s1,           \
                                        (float *)(dst + r0 * ld + c0), ld);                \
    for (r = 0; r < rows; r++)     /* the rest: columns past the blocks, then rows */      \
        for (c = r < r0 ? c0 : 0; c < cols; c++) dst[r * ld + c] = src[r * s0 + c * s1];   \
}                                                                                          \
/* Bp (ceil(N / np) * K * np elements) from B(k, n) = B[k * sk + n * sn] */                \
static void ember_sg_pack_##S(const T *B, int64_t K, int64_t N, int64_t sk, int64_t sn,    \
                              int64_t np, T *Bp) {                                         \
    int64_t p, npanels = (N + np - 1) / np;                                                \
    memset(Bp, 0, npanels * K * np * sizeof(T));                                           \
    for (p = 0; p < npanels; p++)                                                          \
        ember_sg_gather_##S(B + p * np * sn, K, N - p * np < np ? N - p * np : np, sk, sn, \
                            Bp + p * K * np, np);                                          \
}                                                                                          \
/* panels [p0, p1) of C = D + A Bp, with Bp packed for np = ember_sg_panel_##S(N) */       \
static void ember_sg_mm_##S(int64_t np, int64_t M, int64_t N, int64_t K, const T *A,       \
                            int64_t lda, int64_t ka, const T *Bp, int64_t p0, int64_t p1,  \
                            const T *D, T *C) {                                            \
    if (!EMBER_SG_WIDE_OK)                                                                 \
        ember_sg_narrow_##S(M, N, K, A, lda, ka, Bp, p0, p1, D, C);                        \
    else if (np == (int64_t)(64 / sizeof(T)))                                              \
        ember_sg_tall_##S(M, N, K, A, lda, ka, Bp, p0, p1, D, C);                          \
    else                                                                                   \
        ember_sg_wide_##S(M, N, K, A, lda, ka, Bp, p0, p1, D, C);                          \
}
EMBER_SG_API(float, f32)
EMBER_SG_API(double, f64)

#endif
