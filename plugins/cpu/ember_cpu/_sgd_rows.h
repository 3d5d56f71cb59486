/* The fused SGD step over one run of elements (_optim_steps.pyx): abi.h's ember_sgd_params
 * arithmetic in torch.optim.SGD's single-tensor order, one rounding per operation as the
 * per-tensor ops round (no contraction into FMAs), so the bits equal the unfused
 * optimizer's (and add_(other, alpha=)'s); built for several instruction sets, each form's
 * loop vectorises.  buf is NULL when momentum is 0. */
#ifndef EMBER_CPU_SGD_ROWS_H
#define EMBER_CPU_SGD_ROWS_H
#include "ember/abi.h"
#include "_adam_rows.h"         /* EMBER_NO_CONTRACT, EMBER_ROW_CLONES */

/* the loop; WD, MOM, NEST, FIRST constants so that each form vectorises on its own */
#define EMBER_SGD_LOOP(T, WD, MOM, NEST, FIRST)                                             \
    for (int64_t i = 0; i < n; i++) {                                                       \
        T x = param[i], g = grad[i] * sign;    /* -g is exact: g * -1 */                    \
        if (WD) g = g + x * wd;                                                             \
        if (MOM) {                                                                          \
            T b;                                                                            \
            if (FIRST) {                                                                    \
                b = g;                                                                      \
            } else {                                                                        \
                T keep = buf[i] * mom;                                                      \
                b = keep + g * undamped;                                                    \
            }                                                                               \
            buf[i] = b;                                                                     \
            g = NEST ? g + b * mom : b;                                                     \
        }                                                                                   \
        param[i] = x + g * neg_lr;                                                          \
    }

#define EMBER_SGD_RUN(T, S)                                                                 \
EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_sgd_run_##S(                           \
        const ember_sgd_params *p, T *restrict param, const T *restrict grad,               \
        T *restrict buf, int64_t n) {                                                       \
    const T sign = p->maximize ? (T)-1 : (T)1, wd = (T)p->weight_decay;                     \
    const T mom = (T)p->momentum, undamped = (T)(1.0 - p->dampening);                       \
    const T neg_lr = (T)(-p->lr);                                                           \
    const int has_wd = p->weight_decay != 0;                                                \
    if (!buf) {                                                                             \
        if (has_wd) { EMBER_SGD_LOOP(T, 1, 0, 0, 0) } else { EMBER_SGD_LOOP(T, 0, 0, 0, 0) } \
    } else if (p->first) {                                                                  \
        if (p->nesterov) { EMBER_SGD_LOOP(T, has_wd, 1, 1, 1) }                             \
        else { EMBER_SGD_LOOP(T, has_wd, 1, 0, 1) }                                         \
    } else if (p->nesterov) {                                                               \
        if (has_wd) { EMBER_SGD_LOOP(T, 1, 1, 1, 0) } else { EMBER_SGD_LOOP(T, 0, 1, 1, 0) } \
    } else {                                                                                \
        if (has_wd) { EMBER_SGD_LOOP(T, 1, 1, 0, 0) } else { EMBER_SGD_LOOP(T, 0, 1, 0, 0) } \
    }                                                                                       \
}

EMBER_SGD_RUN(float, f32)
EMBER_SGD_RUN(double, f64)

#endif
