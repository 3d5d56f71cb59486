/* Row loops of the fused normalisation kernels (_norm.pyx), stamped out for float and
 * double; every sum is an EMBER_ROW_SUM (_rowmath.h): fixed order, any thread. */
#ifndef EMBER_CPU_NORM_ROWS_H
#define EMBER_CPU_NORM_ROWS_H
#include "_rowmath.h"

#define EMBER_NORM_ROWS(T, S)                                                              \
/* sum(x) */                                                                               \
EMBER_ROW_CLONES static T ember_norm_sum_##S(const T *x, int64_t n) {                      \
    int64_t i, k, nb = n - n % EMBER_ROW_NACC; int j; T r;                                \
    EMBER_ROW_SUM(T, a, x[k], r);                                                         \
    return r;                                                                              \
}                                                                                          \
/* sum((x - m)^2) */                                                                       \
EMBER_ROW_CLONES static T ember_norm_sqdev_##S(const T *x, int64_t n, T m) {               \
    int64_t i, k, nb = n - n % EMBER_ROW_NACC; int j; T r;                                \
    EMBER_ROW_SUM(T, a, (x[k] - m) * (x[k] - m), r);                                      \
    return r;                                                                              \
}                                                                                          \
/* *sg = sum(g * w), *sgx = sum(g * w * (x - m)); w NULL: ones */                          \
EMBER_ROW_CLONES static void ember_norm_gsums_##S(const T *g, const T *x, const T *w,      \
                                                  int64_t n, T m, T *sg, T *sgx) {         \
    int64_t i, k, nb = n - n % EMBER_ROW_NACC; int j;                                     \
    if (w) {                                                                               \
        EMBER_ROW_SUM(T, a, g[k] * w[k], *sg);                                            \
        EMBER_ROW_SUM(T, b, g[k] * w[k] * (x[k] - m), *sgx);                              \
    } else {                                                                               \
        EMBER_ROW_SUM(T, a, g[k], *sg);                                                   \
        EMBER_ROW_SUM(T, b, g[k] * (x[k] - m), *sgx);                                     \
    }                                                                                      \
}                                                                                          \
/* y = (x - m) * r * w + b; w and b may be NULL */                                         \
EMBER_ROW_CLONES static void ember_norm_affine_##S(T *y, const T *x, int64_t n, T m, T r,  \
                                                   const T *w, const T *b) {               \
    int64_t k;                                                                             \
    if (w && b) for (k = 0; k < n; k++) y[k] = (x[k] - m) * r * w[k] + b[k];               \
    else if (w) for (k = 0; k < n; k++) y[k] = (x[k] - m) * r * w[k];                      \
    else if (b) for (k = 0; k < n; k++) y[k] = (x[k] - m) * r + b[k];                      \
    else for (k = 0; k < n; k++) y[k] = (x[k] - m) * r;                                    \
}                                                                                          \
/* y = x * a + c */                                                                        \
EMBER_ROW_CLONES static void ember_norm_scale_##S(T *y, const T *x, int64_t n, T a, T c) { \
    int64_t k;                                                                             \
    for (k = 0; k < n; k++) y[k] = x[k] * a + c;                                           \
}                                                                                          \
/* gx = a * g * w + c1 + c2 * (x - m); w NULL: ones */                                     \
EMBER_ROW_CLONES static void ember_norm_grad_##S(T *gx, const T *g, const T *x,            \
                                                 const T *w, int64_t n, T m, T a, T c1,    \
                                                 T c2) {                                   \
    int64_t k;                                                                             \
    if (w) for (k = 0; k < n; k++) gx[k] = a * g[k] * w[k] + c1 + c2 * (x[k] - m);         \
    else for (k = 0; k < n; k++) gx[k] = a * g[k] + c1 + c2 * (x[k] - m);                  \
}                                                                                          \
/* column partial sums: pgw += g * (x - m) * r, pgb += g (either may be NULL) */           \
EMBER_ROW_CLONES static void ember_norm_colsum_##S(T *pgw, T *pgb, const T *g, const T *x, \
                                                   int64_t n, T m, T r) {                  \
    int64_t k;                                                                             \
    if (pgw) for (k = 0; k < n; k++) pgw[k] += g[k] * (x[k] - m) * r;                      \
    if (pgb) for (k = 0; k < n; k++) pgb[k] += g[k];                                       \
}

