/* The LSTM cell's gate arithmetic for one batch row of H units (the `rnn` entry, _rnn.pyx):
 * the GEMM with the hidden state happens outside; these loops vectorise (float32 through
 * the libm-free exp/tanh of _rowmath.h, built for several instruction sets).
 * z holds a row's four gate blocks i, f, g, o of H each (PyTorch's order).  No two
 * operands alias (restrict: without it GCC leaves these loops scalar, 8x slower). */
#ifndef EMBER_CPU_RNN_CELLS_H
#define EMBER_CPU_RNN_CELLS_H
#include "_rowmath.h"

static inline float ember_sigmoidf_(float x) { return 1.0f / (1.0f + ember_fast_expf(-x)); }
static inline double ember_sigmoid_(double x) { return 1.0 / (1.0 + exp(-x)); }

/* forward: z (pre-activations in, activated gates out), c = f c_prev + i g, h = o tanh(c) */
#define EMBER_LSTM_FWD(T, S, SIG, TANH)                                                  \
EMBER_ROW_CLONES static void ember_lstm_fwd_##S(T *restrict z, const T *restrict c_prev, \
                                                T *restrict c, T *restrict h, int64_t H) {\
    for (int64_t j = 0; j < H; j++) {                                                    \
        T i = SIG(z[j]), f = SIG(z[H + j]), g = TANH(z[2 * H + j]), o = SIG(z[3 * H + j]); \
        T cj = f * c_prev[j] + i * g;                                                    \
        z[j] = i; z[H + j] = f; z[2 * H + j] = g; z[3 * H + j] = o;                      \
        c[j] = cj;                                                                       \
        h[j] = o * TANH(cj);                                                             \
    }                                                                                    \
}

/* backward of one step: from the activated gates, c and c_prev, the incoming dh and dc (dc
 * holds the later step's dc_prev in, this step's dc_prev out), the pre-activation
 * gradients dz */
#define EMBER_LSTM_BWD(T, S, TANH)                                                       \
EMBER_ROW_CLONES static void ember_lstm_bwd_##S(T *restrict dz, T *restrict dc,          \
                                                const T *restrict dh, const T *restrict z,\
                                                const T *restrict c,                     \
                                                const T *restrict c_prev, int64_t H) {   \
    for (int64_t j = 0; j < H; j++) {                                                    \
        T i = z[j], f = z[H + j], g = z[2 * H + j], o = z[3 * H + j];                    \
        T tc = TANH(c[j]);                                                               \
        T d = dc[j] + dh[j] * o * (1 - tc * tc);                                         \
        dz[j] = d * g * i * (1 - i);                                                     \
        dz[H + j] = d * c_prev[j] * f * (1 - f);                                         \
        dz[2 * H + j] = d * i * (1 - g * g);                                             \
        dz[3 * H + j] = dh[j] * tc * o * (1 - o);                                        \
        dc[j] = d * f;                                                                   \
    }                                                                                    \
}

EMBER_LSTM_FWD(float, f32, ember_sigmoidf_, ember_fast_tanhf)
EMBER_LSTM_FWD(double, f64, ember_sigmoid_, tanh)
EMBER_LSTM_BWD(float, f32, ember_fast_tanhf)
EMBER_LSTM_BWD(double, f64, tanh)

#endif
