/* `rnn` (ABI 6.2): one LSTM layer in one direction over all T steps, the time loop here.
 * Gates in PyTorch's order i, f, g, o; gi [T,B,4H] already holds x W_ih^T + both biases.
 *
 *   LSTM            v = {y, hn, cn, gates, cs, gi, h0, c0, w_hh}
 *   LSTM_BACKWARD   v = {dgi, dh0, dc0, dw_hh, dy, dhn, dcn, gates, cs, y, h0, c0, w_hh}
 *
 * (abi.h states each step's arithmetic.)  Plain loops, a sum per output element in the
 * operands' own type: the step product h_prev w_hh^T is written out, not a GEMM, which is
 * what a device with a matrix unit would call here.  Every view is C-contiguous and float32
 * or float64; float16/bfloat16 answer NOT_IMPLEMENTED (the core then runs its ops).
 */
#include <math.h>
#include <stdlib.h>

#include "reference.h"

#define LSTM_KERNELS(T, EXP, TANH)                                                         \
    static T sigmoid_##T(T x) { return (T)1 / ((T)1 + EXP(-x)); }                          \
                                                                                           \
    static void lstm_##T(T *y, T *hn, T *cn, T *gates, T *cs, const T *gi, const T *h0,    \
                         const T *c0, const T *w, int64_t n_t, int64_t n_b, int64_t n_h,   \
                         int reverse) {                                                     \
        const int64_t G = 4 * n_h;                                                         \
        const T *h_prev = h0, *c_prev = c0;                                                \
        for (int64_t s = 0; s < n_t; s++) {                                                \
            int64_t t = reverse ? n_t - 1 - s : s;                                         \
            T *z = gates + t * n_b * G, *c = cs + t * n_b * n_h, *h = y + t * n_b * n_h;   \
            for (int64_t b = 0; b < n_b; b++) {                                            \
                for (int64_t r = 0; r < G; r++) {          /* z = gi[t] + h_prev w^T */    \
                    T acc = gi[(t * n_b + b) * G + r];                                     \
                    for (int64_t k = 0; k < n_h; k++)                                      \
                        acc += h_prev[b * n_h + k] * w[r * n_h + k];                       \
                    z[b * G + r] = acc;                                                    \
                }                                                                          \
                for (int64_t j = 0; j < n_h; j++) {                                        \
                    T *zb = z + b * G;                                                     \
                    T i = sigmoid_##T(zb[j]), f = sigmoid_##T(zb[n_h + j]);                \
                    T g = TANH(zb[2 * n_h + j]), o = sigmoid_##T(zb[3 * n_h + j]);         \
                    zb[j] = i, zb[n_h + j] = f, zb[2 * n_h + j] = g, zb[3 * n_h + j] = o;  \
                    c[b * n_h + j] = f * c_prev[b * n_h + j] + i * g;                      \
                    h[b * n_h + j] = o * TANH(c[b * n_h + j]);                             \
                }                                                                          \
            }                                                                              \
            h_prev = h, c_prev = c;                                                        \
        }                                                                                  \
        for (int64_t k = 0; k < n_b * n_h; k++) hn[k] = h_prev[k], cn[k] = c_prev[k];      \
    }                                                                                      \
                                                                                           \
    /* dh, dc: this step's incoming gradients (scratch of B*H); dh_prev feeds the earlier  \
     * step */                                                                             \
    static void lstm_backward_##T(T *dgi, T *dh0, T *dc0, T *dw, const T *dy, const T *dhn, \
                                  const T *dcn, const T *gates, const T *cs, const T *y,   \
                                  const T *h0, const T *c0, const T *w, int64_t n_t,       \
                                  int64_t n_b, int64_t n_h, int reverse, T *dh, T *dc,     \
                                  T *dh_prev) {                                            \
        const int64_t G = 4 * n_h, BH = n_b * n_h;                                         \
        for (int64_t k = 0; k < BH; k++) {                                                 \
            dh_prev[k] = dhn ? dhn[k] : 0;                                                 \
            dc[k] = dcn ? dcn[k] : 0;                                                      \
        }                                                                                  \
        for (int64_t k = 0; k < G * n_h; k++) dw[k] = 0;                                   \
        for (int64_t s = n_t - 1; s >= 0; s--) {                                           \
            int64_t t = reverse ? n_t - 1 - s : s;                                         \
            int64_t tp = reverse ? t + 1 : t - 1;          /* the step run before t */     \
            const T *c_prev = s > 0 ? cs + tp * BH : c0;                                   \
            const T *h_prev = s > 0 ? y + tp * BH : h0;                                    \
            for (int64_t k = 0; k < BH; k++) dh[k] = dh_prev[k] + (dy ? dy[t * BH + k] : 0); \
            for (int64_t b = 0; b < n_b; b++) {                                            \
                const T *z = gates + (t * n_b + b) * G;                                    \
                T *dz = dgi + (t * n_b + b) * G;                                           \
                for (int64_t j = 0; j < n_h; j++) {                                        \
                    int64_t e = b * n_h + j;                                               \
                    T i = z[j], f = z[n_h + j], g = z[2 * n_h + j], o = z[3 * n_h + j];    \
                    T tc = TANH(cs[t * BH + e]);                                           \
                    T d = dc[e] + dh[e] * o * (1 - tc * tc);                               \
                    dz[j] = d * g * i * (1 - i);                                           \
                    dz[n_h + j] = d * c_prev[e] * f * (1 - f);                             \
                    dz[2 * n_h + j] = d * i * (1 - g * g);                                 \
                    dz[3 * n_h + j] = dh[e] * tc * o * (1 - o);                            \
                    dc[e] = d * f;                                                         \
                }                                                                          \
                for (int64_t k = 0; k < n_h; k++) {        /* dh_prev = dz w */            \
                    T acc = 0;                                                             \
                    for (int64_t r = 0; r < G; r++) acc += dz[r] * w[r * n_h + k];         \
                    dh_prev[b * n_h + k] = acc;                                            \
                }                                                                          \
                for (int64_t r = 0; r < G; r++)            /* dw += dz^T h_prev */         \
                    for (int64_t k = 0; k < n_h; k++)                                      \
                        dw[r * n_h + k] += dz[r] * h_prev[b * n_h + k];                    \
            }                                                                              \
        }                                                                                  \
        for (int64_t k = 0; k < BH; k++) dh0[k] = dh_prev[k], dc0[k] = dc[k];              \
    }