/* Batch norm over [B, C] (L = 1, BatchNorm1d on (N, C)): a channel's elements are a column,
 * so these walk a block of w channels row by row (the inner loop across channels
 * vectorises); each channel still adds its rows in order b = 0, 1, ... (any thread). */
#define EMBER_NORM_COLS(T, S)                                                              \
/* s[c] = sum over rows of x[b, c]; q[c] = sum over rows of (x[b, c] - m[c])^2 */          \
EMBER_ROW_CLONES static void ember_bn_colsums_##S(T *restrict s, const T *restrict x,      \
                                                  int64_t B, int64_t ld, int64_t w) {      \
    for (int64_t c = 0; c < w; c++) s[c] = 0;                                              \
    for (int64_t b = 0; b < B; b++)                                                        \
        for (int64_t c = 0; c < w; c++) s[c] += x[b * ld + c];                             \
}                                                                                          \
EMBER_ROW_CLONES static void ember_bn_colsqdev_##S(T *restrict q, const T *restrict x,     \
                                                   int64_t B, int64_t ld, int64_t w,       \
                                                   const T *restrict m) {                  \
    for (int64_t c = 0; c < w; c++) q[c] = 0;                                              \
    for (int64_t b = 0; b < B; b++)                                                        \
        for (int64_t c = 0; c < w; c++) q[c] += (x[b * ld + c] - m[c]) * (x[b * ld + c] - m[c]); \
}                                                                                          \
/* sg[c] = sum of g, sgx[c] = sum of g * (x - m[c]) over rows */                           \
EMBER_ROW_CLONES static void ember_bn_colgsums_##S(T *restrict sg, T *restrict sgx,        \
                                                   const T *restrict g, const T *restrict x, \
                                                   int64_t B, int64_t ld, int64_t w,       \
                                                   const T *restrict m) {                  \
    for (int64_t c = 0; c < w; c++) sg[c] = 0, sgx[c] = 0;                                 \
    for (int64_t b = 0; b < B; b++)                                                        \
        for (int64_t c = 0; c < w; c++) {                                                  \
            sg[c] += g[b * ld + c];                                                        \
            sgx[c] += g[b * ld + c] * (x[b * ld + c] - m[c]);                              \
        }                                                                                  \
}                                                                                          \
/* one row: y[c] = x[c] * a[c] + sh[c] */                                                  \
EMBER_ROW_CLONES static void ember_bn_colscale_##S(T *restrict y, const T *restrict x,     \
                                                   int64_t w, const T *restrict a,         \
                                                   const T *restrict sh) {                 \
    for (int64_t c = 0; c < w; c++) y[c] = x[c] * a[c] + sh[c];                            \
}                                                                                          \
/* rows of a block: gx = a[c] g + c1[c] + c2[c] (x - m[c]) */                              \
EMBER_ROW_CLONES static void ember_bn_colgrad_##S(T *restrict gx, const T *restrict g,     \
                                                  const T *restrict x, int64_t B,          \
                                                  int64_t ld, int64_t w, const T *restrict m, \
                                                  const T *restrict a, const T *restrict c1, \
                                                  const T *restrict c2) {                  \
    for (int64_t b = 0; b < B; b++)                                                        \
        for (int64_t c = 0; c < w; c++)                                                    \
            gx[b * ld + c] = a[c] * g[b * ld + c] + c1[c] + c2[c] * (x[b * ld + c] - m[c]); \
}

EMBER_NORM_ROWS(float, f32)
EMBER_NORM_ROWS(double, f64)
EMBER_NORM_COLS(float, f32)
EMBER_NORM_COLS(double, f64)

#endif
