// The fused Adam/AdamW step (abi.h, ember_adam_params): up to ADAM_MAX parameters per
// launch, described in the kernel's argument block (no table to upload); each block of
// 256 threads updates ADAM_CHUNK elements of one parameter.  The arithmetic follows
// torch.optim.Adam's single-tensor order, with every scalar rounded to acc_t first, as the
// per-tensor ops round Python numbers to the tensor's dtype.

#define ADAM_MAX 48
#define ADAM_CHUNK 1024

struct AdamArgs {            // csrc/optim.c's adam_args, field for field
    double lr, beta1, beta2, eps, weight_decay, step_size, bias_correction2_sqrt;
    int decoupled, amsgrad, maximize, n;
    i64 numel[ADAM_MAX];
    i64 first_block[ADAM_MAX + 1];
    scalar_t *param[ADAM_MAX];
    const scalar_t *grad[ADAM_MAX];
    scalar_t *exp_avg[ADAM_MAX];
    scalar_t *exp_avg_sq[ADAM_MAX];
    scalar_t *max_exp_avg_sq[ADAM_MAX];
};

extern "C" __global__ void __launch_bounds__(256) adam_step(AdamArgs A) {
    i64 b = blockIdx.x;
    int t = 0;
    while (t + 1 < A.n && A.first_block[t + 1] <= b) t++;
    i64 base = (b - A.first_block[t]) * ADAM_CHUNK;
    const double w = 1.0 - A.beta1;
    const acc_t w_lo = (acc_t)w, w_hi = (acc_t)(1.0 - w), b2 = (acc_t)A.beta2;
    const acc_t one_b2 = (acc_t)(1.0 - A.beta2), wd = (acc_t)A.weight_decay;
    const acc_t shrink = (acc_t)(1.0 - A.lr * A.weight_decay);
    const acc_t bc2 = (acc_t)A.bias_correction2_sqrt, eps = (acc_t)A.eps;
    const acc_t neg_step = (acc_t)(-A.step_size);
    const bool use_wd = A.weight_decay != 0.0, small_w = fabs(w) < 0.5;
    for (int j = 0; j < ADAM_CHUNK / 256; j++) {
        i64 i = base + j * 256 + threadIdx.x;
        if (i >= A.numel[t]) break;
        acc_t p = to_acc(A.param[t][i]), g = to_acc(A.grad[t][i]);
        acc_t m = to_acc(A.exp_avg[t][i]), v = to_acc(A.exp_avg_sq[t][i]);
        if (A.maximize) g = -g;
        if (use_wd) {
            if (A.decoupled) p = p * shrink;
            else g = g + p * wd;
        }
        acc_t diff = g - m;                                   // torch.lerp's two branches
        m = small_w ? m + diff * w_lo : g - diff * w_hi;
        acc_t prod = g * one_b2;
        prod = prod * g;
        v = v * b2 + prod;
        acc_t vv = v;
        if (A.amsgrad) {
            acc_t vm = to_acc(A.max_exp_avg_sq[t][i]);
            vm = ((vm > v) | (vm != vm)) ? vm : v;          // torch.maximum: NaN wins
            A.max_exp_avg_sq[t][i] = Store<EC_DTYPE>::from(vm);
            vv = vm;
        }
        acc_t denom = sqrt(vv) / bc2 + eps;
        acc_t quot = m * neg_step;
        quot = quot / denom;
        A.param[t][i] = Store<EC_DTYPE>::from(p + quot);
        A.exp_avg[t][i] = Store<EC_DTYPE>::from(m);
        A.exp_avg_sq[t][i] = Store<EC_DTYPE>::from(v);
    }
}
