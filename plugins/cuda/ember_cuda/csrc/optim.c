/* The fused Adam/AdamW step (abi.h, ember_adam_params; kernels/optim.cu): every parameter
 * of a group in a few launches, ADAM_MAX parameters each, instead of ~14 elementwise
 * launches per parameter.  float32 and float64; other dtypes answer NOT_IMPLEMENTED and
 * the optimizer runs its per-tensor ops. */
#include <string.h>

#include "ec.h"

#define ADAM_MAX 48
#define ADAM_CHUNK 1024

typedef struct {            /* kernels/optim.cu's AdamArgs, field for field */
    double lr, beta1, beta2, eps, weight_decay, step_size, bias_correction2_sqrt;
    int32_t decoupled, amsgrad, maximize, n;
    int64_t numel[ADAM_MAX];
    int64_t first_block[ADAM_MAX + 1];
    char *param[ADAM_MAX], *grad[ADAM_MAX], *exp_avg[ADAM_MAX], *exp_avg_sq[ADAM_MAX],
        *max_exp_avg_sq[ADAM_MAX];
} adam_args;

int ec_adam(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v, int64_t n) {
    if (n <= 0) return EMBER_OK;
    int dtype = v[0]->dtype;
    if (dtype != EMBER_FLOAT32 && dtype != EMBER_FLOAT64) return ec_fail_dtype(ctx, "adam", dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t numel = ec_numel(v[5 * i]);
        for (int k = 0; k < 5; k++) {
            const ember_view *x = v[5 * i + k];
            if (x == NULL) {
                if (k != 4 || p->amsgrad)
                    return ec_fail(ctx, EMBER_ERR_VALUE, "adam: a required view is NULL");
                continue;
            }
            if (x->dtype != dtype || ec_numel(x) != numel || !ec_contiguous(x))
                return ec_fail(ctx, EMBER_ERR_VALUE, "adam: the views of a parameter must be "
                               "contiguous, of one size and one dtype");
        }
    }
    static ec_kernel cache[16];
    CUfunction f;
    int rc = ec_fn(ctx, cache, "optim", dtype, "adam_step", &f);
    if (rc) return rc;
    adam_args a;
    memset(&a, 0, sizeof a);
    a.lr = p->lr, a.beta1 = p->beta1, a.beta2 = p->beta2, a.eps = p->eps;
    a.weight_decay = p->weight_decay, a.step_size = p->step_size;
    a.bias_correction2_sqrt = p->bias_correction2_sqrt;
    a.decoupled = p->decoupled, a.amsgrad = p->amsgrad, a.maximize = p->maximize;
    for (int64_t i0 = 0; i0 < n; i0 += ADAM_MAX) {
        int m = (int)(n - i0 < ADAM_MAX ? n - i0 : ADAM_MAX);
        int64_t blocks = 0;
        a.n = m;
        for (int j = 0; j < m; j++) {
            const ember_view *const *g = v + 5 * (i0 + j);
            a.numel[j] = ec_numel(g[0]);
            a.first_block[j] = blocks;
            blocks += (a.numel[j] + ADAM_CHUNK - 1) / ADAM_CHUNK;
            a.param[j] = g[0]->data, a.grad[j] = g[1]->data, a.exp_avg[j] = g[2]->data;
            a.exp_avg_sq[j] = g[3]->data, a.max_exp_avg_sq[j] = g[4] ? g[4]->data : NULL;
        }
        a.first_block[m] = blocks;
        if (blocks == 0) continue;
        if (blocks > 0x7fffffff) return ec_fail(ctx, EMBER_ERR_VALUE, "adam: too many elements");
        void *args[] = {&a};
        if ((rc = ec_launch(ctx, f, (unsigned)blocks, 1, 1, 256, 0, args))) return rc;
    }
    return EMBER_OK;
}
