/* Direct stride-1 convolution for the fused kernels (_conv.pyx), for float and double:
 * out[m, oh, ow] = sum over (c, ki, kj) of wt[(c, ki, kj), m] * x[c, oh + ki - ph, ow + kj - pw].
 * The input is copied once into a zero-padded plane xp [C, Hp, Wp]; on the flat index
 * p = oh * Wp + ow every tap (c, ki, kj) is then the contiguous run xp + c*Hp*Wp + ki*Wp + kj
 * + p, so the product is a GEMM whose B rows are shifted views of xp and needs no column
 * buffer.  Outputs are computed at all Wp columns of a row (the last kw - 1 are discarded)
 * in register tiles of EMBER_DC_M outputs by EMBER_DC_NV vectors of pixels, summing the
 * taps in a fixed order (the same bits for any thread count).  The input gradient of a
 * stride-1 convolution is this with the weights flipped and transposed (the caller packs
 * wt), the output gradient as x and padding kh - 1 - ph. */
#ifndef EMBER_CPU_CONV_DIRECT_H
#define EMBER_CPU_CONV_DIRECT_H
#include <stdint.h>
#include <string.h>
#include "_rowmath.h"

#define EMBER_DC_M 8           /* wt's columns are padded to a multiple of this */
#define EMBER_DC_TMAX 64       /* no variant's pixel tile is longer */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define EMBER_DC_WIDE 1        /* an AVX-512 variant, chosen at run time */
#define EMBER_DC_WIDE_ATTR __attribute__((target("arch=x86-64-v4")))
#else
#define EMBER_DC_WIDE 0
#endif

/* the work buffer (in elements) for C input planes of H x W, M outputs, padding ph, pw and
 * a kh-row kernel: the padded planes, then the outputs at every padded column */
static inline int64_t ember_dconv_work(int64_t C, int64_t H, int64_t W, int64_t M,
                                       int64_t kh, int64_t ph, int64_t pw) {
    int64_t Hp = H + 2 * ph, Wp = W + 2 * pw, P = (Hp - kh + 1) * Wp;
    int64_t Mr = (M + EMBER_DC_M - 1) / EMBER_DC_M * EMBER_DC_M;
    return C * Hp * Wp + 2 * EMBER_DC_TMAX + Mr * (P + EMBER_DC_TMAX);
}

/* x [C, H, W] -> out [M, Ho, Wo] (+ bias[m] when bias is not NULL); wt [C*kh*kw, Mr]
 * with Mr = M rounded up to EMBER_DC_M (zero columns past M); work holds
 * ember_dconv_work elements.  Register tiles of TM outputs by NV vectors of LANES. */
#define EMBER_DC_TYPES(T, NAME, LANES)                                                     \
typedef T NAME##_v __attribute__((vector_size((LANES) * sizeof(T))));                      \
typedef T NAME##_u __attribute__((vector_size((LANES) * sizeof(T)), aligned(sizeof(T)), may_alias));

#define EMBER_DCONV(T, NAME, LANES, TM, NV, ATTR)                                          \
EMBER_DC_TYPES(T, NAME, LANES)                                                             \
ATTR static void NAME(                                                                     \
        const T *x, int64_t C, int64_t H, int64_t W, const T *wt, int64_t M, int64_t kh,   \
        int64_t kw, int64_t ph, int64_t pw, const T *bias, T *out, T *work) {              \
    typedef NAME##_v V;                                                                    \
    typedef NAME##_u U;                                                                    \
    const int64_t t = (NV) * (LANES);                                                      \
    int64_t Hp = H + 2 * ph, Wp = W + 2 * pw, Ho = Hp - kh + 1, Wo = Wp - kw + 1;          \
    int64_t plane = Hp * Wp, P = Ho * Wp, Pr = (P + t - 1) / t * t;                        \
    int64_t Mr = (M + EMBER_DC_M - 1) / EMBER_DC_M * EMBER_DC_M;                           \
    int64_t xsz = C * plane + (Pr - P) + t;                                                \
    T *xp = work, *of = work + xsz;                                                        \
    int64_t c, i, j, m0, p0, mi;                                                           \
    memset(xp, 0, xsz * sizeof(T));                                                        \
    for (c = 0; c < C; c++)                                                                \
        for (i = 0; i < H; i++) {                                                          \
            const T *src = x + (c * H + i) * W;                                            \
            T *dst = xp + c * plane + (i + ph) * Wp + pw;                                  \
            for (j = 0; j < W; j++) dst[j] = src[j];                                       \
        }                                                                                  \
    for (p0 = 0; p0 < Pr; p0 += t)                                                         \
        for (m0 = 0; m0 < M; m0 += (TM)) {                                                 \
            V a[TM][NV];                                                                   \
            const T *wk = wt + m0;                                                         \
            int64_t ki, kj;                                                                \
            for (mi = 0; mi < (TM); mi++)                                                  \
                for (j = 0; j < (NV); j++) a[mi][j] = (V){0};                              \
            for (c = 0; c < C; c++)                                                        \
                for (ki = 0; ki < kh; ki++) {                                              \
                    const T *s = xp + c * plane + ki * Wp + p0;                            \
                    for (kj = 0; kj < kw; kj++, wk += Mr) {                                \
                        V v[NV];                                                           \
                        for (j = 0; j < (NV); j++)                                         \
                            v[j] = *(const U *)(s + kj + j * (LANES));                     \
                        for (mi = 0; mi < (TM); mi++) {                                    \
                            T b = wk[mi];                                                  \
                            for (j = 0; j < (NV); j++) a[mi][j] += v[j] * b;               \
                        }                                                                  \
                    }                                                                      \
                }                                                                          \
            for (mi = 0; mi < (TM); mi++)                                                  \
                for (j = 0; j < (NV); j++)                                                 \
                    *(U *)(of + (m0 + mi) * Pr + p0 + j * (LANES)) = a[mi][j];             \
        }                                                                                  \
    for (mi = 0; mi < M; mi++) {                                                           \
        T bv = bias != NULL ? bias[mi] : (T)0;                                             \
        for (i = 0; i < Ho; i++) {                                                         \
            const T *src = of + mi * Pr + i * Wp;                                          \
            T *dst = out + (mi * Ho + i) * Wo;                                             \
            for (j = 0; j < Wo; j++) dst[j] = src[j] + bv;                                 \
        }                                                                                  \
    }                                                                                      \
}

