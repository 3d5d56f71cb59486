/* The fused Adam/AdamW step over one run of elements (_adam.pyx): abi.h's ember_adam_params
 * arithmetic in torch.optim.Adam's single-tensor order, one rounding per operation as the
 * per-tensor ops round (no contraction into FMAs), so the bits equal the unfused
 * optimizer's; built for several instruction sets, the loop vectorises (the branches are
 * the same for every element).  vmax is NULL unless amsgrad. */
#ifndef EMBER_CPU_ADAM_ROWS_H
#define EMBER_CPU_ADAM_ROWS_H
#include <math.h>
#include "ember/abi.h"
#include "_rowmath.h"

/* the loop, AMS (amsgrad) a constant so that each form vectorises on its own */
#define EMBER_ADAM_LOOP(T, SQRT, AMS)                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
        T x = param[i], g = grad[i] * sign;    /* -g is exact: g * -1 */                    \
        x = decoupled ? x * shrink : x;                                                     \
        g = coupled ? g + x * wd : g;                                                       \
        T diff = g - m[i];                                                                  \
        T mi = low ? m[i] + diff * w_lo : g - diff * w_hi;                                  \
        m[i] = mi;                                                                          \
        T prod = g * one_b2;                                                                \
        prod = prod * g;                                                                    \
        T vi = v[i] * b2 + prod;                                                            \
        v[i] = vi;                                                                          \
        if (AMS) {                             /* the running max (NaN wins) */             \
            T vm = vmax[i];                                                                 \
            vm = (vm > vi || vm != vm) ? vm : vi;                                           \
            vmax[i] = vm;                                                                   \
            vi = vm;                                                                        \
        }                                                                                   \
        T denom = SQRT(vi) / bc2 + eps;                                                     \
        T quot = mi * neg_step;                                                             \
        param[i] = x + quot / denom;                                                        \
    }

#define EMBER_ADAM_RUN(T, S, SQRT)                                                          \
EMBER_ROW_CLONES EMBER_NO_CONTRACT static void ember_adam_run_##S(                          \
        const ember_adam_params *p, T *restrict param, const T *restrict grad,              \
        T *restrict m, T *restrict v, T *restrict vmax, int64_t n) {                        \
    const double w = 1.0 - p->beta1;                                                        \
    const int low = fabs(w) < 0.5;             /* torch.lerp's branch, one per call */      \
    const T w_lo = (T)w, w_hi = (T)(1.0 - w), b2 = (T)p->beta2;                             \
    const T one_b2 = (T)(1.0 - p->beta2), wd = (T)p->weight_decay;                          \
    const T shrink = (T)(1.0 - p->lr * p->weight_decay);                                    \
    const T bc2 = (T)p->bias_correction2_sqrt, eps = (T)p->eps;                             \
    const T neg_step = (T)(-p->step_size);                                                  \
    const T sign = p->maximize ? (T)-1 : (T)1;                                              \
    const int decoupled = p->weight_decay != 0 && p->decoupled;                             \
    const int coupled = p->weight_decay != 0 && !p->decoupled;                              \
    if (vmax) {                                                                             \
        EMBER_ADAM_LOOP(T, SQRT, 1)                                                         \
    } else {                                                                                \
        EMBER_ADAM_LOOP(T, SQRT, 0)                                                         \
    }                                                                                       \
}

EMBER_ADAM_RUN(float, f32, sqrtf)
EMBER_ADAM_RUN(double, f64, sqrt)

#endif
