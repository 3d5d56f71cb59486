// The pointwise activations and their gradients (abi.h EMBER_ACTIVATION_*), float32 and
// float64: out = f(a), or out = g * f'(a) when g is given, one pass over contiguous views
// of one shape; out may be a itself (each element is read before it is written).  The
// formulas are the CPU plugin's (_activation_rows.h) with CUDA's exp, expm1 and log1p;
// min/max are comparisons so that NaN is kept.  Each op gets a loop of its own.

struct ActParams {
    acc_t p0, p1, p2, p01;                // the op's parameters in acc_t; p01 = p0 * p1
};

__device__ __forceinline__ acc_t act_forward(int op, acc_t x, const ActParams &p) {
    switch (op) {
    case 0: return x > 0 ? x : x * p.p0;                                   // leaky_relu
    case 1: return x <= p.p0 ? p.p0 : (x >= p.p1 ? p.p1 : x);              // hardtanh
    case 2: { acc_t t = x < p.p0 ? p.p0 : x; return t > p.p1 ? p.p1 : t; } // clamp
    case 3: { acc_t t = x + 3; t = t < 0 ? 0 : t; return (t > 6 ? 6 : t) / 6; }
    case 4: { acc_t t = x + 3; t = t < 0 ? 0 : t; return x * (t > 6 ? 6 : t) / 6; }
    case 5: return x / (1 + exp(-x));                                      // silu
    case 6: return x <= 0 ? expm1(x * p.p2) * p.p01 : x * p.p1;            // elu
    case 7: { acc_t b = x * p.p0; return b > p.p1 ? x : log1p(exp(b)) / p.p0; }  // softplus
    case 8: return (x < 0 ? x : (acc_t)0) - log1p(exp(-fabs(x)));          // log_sigmoid
    case 9: return (x >= -p.p0 && x <= p.p0) ? (acc_t)0 : x;               // hardshrink
    case 10: return x > p.p0 ? x - p.p0 : (x < -p.p0 ? x + p.p0 : x * 0);  // softshrink
    default: {                         // mish: tanh(log1p(e)) = m / (m + 2), m = e (e + 2)
        acc_t e = exp(x > 20 ? (acc_t)20 : x), m = e * (e + 2);
        return x * (m / (m + 2));
    }
    }
}

__device__ __forceinline__ acc_t act_backward(int op, acc_t x, acc_t g, const ActParams &p) {
    switch (op) {
    case 0: return x > 0 ? g : g * p.p0;
    case 1: return (x <= p.p0 || x >= p.p1) ? (acc_t)0 : g;
    case 2: return (x >= p.p0 && x <= p.p1) ? g : (acc_t)0;
    case 3: return (x > -3 && x < 3) ? g * (acc_t)(1.0f / 6.0f) : (acc_t)0;  // a float 1/6
    case 4: return x <= -3 ? (acc_t)0 : (x < 3 ? g * (x / 3 + (acc_t)0.5) : g);
    case 5: { acc_t s = 1 / (1 + exp(-x)); return g * s * (1 + x * (1 - s)); }
    case 6: return x <= 0 ? g * p.p2 * p.p01 * exp(x * p.p2) : g * p.p1;
    case 7: { acc_t b = x * p.p0, z = exp(b); return b > p.p1 ? g : g * z / (z + 1); }
    case 8: { acc_t z = exp(-fabs(x)), q = z / (1 + z); return g * (x < 0 ? 1 - q : q); }
    case 9:
    case 10: return (x >= -p.p0 && x <= p.p0) ? (acc_t)0 : g;
    default: {
        acc_t e = exp(x > 20 ? (acc_t)20 : x), m = e * (e + 2), t = m / (m + 2);
        acc_t s = e / (e + 1);
        return g * (t + x * s * (1 - t * t));
    }
    }
}

// one op's loop over contiguous views (the op a constant in it): VEC elements a step;
// g NULL: the forward
template <int OP>
__device__ __forceinline__ void act_loop(scalar_t *out, const scalar_t *a, const scalar_t *g,
                                         i64 n, const ActParams &p, bool aligned) {
    acc_t x[VEC], y[VEC], r[VEC];
    i64 nv = n / VEC;
    for (i64 v = global_id(); v < nv; v += global_threads()) {
        load_pack<scalar_t, VEC>(a, v * VEC, aligned, x);
        if (g) {
            load_pack<scalar_t, VEC>(g, v * VEC, aligned, y);
#pragma unroll
            for (int j = 0; j < VEC; j++) r[j] = act_backward(OP, x[j], y[j], p);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) r[j] = act_forward(OP, x[j], p);
        }
        store_pack<EC_DTYPE, scalar_t, VEC>(out, v * VEC, aligned, r);
    }
    for (i64 i = nv * VEC + global_id(); i < n; i += global_threads())
        out[i] = g ? act_backward(OP, a[i], g[i], p) : act_forward(OP, a[i], p);
}

// the parameters are rounded to acc_t first, as PyTorch's kernels take them
extern "C" __global__ void activation_kernel(scalar_t *out, const scalar_t *a,
                                             const scalar_t *g, i64 n, int op, double p0,
                                             double p1, double p2, int aligned) {
    ActParams p = {(acc_t)p0, (acc_t)p1, (acc_t)p2, (acc_t)p0 * (acc_t)p1};
    bool al = aligned != 0;
    switch (op) {
#define EC_ACT_CASE(K) case K: act_loop<K>(out, a, g, n, p, al); break;
    EC_ACT_CASE(0) EC_ACT_CASE(1) EC_ACT_CASE(2) EC_ACT_CASE(3) EC_ACT_CASE(4) EC_ACT_CASE(5)
    EC_ACT_CASE(6) EC_ACT_CASE(7) EC_ACT_CASE(8) EC_ACT_CASE(9) EC_ACT_CASE(10)
    default: act_loop<11>(out, a, g, n, p, al);
#undef EC_ACT_CASE
    }
}
