/* Row loops of the fused cross-entropy kernels (_nll.pyx), for float and double: the
 * logsumexp of a row and the softmax gradient row, with the vectorising float exp. */
#ifndef EMBER_CPU_NLL_ROWS_H
#define EMBER_CPU_NLL_ROWS_H
#include "_rowmath.h"

#define EMBER_NLL_ROWS(T, S, EXP, LOG, MAX)                                                \
/* log(sum(exp(a))) computed as m + log(sum(exp(a - m))), m the row maximum (n >= 1).  A    \
 * NaN need not win the (vectorised) max: exp(NaN - m) makes the sum NaN whatever m is */   \
EMBER_ROW_CLONES static T ember_nll_lse_##S(const T *a, int64_t n) {                       \
    int64_t i, k, nb = n - n % EMBER_ROW_NACC; int j;                                      \
    T m = MAX(a, n), s;                                                                    \
    EMBER_ROW_SUM(T, e, EXP(a[k] - m), s);                                                 \
    return m + LOG(s);                                                                     \
}                                                                                          \
/* gx = f * exp(a - lse) */                                                                \
EMBER_ROW_CLONES static void ember_nll_softmax_##S(T *gx, const T *a, int64_t n, T lse,    \
                                                   T f) {                                  \
    int64_t k;                                                                             \
    for (k = 0; k < n; k++) gx[k] = f * EXP(a[k] - lse);                                   \
}

EMBER_NLL_ROWS(float, f32, ember_fast_expf, logf, ember_row_max_f32)
EMBER_NLL_ROWS(double, f64, exp, log, ember_row_max_f64)

#endif
