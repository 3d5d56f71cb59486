/* A blocked, packed GEMM for float32 and float64: C [M, N] = A [M, K] B [K, N], A and B of
 * any strides (packing reads them), C rows of unit stride (row stride ldc).
 *
 * The BLIS loop nest on one tile of C (ember_gemm_tile_*, a caller's work item): NC
 * columns at a time, and for each block of KC steps of k, B's block is packed into panels
 * of NR columns (B(k, j) at Bp[panel][k][j], zeros past N) and, for each block of MC rows,
 * A's into panels of MR rows (Ap[panel][k][i], zeros past M).  The micro-kernel keeps an
 * MR x NR block of C in registers over the KC steps (6 x 2 vectors: 12 accumulators, two B
 * vectors and a broadcast fit AVX2's 16 registers) and adds it to C (stores it for the
 * first block).  An A block (MC x KC) stays in L2 while each B panel (KC x NR) streams
 * through L1.  Measured on one Zen 3 core: 0.96-1.06x OpenBLAS 0.3's time alone on a
 * language model's and a transformer's products, 0.8-0.95x inside those programs.
 *
 * Every C element sums its k in order, KC at a time, whatever the tiling or the threads,
 * so results do not depend on the thread count.  The x86-64-v3/v4 kernels are chosen at
 * run time (their panels are wider: a caller asks ember_gemm_nr_* for the width). */
#ifndef EMBER_CPU_GEMM_H
#define EMBER_CPU_GEMM_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "_transpose8.h"

#define EMBER_GEMM_MR 6
#define EMBER_GEMM_KC 256
#define EMBER_GEMM_MC 144   /* a multiple of MR: 144 x 256 floats (144 KiB) sit in L2 */
#define EMBER_GEMM_NC 2048  /* a packed B block: 256 x 2048 floats (2 MiB) in L3 */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define EMBER_GEMM_V3 __attribute__((target("arch=x86-64-v3")))
#define EMBER_GEMM_V4 __attribute__((target("arch=x86-64-v4")))
#define EMBER_GEMM_V3_OK __builtin_cpu_supports("x86-64-v3")
#define EMBER_GEMM_V4_OK __builtin_cpu_supports("x86-64-v4")
#else
#define EMBER_GEMM_V3
#define EMBER_GEMM_V4
#define EMBER_GEMM_V3_OK 0
#define EMBER_GEMM_V4_OK 0
#endif

/* Ap[k][i] = src[i * sm + k] for 6 float rows and k < 8: the rows (two zero rows beside
 * them) transposed, stored 8 lanes 6 apart in order, so each store's two zero lanes are
 * overwritten by the next (the last one's land in the 2 spare elements past the block) */
EMBER_GEMM_V3 static inline void ember_gemm_rows6x8(const float *src, int64_t sm, float *dst) {
    ember_v8f r[8], o[8];
    int i;
    for (i = 0; i < 6; i++) r[i] = *(const ember_u8f *)(src + i * sm);
    r[6] = r[7] = (ember_v8f){0};
    ember_transpose8_f32(r, o);
    for (i = 0; i < 8; i++) *(ember_u8f *)(dst + i * 6) = o[i];
}

/* Bp[k][j] = src[j * sn + k] for j, k < 8 (a column-major float B), Bp's rows nr apart */
EMBER_GEMM_V3 static inline void ember_gemm_cols8x8(const float *src, int64_t sn, float *dst,
                                                    int64_t nr) {
    ember_v8f r[8], o[8];
    int i;
    for (i = 0; i < 8; i++) r[i] = *(const ember_u8f *)(src + i * sn);
    ember_transpose8_f32(r, o);
    for (i = 0; i < 8; i++) *(ember_u8f *)(dst + i * nr) = o[i];
}

/* one variant: element type T, LANES elements a vector, NAME its functions' prefix */
#define EMBER_GEMM_VARIANT(T, NAME, LANES, ATTR)                                           \
typedef T NAME##_v __attribute__((vector_size((LANES) * sizeof(T))));                      \
typedef T NAME##_u                                                                         \
    __attribute__((vector_size((LANES) * sizeof(T)), aligned(sizeof(T)), may_alias));      \