LSTM_KERNELS(float, expf, tanhf)
LSTM_KERNELS(double, exp, tanh)

/* how many views each op takes, and which of them may be NULL */
static int lstm_optional(int32_t op, int k) {
    return op == EMBER_RNN_LSTM ? (k == 3 || k == 4) : (4 <= k && k <= 6);
}

int ref_rnn(ember_ctx *ctx, int32_t op, const ember_view *const *v_dev, int32_t reverse) {
    if (op != EMBER_RNN_LSTM && op != EMBER_RNN_LSTM_BACKWARD)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "rnn: op code %d is not implemented",
                        (int)op);
    int n = op == EMBER_RNN_LSTM ? 9 : 13;
    ember_view s[13];
    const ember_view *v[13];
    for (int k = 0; k < n; k++) {
        REF_TRY(ref_map_optional(ctx, &s[k], &v[k], v_dev[k], "lstm"));
        if (!v[k] && !lstm_optional(op, k))
            return ref_fail(ctx, EMBER_ERR_VALUE, "lstm: operand %d is NULL", k);
        if (v[k] && !ref_is_contiguous(v[k]))
            return ref_fail(ctx, EMBER_ERR_VALUE, "lstm: operand %d is not contiguous", k);
    }
    const ember_view *gi = op == EMBER_RNN_LSTM ? v[5] : v[0];
    for (int k = 0; k < n; k++)
        if (v[k]) REF_TRY(ref_check_same_dtype(ctx, "lstm", gi, v[k]));
    if (gi->dtype != EMBER_FLOAT32 && gi->dtype != EMBER_FLOAT64)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "lstm is not implemented for %s",
                        ref_dtype_name(gi->dtype));
    int64_t n_t = gi->sizes[0], n_b = gi->sizes[1], n_h = gi->sizes[2] / 4;
    int64_t item = ref_itemsize(gi->dtype);
    if (op == EMBER_RNN_LSTM) {
        /* without saved gates/cell states (inference): scratch for the whole run */
        char *scratch = NULL;
        char *gates = v[3] ? v[3]->data : NULL, *cs = v[4] ? v[4]->data : NULL;
        if (!gates || !cs) {
            scratch = malloc((size_t)(n_t * n_b * 5 * n_h * item) + 1);
            if (!scratch) return ref_fail(ctx, EMBER_ERR_MEMORY, "lstm: out of memory");
            gates = scratch, cs = scratch + n_t * n_b * 4 * n_h * item;
        }
        if (gi->dtype == EMBER_FLOAT32)
            lstm_float((float *)v[0]->data, (float *)v[1]->data, (float *)v[2]->data,
                       (float *)gates, (float *)cs, (const float *)gi->data,
                       (const float *)v[6]->data, (const float *)v[7]->data,
                       (const float *)v[8]->data, n_t, n_b, n_h, reverse);
        else
            lstm_double((double *)v[0]->data, (double *)v[1]->data, (double *)v[2]->data,
                        (double *)gates, (double *)cs, (const double *)gi->data,
                        (const double *)v[6]->data, (const double *)v[7]->data,
                        (const double *)v[8]->data, n_t, n_b, n_h, reverse);
        free(scratch);
        return EMBER_OK;
    }
    char *scratch = malloc((size_t)(3 * n_b * n_h * item) + 1);
    if (!scratch) return ref_fail(ctx, EMBER_ERR_MEMORY, "lstm: out of memory");
    char *dh = scratch, *dc = scratch + n_b * n_h * item, *dhp = dc + n_b * n_h * item;
#define OPT(k, T) (v[k] ? (const T *)v[k]->data : NULL)
    if (gi->dtype == EMBER_FLOAT32)
        lstm_backward_float((float *)v[0]->data, (float *)v[1]->data, (float *)v[2]->data,
                            (float *)v[3]->data, OPT(4, float), OPT(5, float), OPT(6, float),
                            (const float *)v[7]->data, (const float *)v[8]->data,
                            (const float *)v[9]->data, (const float *)v[10]->data,
                            (const float *)v[11]->data, (const float *)v[12]->data, n_t, n_b,
                            n_h, reverse, (float *)dh, (float *)dc, (float *)dhp);
    else
        lstm_backward_double((double *)v[0]->data, (double *)v[1]->data, (double *)v[2]->data,
                             (double *)v[3]->data, OPT(4, double), OPT(5, double),
                             OPT(6, double), (const double *)v[7]->data,
                             (const double *)v[8]->data, (const double *)v[9]->data,
                             (const double *)v[10]->data, (const double *)v[11]->data,
                             (const double *)v[12]->data, n_t, n_b, n_h, reverse,
                             (double *)dh, (double *)dc, (double *)dhp);
#undef OPT
    free(scratch);
    return EMBER_OK;
}