/* The weight gradient, summed into acc [C*kh*kw, M] (row stride M): acc[(c, ki, kj), m] +=
 * sum over the output pixels (oh, ow) of gy[m, oh, ow] * x[c, oh + ki - ph, ow + kj - pw].
 * gy is transposed into gt [Ho*Wo, Mr] (zero columns past M) so that each pixel is a
 * vector run over the outputs times a broadcast tap; only real pixels are summed (no
 * padded-column products that an inf input would turn into NaN).  Register tiles of TK
 * taps by NV vectors of outputs; each pixel's products are added in pixel order. */
#define EMBER_DCONV_WGRAD(T, NAME, LANES, TK, NV, ATTR)                                    \
EMBER_DC_TYPES(T, NAME, LANES)                                                             \
ATTR static void NAME(                                                                     \
        const T *x, int64_t C, int64_t H, int64_t W, const T *gy, int64_t M, int64_t kh,   \
        int64_t kw, int64_t ph, int64_t pw, T *acc, T *work) {                             \
    typedef NAME##_v V;                                                                    \
    typedef NAME##_u U;                                                                    \
    const int64_t t = (NV) * (LANES);                                                      \
    int64_t Hp = H + 2 * ph, Wp = W + 2 * pw, Ho = Hp - kh + 1, Wo = Wp - kw + 1;          \
    int64_t plane = Hp * Wp, L = Ho * Wo, K = C * kh * kw, Mr = (M + t - 1) / t * t;       \
    T *xp = work, *gt = work + C * plane;                                                  \
    int64_t c, i, j, m, k0, m0, ti, oh, ow;                                                \
    memset(xp, 0, C * plane * sizeof(T));                                                  \
    for (c = 0; c < C; c++)                                                                \
        for (i = 0; i < H; i++) {                                                          \
            const T *src = x + (c * H + i) * W;                                            \
            T *dst = xp + c * plane + (i + ph) * Wp + pw;                                  \
            for (j = 0; j < W; j++) dst[j] = src[j];                                       \
        }                                                                                  \
    for (i = 0; i < L; i++) {                                                              \
        for (m = 0; m < M; m++) gt[i * Mr + m] = gy[m * L + i];                            \
        for (m = M; m < Mr; m++) gt[i * Mr + m] = 0;                                       \
    }                                                                                      \
    for (k0 = 0; k0 < K; k0 += (TK)) {                                                     \
        int64_t off[TK];                                                                   \
        for (ti = 0; ti < (TK); ti++) {                                                    \
            int64_t k = k0 + ti < K ? k0 + ti : k0;   /* a spare tap repeats one */       \
            off[ti] = (k / (kh * kw)) * plane + (k / kw % kh) * Wp + k % kw;               \
        }                                                                                  \
        for (m0 = 0; m0 < Mr; m0 += t) {                                                   \
            V a[TK][NV];                                                                   \
            for (ti = 0; ti < (TK); ti++)                                                  \
                for (j = 0; j < (NV); j++) a[ti][j] = (V){0};                              \
            for (oh = 0; oh < Ho; oh++) {                                                  \
                const T *g = gt + oh * Wo * Mr + m0;                                       \
                const T *s = xp + oh * Wp;                                                 \
                for (ow = 0; ow < Wo; ow++, g += Mr) {                                     \
                    V v[NV];                                                               \
                    for (j = 0; j < (NV); j++) v[j] = *(const U *)(g + j * (LANES));       \
                    for (ti = 0; ti < (TK); ti++) {                                        \
                        T b = s[off[ti] + ow];                                             \
                        for (j = 0; j < (NV); j++) a[ti][j] += v[j] * b;                   \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            for (ti = 0; ti < (TK) && k0 + ti < K; ti++) {                                 \
                T r[NV * (LANES)];                                                         \
                for (j = 0; j < (NV); j++) *(U *)(r + j * (LANES)) = a[ti][j];             \
                for (m = m0; m < M && m < m0 + t; m++) acc[(k0 + ti) * M + m] += r[m - m0]; \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
}

/* 32-byte vectors, 4 x 3 tiles (16 registers with AVX2), in the usual clones */
EMBER_DCONV(float, ember_dconv_narrow_f32, 8, 4, 3, EMBER_ROW_CLONES)
EMBER_DCONV(double, ember_dconv_narrow_f64, 4, 4, 3, EMBER_ROW_CLONES)
EMBER_DCONV_WGRAD(float, ember_dwgrad_narrow_f32, 8, 6, 2, EMBER_ROW_CLONES)
EMBER_DCONV_WGRAD(double, ember_dwgrad_narrow_f64, 4, 6, 2, EMBER_ROW_CLONES)
#if EMBER_DC_WIDE
/* 64-byte vectors, 8 x 3 tiles (28 of AVX-512's 32 registers) */
EMBER_DCONV(float, ember_dconv_wide_f32, 16, 8, 3, EMBER_DC_WIDE_ATTR)
EMBER_DCONV(double, ember_dconv_wide_f64, 8, 8, 3, EMBER_DC_WIDE_ATTR)
/* 12 x 2 tiles of the weight gradient (24 accumulators) */
EMBER_DCONV_WGRAD(float, ember_dwgrad_wide_f32, 16, 12, 2, EMBER_DC_WIDE_ATTR)
EMBER_DCONV_WGRAD(double, ember_dwgrad_wide_f64, 8, 12, 2, EMBER_DC_WIDE_ATTR)
#endif

#define EMBER_DCONV_DISPATCH(T, S)                                                         \
static void ember_dconv_##S(const T *x, int64_t C, int64_t H, int64_t W, const T *wt,     \
        int64_t M, int64_t kh, int64_t kw, int64_t ph, int64_t pw, const T *bias, T *out,  \
        T *work) {                                                                         \
    if (EMBER_DC_WIDE_OK)                                                                  \
        EMBER_DC_WIDE_CALL(S)(x, C, H, W, wt, M, kh, kw, ph, pw, bias, out, work);         \
    else                                                                                   \
        ember_dconv_narrow_##S(x, C, H, W, wt, M, kh, kw, ph, pw, bias, out, work);        \
}
#if EMBER_DC_WIDE
#define EMBER_DC_WIDE_OK __builtin_cpu_supports("x86-64-v4")
#define EMBER_DC_WIDE_CALL(S) ember_dconv_wide_##S
#else
#define EMBER_DC_WIDE_OK 0
#define EMBER_DC_WIDE_CALL(S) ember_dconv_narrow_##S
#endif
EMBER_DCONV_DISPATCH(float, f32)
EMBER_DCONV_DISPATCH(double, f64)

/* work (in elements) of the weight gradient: the padded planes and gy transposed */
static inline int64_t ember_dwgrad_work(int64_t C, int64_t H, int64_t W, int64_t M,
                                        int64_t kh, int64_t kw, int64_t ph, int64_t pw) {
    int64_t Hp = H + 2 * ph, Wp = W + 2 * pw;
    return C * Hp * Wp + (Hp - kh + 1) * (Wp - kw + 1) * (M + 2 * EMBER_DC_TMAX);
}

#define EMBER_DWGRAD_DISPATCH(T, S)                                                        \
static void ember_dwgrad_##S(const T *x, int64_t C, int64_t H, int64_t W, const T *gy,    \
        int64_t M, int64_t kh, int64_t kw, int64_t ph, int64_t pw, T *acc, T *work) {      \
    if (EMBER_DC_WIDE_OK)                                                                  \
        EMBER_DW_WIDE_CALL(S)(x, C, H, W, gy, M, kh, kw, ph, pw, acc, work);               \
    else                                                                                   \
        ember_dwgrad_narrow_##S(x, C, H, W, gy, M, kh, kw, ph, pw, acc, work);             \
}
#if EMBER_DC_WIDE
#define EMBER_DW_WIDE_CALL(S) ember_dwgrad_wide_##S
#else
#define EMBER_DW_WIDE_CALL(S) ember_dwgrad_narrow_##S
#endif
EMBER_DWGRAD_DISPATCH(float, f32)
EMBER_DWGRAD_DISPATCH(double, f64)

#endif