/* c[0:mr, 0:nr] (+)= ap-panel x bp-panel over kc steps */                                 \
ATTR static inline void NAME##_kernel(int64_t kc, const T *ap, const T *bp, T *c,           \
                                      int64_t ldc, int64_t mr, int64_t nr, int add) {      \
    typedef NAME##_v V;                                                                    \
    typedef NAME##_u U;                                                                    \
    enum { MR = EMBER_GEMM_MR, NR = 2 * (LANES) };                                         \
    V acc[MR][2];                                                                          \
    int64_t k;                                                                             \
    int i, j;                                                                              \
    for (i = 0; i < MR; i++) {                                                             \
        acc[i][0] = acc[i][1] = (V){0};                                                    \
        __builtin_prefetch(c + i * ldc, 1);                                                \
        __builtin_prefetch(c + i * ldc + NR - 1, 1);                                       \
    }                                                                                      \
    _Pragma("GCC unroll 4")                                                                \
    for (k = 0; k < kc; k++) {                                                             \
        V b0 = *(const V *)(bp + k * NR), b1 = *(const V *)(bp + k * NR + (LANES));        \
        for (i = 0; i < MR; i++) {                                                         \
            T a = ap[k * MR + i];                                                          \
            acc[i][0] += b0 * a;                                                           \
            acc[i][1] += b1 * a;                                                           \
        }                                                                                  \
    }                                                                                      \
    if (mr == MR && nr == NR) {                                                            \
        for (i = 0; i < MR; i++) {                                                         \
            U *row = (U *)(c + i * ldc);                                                   \
            if (add) {                                                                     \
                row[0] = row[0] + acc[i][0];                                               \
                *(U *)(c + i * ldc + (LANES)) = *(U *)(c + i * ldc + (LANES)) + acc[i][1]; \
            } else {                                                                       \
                row[0] = acc[i][0];                                                        \
                *(U *)(c + i * ldc + (LANES)) = acc[i][1];                                 \
            }                                                                              \
        }                                                                                  \
        return;                                                                            \
    }                                                                                      \
    T tile[MR * NR] __attribute__((aligned(64)));                                          \
    for (i = 0; i < MR; i++) {                                                             \
        *(V *)(tile + i * NR) = acc[i][0];                                                 \
        *(V *)(tile + i * NR + (LANES)) = acc[i][1];                                       \
    }                                                                                      \
    for (i = 0; i < mr; i++)                                                               \
        for (j = 0; j < nr; j++)                                                           \
            c[i * ldc + j] = add ? c[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];   \
}                                                                                          \
/* Bp[q][k][j] = B(k, q NR + j) for k < kc, j < n; zeros past n */                         \
ATTR static void NAME##_pack_b(const T *b, int64_t sk, int64_t sn, int64_t kc, int64_t n,   \
                               T *bp) {                                                    \
    enum { NR = 2 * (LANES) };                                                             \
    int64_t q, k, j, w;                                                                    \
    for (q = 0; q * NR < n; q++) {                                                         \
        const T *src = b + q * NR * sn;                                                    \
        T *dst = bp + q * kc * NR;                                                         \
        w = n - q * NR < NR ? n - q * NR : NR;                                             \
        k = 0;                                                                             \
        if (sizeof(T) == 4 && (LANES) >= 8 && sk == 1 && w == NR)  /* columns, AVX2 */     \
            for (; k + 8 <= kc; k += 8, dst += 8 * NR)                                     \
                for (j = 0; j < NR; j += 8)                                                \
                    ember_gemm_cols8x8((const float *)(src + j * sn + k), sn,              \
                                       (float *)(dst + j), NR);                            \
        for (; k < kc; k++, dst += NR) {                                                   \
            if (sn == 1 && w == NR) {                                                      \
                *(NAME##_v *)dst = *(const NAME##_u *)(src + k * sk);                      \
                *(NAME##_v *)(dst + (LANES)) = *(const NAME##_u *)(src + k * sk + (LANES)); \
                continue;                                                                  \
            }                                                                              \
            for (j = 0; j < w; j++) dst[j] = src[k * sk + j * sn];                         \
            for (; j < NR; j++) dst[j] = 0;                                                \
        }                                                                                  \
    }                                                                                      \
}                                                                                          \
/* Ap[p][k][i] = A(p MR + i, k) for i < m, k < kc; zeros past m */                         \
ATTR static void NAME##_pack_a(const T *a, int64_t sm, int64_t sk, int64_t m, int64_t kc,   \
                               T *ap) {                                                    \
    enum { MR = EMBER_GEMM_MR };                                                           \
    int64_t p, k, i, h;                                                                    \
    for (p = 0; p * MR < m; p++) {                                                         \
        const T *src = a + p * MR * sm;                                                    \
        T *dst = ap + p * kc * MR;                                                         \
        h = m - p * MR < MR ? m - p * MR : MR;                                             \
        if (h == MR && sk == 1) {        /* rows of A: MR streams read side by side */     \
            k = 0;                                                                         \
            if (sizeof(T) == 4 && (LANES) >= 8)  /* float under AVX2: 8 k at a time */     \
                for (; k + 8 <= kc; k += 8)                                                \
                    ember_gemm_rows6x8((const float *)(src + k), sm, (float *)(dst + k * MR)); \
            for (; k < kc; k++)                                                            \
                for (i = 0; i < MR; i++) dst[k * MR + i] = src[i * sm + k];                \
            continue;                                                                      \
        }                                                                                  \
        if (h == MR && sm == 1) {        /* columns of A: MR adjacent elements a step */   \
            for (k = 0; k < kc; k++)                                                       \
                for (i = 0; i < MR; i++) dst[k * MR + i] = src[k * sk + i];                \
            continue;                                                                      \
        }                                                                                  \
        for (k = 0; k < kc; k++) {                                                         \
            for (i = 0; i < h; i++) dst[k * MR + i] = src[i * sm + k * sk];                \
            for (; i < MR; i++) dst[k * MR + i] = 0;                                       \
        }                                                                                  \
    }                                                                                      \
}                                                                                          \
/* C[m0:m1, n0:n1] (+)= A[m0:m1, :] B[:, n0:n1] (added when `add`), NC columns at a time; \
 * buf: ember_gemm_scratch_* elements, aligned to the vector size */                       \
ATTR static void NAME##_tile(int64_t K, const T *a, int64_t sam, int64_t sak, const T *b,   \
                             int64_t sbk, int64_t sbn, T *c, int64_t ldc, int64_t m0,      \
                             int64_t m1, int64_t n0, int64_t n1, int add, T *buf) {        \
    enum { MR = EMBER_GEMM_MR, NR = 2 * (LANES), KC = EMBER_GEMM_KC, MC = EMBER_GEMM_MC,   \
           NC = EMBER_GEMM_NC };                                                           \
    int64_t width = n1 - n0 < NC ? n1 - n0 : NC;                                           \
    T *bp = buf, *ap = buf + (K < KC ? K : KC) * ((width + NR - 1) / NR) * NR;             \
    int64_t jc, n, pc, ic, jr, ir, kc, mc;                                                 \
    for (jc = n0; jc < n1; jc += NC) {                                                     \
        n = n1 - jc < NC ? n1 - jc : NC;                                                   \
        for (pc = 0; pc < K; pc += KC) {                                                   \
            kc = K - pc < KC ? K - pc : KC;                                                \
            NAME##_pack_b(b + pc * sbk + jc * sbn, sbk, sbn, kc, n, bp);                   \
            for (ic = m0; ic < m1; ic += MC) {                                             \
                mc = m1 - ic < MC ? m1 - ic : MC;                                          \
                NAME##_pack_a(a + ic * sam + pc * sak, sam, sak, mc, kc, ap);              \
                for (jr = 0; jr < n; jr += NR)                                             \
                    for (ir = 0; ir < mc; ir += MR)                                        \
                        NAME##_kernel(kc, ap + ir * kc, bp + jr * kc,                      \
                                      c + (ic + ir) * ldc + jc + jr, ldc,                  \
                                      mc - ir < MR ? mc - ir : MR,                         \
                                      n - jr < NR ? n - jr : NR, add || pc > 0);           \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
}

EMBER_GEMM_VARIANT(float, ember_gemm_sse_f32, 4, )
EMBER_GEMM_VARIANT(double, ember_gemm_sse_f64, 2, )
EMBER_GEMM_VARIANT(float, ember_gemm_avx2_f32, 8, EMBER_GEMM_V3)
EMBER_GEMM_VARIANT(double, ember_gemm_avx2_f64, 4, EMBER_GEMM_V3)
EMBER_GEMM_VARIANT(float, ember_gemm_avx512_f32, 16, EMBER_GEMM_V4)
EMBER_GEMM_VARIANT(double, ember_gemm_avx512_f64, 8, EMBER_GEMM_V4)

/* the highest variant to use (2: AVX-512, 1: AVX2, 0: SSE2), for tests of the others */
static int ember_gemm_cap = 2;

/* the dispatch a type: the panel width the running CPU's kernel packs for, and a tile */
#define EMBER_GEMM_API(T, S)                                                               \
static inline int ember_gemm_level_##S(void) {                                            \
    static int level = -1;                                                                 \
    if (level < 0) level = EMBER_GEMM_V4_OK ? 2 : EMBER_GEMM_V3_OK ? 1 : 0;                \
    return ember_gemm_cap < level ? ember_gemm_cap : level;                                \
}                                                                                          \
static inline int64_t ember_gemm_nr_##S(void) {                                           \
    return 2 * (int64_t)((16 << ember_gemm_level_##S()) / sizeof(T));                      \
}                                                                                          \
/* the scratch a tile of m rows and n columns over K needs, in elements (with room for   \
 * the 64-byte alignment and ember_gemm_rows6x8's 2 spare elements) */                     \
static inline int64_t ember_gemm_scratch_##S(int64_t m, int64_t n, int64_t K) {           \
    int64_t nr = ember_gemm_nr_##S(), kc = K < EMBER_GEMM_KC ? K : EMBER_GEMM_KC;          \
    if (n > EMBER_GEMM_NC) n = EMBER_GEMM_NC;                                              \
    int64_t mc = m < EMBER_GEMM_MC ? (m + EMBER_GEMM_MR - 1) / EMBER_GEMM_MR * EMBER_GEMM_MR \
                                   : EMBER_GEMM_MC;                                        \
    return kc * ((n + nr - 1) / nr * nr + mc) + 64 / sizeof(T) + 2;                        \
}                                                                                          \
static inline void ember_gemm_tile_##S(int64_t K, const T *a, int64_t sam, int64_t sak,    \
                                       const T *b, int64_t sbk, int64_t sbn, T *c,         \
                                       int64_t ldc, int64_t m0, int64_t m1, int64_t n0,    \
                                       int64_t n1, int add, T *buf) {                      \
    buf = (T *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);                                   \
    switch (ember_gemm_level_##S()) {                                                      \
    case 2:                                                                                \
        ember_gemm_avx512_##S##_tile(K, a, sam, sak, b, sbk, sbn, c, ldc, m0, m1, n0, n1,  \
                                     add, buf);                                            \
        break;                                                                             \
    case 1:                                                                                \
        ember_gemm_avx2_##S##_tile(K, a, sam, sak, b, sbk, sbn, c, ldc, m0, m1, n0, n1,    \
                                   add, buf);                                              \
        break;                                                                             \
    default:                                                                               \
        ember_gemm_sse_##S##_tile(K, a, sam, sak, b, sbk, sbn, c, ldc, m0, m1, n0, n1,     \
                                  add, buf);                                               \
    }                                                                                      \
}
EMBER_GEMM_API(float, f32)
EMBER_GEMM_API(double, f64)

#endif
