/* The fused optimizer steps (optional entries; NULL makes the optimizer run its per-tensor
 * ops): Adam/AdamW (`adam`) and SGD (`sgd`, ABI 6.3).  For adam, v holds n groups of five
 * views {param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (NULL unless amsgrad)}; for sgd,
 * groups of three {param, grad, momentum_buffer (NULL when momentum is 0)}; each group of
 * one shape, C-contiguous, of one floating dtype.  The arithmetic follows torch.optim's
 * single-tensor order step by step, in the parameter's own dtype (float32 or float64;
 * float16/bfloat16 answer NOT_IMPLEMENTED and the core runs its ops), so results match
 * the unfused optimizers' bits.
 */
#include <math.h>

#include "reference.h"

/* one element of the update in compute type T (float or double) */
#define ADAM_STEP(T, SQRT)                                                                 \
    static void adam_##T(const ember_adam_params *p, T *param, const T *grad, T *m, T *v,  \
                         T *vmax, int64_t numel) {                                          \
        const double w = 1.0 - p->beta1;                                                   \
        const T w_lo = (T)w, w_hi = (T)(1.0 - w), b2 = (T)p->beta2;                        \
        const T one_b2 = (T)(1.0 - p->beta2), wd = (T)p->weight_decay;                     \
        const T shrink = (T)(1.0 - p->lr * p->weight_decay);                               \
        const T bc2 = (T)p->bias_correction2_sqrt, eps = (T)p->eps;                        \
        const T neg_step = (T)(-p->step_size);                                             \
        for (int64_t i = 0; i < numel; i++) {                                              \
            T x = param[i], g = p->maximize ? -grad[i] : grad[i];                          \
            if (p->weight_decay != 0) {                                                    \
                if (p->decoupled) x = x * shrink;                                          \
                else g = g + x * wd;                                                       \
            }                                                                              \
            T diff = g - m[i];                 /* torch.lerp's two branches */             \
            m[i] = fabs(w) < 0.5 ? m[i] + diff * w_lo : g - diff * w_hi;                   \
            T prod = g * one_b2;                                                           \
            prod = prod * g;                                                               \
            v[i] = v[i] * b2 + prod;                                                       \
            T vv = v[i];                                                                   \
            if (vmax) {                        /* amsgrad: the running max (NaN wins) */   \
                if (!(vmax[i] > v[i] || vmax[i] != vmax[i])) vmax[i] = v[i];               \
                vv = vmax[i];                                                              \
            }                                                                              \
            T denom = SQRT(vv) / bc2 + eps;                                                \
            T quot = m[i] * neg_step;                                                      \
            param[i] = x + quot / denom;                                                   \
        }                                                                                  \
    }

ADAM_STEP(float, sqrtf)
ADAM_STEP(double, sqrt)

/* map and check group t's views (width per group, the first `required` present) into s/v */
static int map_group(ember_ctx *ctx, const ember_view *const *v_dev, int64_t t, int width,
                     int required, const char *op, ember_view *s, const ember_view **v) {
    for (int k = 0; k < width; k++) {
        REF_TRY(ref_map_optional(ctx, &s[k], &v[k], v_dev[width * t + k], op));
        if (k < required && !v[k]) return ref_fail(ctx, EMBER_ERR_VALUE, "%s: a view is NULL",
                                                   op);
        if (v[k] && (!ref_is_contiguous(v[k]) || v[k]->dtype != v[0]->dtype))
            return ref_fail(ctx, EMBER_ERR_VALUE, "%s: views must be contiguous and share "
                            "one dtype", op);
    }
    if (v[0]->dtype != EMBER_FLOAT32 && v[0]->dtype != EMBER_FLOAT64)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s is not implemented for %s", op,
                        ref_dtype_name(v[0]->dtype));
    return EMBER_OK;
}

int ref_adam(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v_dev,
             int64_t n) {
    ember_view s[5];
    const ember_view *v[5];
    /* check every group before updating any: an error must leave all parameters as they
     * were (on NOT_IMPLEMENTED the core runs the whole step again with its ops) */
    const int required = p->amsgrad ? 5 : 4;
    for (int64_t t = 0; t < n; t++) REF_TRY(map_group(ctx, v_dev, t, 5, required, "adam", s, v));
    for (int64_t t = 0; t < n; t++) {
        REF_TRY(map_group(ctx, v_dev, t, 5, required, "adam", s, v));
        int64_t numel = ref_numel(v[0]->ndim, v[0]->sizes);
        char *vmax = p->amsgrad ? v[4]->data : NULL;
        if (v[0]->dtype == EMBER_FLOAT32)
            adam_float(p, (float *)v[0]->data, (const float *)v[1]->data, (float *)v[2]->data,
                       (float *)v[3]->data, (float *)vmax, numel);
        else
            adam_double(p, (double *)v[0]->data, (const double *)v[1]->data,
                        (double *)v[2]->data, (double *)v[3]->data, (double *)vmax, numel);
    }
    return EMBER_OK;
}

/* one parameter's SGD update in compute type T, one rounding per operation */
#define SGD_STEP(T)                                                                        \
    static void sgd_##T(const ember_sgd_params *p, T *param, const T *grad, T *buf,        \
                        int64_t numel) {                                                    \
        const T wd = (T)p->weight_decay, mom = (T)p->momentum;                             \
        const T undamped = (T)(1.0 - p->dampening), neg_lr = (T)(-p->lr);                  \
        for (int64_t i = 0; i < numel; i++) {                                              \
            T x = param[i], g = p->maximize ? -grad[i] : grad[i];                          \
            if (p->weight_decay != 0) {                                                    \
                T decay = x * wd;                                                          \
                g = g + decay;                                                             \
            }                                                                              \
            if (buf) {                                                                     \
                if (p->first) {                                                            \
                    buf[i] = g;                                                            \
                } else {                                                                   \
                    T keep = buf[i] * mom, add = g * undamped;                             \
                    buf[i] = keep + add;                                                   \
                }                                                                          \
                if (p->nesterov) {                                                         \
                    T ahead = buf[i] * mom;                                                \
                    g = g + ahead;                                                         \
                } else {                                                                   \
                    g = buf[i];                                                            \
                }                                                                          \
            }                                                                              \
            T step = g * neg_lr;                                                           \
            param[i] = x + step;                                                           \
        }                                                                                  \
    }

SGD_STEP(float)
SGD_STEP(double)

int ref_sgd(ember_ctx *ctx, const ember_sgd_params *p, const ember_view *const *v_dev,
            int64_t n) {
    ember_view s[3];
    const ember_view *v[3];
    const int required = p->momentum != 0 ? 3 : 2;
    for (int64_t t = 0; t < n; t++) REF_TRY(map_group(ctx, v_dev, t, 3, required, "sgd", s, v));
    for (int64_t t = 0; t < n; t++) {
        REF_TRY(map_group(ctx, v_dev, t, 3, required, "sgd", s, v));
        int64_t numel = ref_numel(v[0]->ndim, v[0]->sizes);
        char *buf = p->momentum != 0 ? v[2]->data : NULL;
        if (v[0]->dtype == EMBER_FLOAT32)
            sgd_float(p, (float *)v[0]->data, (const float *)v[1]->data, (float *)buf, numel);
        else
            sgd_double(p, (double *)v[0]->data, (const double *)v[1]->data, (double *)buf,
                       numel);
    }
    return EMBER_OK;
}
