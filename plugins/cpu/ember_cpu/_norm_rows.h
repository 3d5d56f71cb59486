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

EMBER_NORM_ROWS(float, f32)
EMBER_NORM_ROWS(double, f64)

#endif
