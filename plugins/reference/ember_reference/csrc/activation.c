/* The pointwise activations (optional entry `activation`, ABI 6.4; NULL makes
 * nn.functional run each as its composite): abi.h's EMBER_ACTIVATION_* formulas, one
 * element at a time in the element's own type (float32 or float64; float16/bfloat16 answer
 * NOT_IMPLEMENTED and the core runs its composites).  b NULL: out = f(a); otherwise
 * out = b * f'(a).  Every view is C-contiguous, of one shape and one dtype.
 */
#include <math.h>

#include "reference.h"

/* per element: the forward (b NULL), or the backward's gradient g times the slope */
#define ACTIVATION(T, EXP, EXPM1, LOG1P, TANH)                                             \
    static int activation_##T(int32_t op, const double *pp, T *out, const T *a,            \
                              const T *b, int64_t numel) {                                  \
        const T p0 = (T)pp[0], p1 = (T)pp[1], p2 = (T)pp[2], p01 = p0 * p1;                \
        const T sixth = (T)(1.0f / 6.0f);     /* PyTorch's slope, a float even for double */\
        for (int64_t i = 0; i < numel; i++) {                                              \
            const T x = a[i], g = b ? b[i] : 0;                                            \
            T r, t, s, z;                                                                  \
            switch (op) {                                                                  \
            case EMBER_ACTIVATION_LEAKY_RELU:                                              \
                r = !b ? (x > 0 ? x : x * p0) : (x > 0 ? g : g * p0); break;               \
            case EMBER_ACTIVATION_HARDTANH:                                                \
                r = !b ? (x <= p0 ? p0 : (x >= p1 ? p1 : x))                               \
                       : ((x <= p0 || x >= p1) ? 0 : g); break;                            \
            case EMBER_ACTIVATION_CLAMP:                                                   \
                t = x < p0 ? p0 : x;                                                       \
                r = !b ? (t > p1 ? p1 : t) : ((x >= p0 && x <= p1) ? g : 0); break;        \
            case EMBER_ACTIVATION_HARDSIGMOID:                                             \
                t = x + 3 < 0 ? 0 : x + 3;                                                 \
                r = !b ? (t > 6 ? 6 : t) / 6 : ((x > -3 && x < 3) ? g * sixth : 0); break; \
            case EMBER_ACTIVATION_HARDSWISH:                                               \
                t = x + 3 < 0 ? 0 : x + 3;                                                 \
                r = !b ? x * (t > 6 ? 6 : t) / 6                                           \
                       : (x <= -3 ? 0 : (x < 3 ? g * (x / 3 + (T)0.5) : g)); break;        \
            case EMBER_ACTIVATION_SILU:                                                    \
                s = 1 / (1 + EXP(-x));                                                     \
                r = !b ? x / (1 + EXP(-x)) : g * s * (1 + x * (1 - s)); break;             \
            case EMBER_ACTIVATION_ELU:                                                     \
                r = !b ? (x <= 0 ? EXPM1(x * p2) * p01 : x * p1)                           \
                       : (x <= 0 ? g * p2 * p01 * EXP(x * p2) : g * p1); break;            \
            case EMBER_ACTIVATION_SOFTPLUS:                                                \
                t = EXP(x * p0);                                                           \
                r = x * p0 > p1 ? (!b ? x : g) : (!b ? LOG1P(t) / p0 : g * t / (t + 1));   \
                break;                                                                     \
            case EMBER_ACTIVATION_LOG_SIGMOID:                                             \
                z = EXP(x < 0 ? x : -x);                                                   \
                r = !b ? (x < 0 ? x : 0) - LOG1P(z)                                        \
                       : g * (x < 0 ? 1 - z / (1 + z) : z / (1 + z)); break;               \
            case EMBER_ACTIVATION_HARDSHRINK:                                              \
                r = (x >= -p0 && x <= p0) ? 0 : (!b ? x : g); break;                       \
            case EMBER_ACTIVATION_SOFTSHRINK:                                              \
                r = !b ? (x > p0 ? x - p0 : (x < -p0 ? x + p0 : x * 0))                    \
                       : ((x >= -p0 && x <= p0) ? 0 : g); break;                           \
            case EMBER_ACTIVATION_MISH:                                                    \
                s = 1 / (1 + EXP(-x));                                                     \
                t = TANH(LOG1P(EXP(x)));                                                   \
                r = !b ? x * t : g * (t + x * s * (1 - t * t)); break;                     \
            default:                                                                       \
                return 1;                                                                  \
            }                                                                              \
            out[i] = r;                                                                    \
        }                                                                                  \
        return 0;                                                                          \
    }

ACTIVATION(float, expf, expm1f, log1pf, tanhf)
ACTIVATION(double, exp, expm1, log1p, tanh)

int ref_activation(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out_dev,
                   const ember_view *a_dev, const ember_view *b_dev) {
    ember_view s[3];
    const ember_view *v[3] = {&s[0], &s[1], NULL};
    REF_TRY(ref_map_view(ctx, &s[0], out_dev, "activation out"));
    REF_TRY(ref_map_view(ctx, &s[1], a_dev, "activation a"));
    REF_TRY(ref_map_optional(ctx, &s[2], &v[2], b_dev, "activation b"));
    for (int k = 0; k < 3; k++) {
        if (!v[k]) continue;
        int same = v[k]->ndim == s[0].ndim && v[k]->dtype == s[0].dtype;
        for (int d = 0; same && d < s[0].ndim; d++) same = v[k]->sizes[d] == s[0].sizes[d];
        if (!same || !ref_is_contiguous(v[k]))
            return ref_fail(ctx, EMBER_ERR_VALUE, "activation: views must be contiguous and "
                            "share one dtype and shape");
    }
    if (s[0].dtype != EMBER_FLOAT32 && s[0].dtype != EMBER_FLOAT64)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "activation: %s is not implemented",
                        ref_dtype_name(s[0].dtype));
    int64_t numel = ref_numel(s[0].ndim, s[0].sizes);
    int unknown = s[0].dtype == EMBER_FLOAT32
        ? activation_float(op, p, (float *)s[0].data, (const float *)s[1].data,
                           v[2] ? (const float *)v[2]->data : NULL, numel)
        : activation_double(op, p, (double *)s[0].data, (const double *)s[1].data,
                            v[2] ? (const double *)v[2]->data : NULL, numel);
    if (unknown)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "activation: unknown op code %d", op);
    return EMBER_OK;
}
