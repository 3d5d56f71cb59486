/* Row loops of the fused cross-entropy kernels (_nll.pyx), for float and double: the
 * logsumexp of a row and the softmax gradient row, with the vectorising float exp. */
#ifndef EMBER_CPU_NLL_ROWS_H
#define EMBER_CPU_NLL_ROWS_H
#include "_rowmath.h"

/* NaN-propagating max (a NaN in either comes out); `|`, not `||`: no branch.  The
 * running maximum goes first: with the loaded element first GCC made a branch of it */
#define EMBER_NLL_MAX(x, y) ((((x) > (y)) | ((x) != (x))) ? (x) : (y))

#define EMBER_NLL_ROWS(T, S, EXP, LOG)                                                     \
/* log(sum(exp(a))) computed as m + log(sum(exp(a - m))), m the row maximum (n >= 1) */    \
EMBER_ROW_CLONES static T ember_nll_lse_##S(const T *a, int64_t n) {                       \
    int64_t i, k, nb = n - n % EMBER_ROW_NACC; int j, w;                                      \
    T mv[EMBER_ROW_NACC], m, s;                                                            \
    for (j = 0; j < EMBER_ROW_NACC; j++) mv[j] = a[0];                                     \
    for (i = 0; i < nb; i += EMBER_ROW_NACC)                                               \
        for (j = 0; j < EMBER_ROW_NACC; j++) mv[j] = EMBER_NLL_MAX(mv[j], a[i + j]);       \
    for (w = EMBER_ROW_NACC / 2; w >= 1; w /= 2)          /* a tree, not a chain */        \
        for (j = 0; j < w; j++) mv[j] = EMBER_NLL_MAX(mv[j], mv[j + w]);                   \
    m = mv[0];                                                                             \
    for (k = nb; k < n; k++) m = EMBER_NLL_MAX(m, a[k]);                                   \
    EMBER_ROW_SUM(T, e, EXP(a[k] - m), s);                                                 \
    return m + LOG(s);                                                                     \
}                                                                                          \
/* gx = f * exp(a - lse) */                                                                \
EMBER_ROW_CLONES static void ember_nll_softmax_##S(T *gx, const T *a, int64_t n, T lse,    \
                                                   T f) {                                  \
    int64_t k;                                                                             \
    for (k = 0; k < n; k++) gx[k] = f * EXP(a[k] - lse);                                   \
}

EMBER_NLL_ROWS(float, f32, ember_fast_expf, logf)
EMBER_NLL_ROWS(double, f64, exp, log)

#endif
