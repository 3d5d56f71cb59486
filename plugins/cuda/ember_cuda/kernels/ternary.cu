// lerp, addcmul and addcdiv (abi.h EMBER_TERNARY_*), floating dtypes only: one pass over
// out, a, b and c (lerp's weight or the ops' tensor2; NULL: the number p), in acc_t with
// one fused multiply-add where abi.h puts it, so the bits match the CPU plugin's.  Each op
// gets its loops of its own (the op a constant in them); flat loops take VEC elements a step.
#define T_LERP 0
#define T_ADDCMUL 1
#define T_ADDCDIV 2

__device__ __forceinline__ float fused(float x, float y, float z) { return fmaf(x, y, z); }
__device__ __forceinline__ double fused(double x, double y, double z) { return fma(x, y, z); }

// abi.h's formulas; IEEE division (no fast-math), so addcdiv rounds as on the host
__device__ __forceinline__ acc_t ternary_op(int op, acc_t a, acc_t b, acc_t c, acc_t p) {
    if (op == T_ADDCMUL) return fused(p * b, c, a);
    if (op == T_ADDCDIV) return a + (p * b) / c;
    bool small = fabs(c) < (acc_t)0.5;
    return fused(small ? c : c - (acc_t)1, b - a, small ? a : b);
}

// every operand contiguous (c may be NULL); `aligned`: each address allows vector access
template <int OP>
__device__ __forceinline__ void ternary_flat_loop(scalar_t *out, const scalar_t *a,
                                                  const scalar_t *b, const scalar_t *c,
                                                  acc_t p, i64 n, bool aligned) {
    acc_t xa[VEC], xb[VEC], xc[VEC], r[VEC];
    i64 nv = n / VEC;
    for (i64 v = global_id(); v < nv; v += global_threads()) {
        load_pack<scalar_t, VEC>(a, v * VEC, aligned, xa);
        load_pack<scalar_t, VEC>(b, v * VEC, aligned, xb);
        if (c) {
            load_pack<scalar_t, VEC>(c, v * VEC, aligned, xc);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) xc[j] = p;
        }
#pragma unroll
        for (int j = 0; j < VEC; j++) r[j] = ternary_op(OP, xa[j], xb[j], xc[j], p);
        store_pack<EC_DTYPE, scalar_t, VEC>(out, v * VEC, aligned, r);
    }
    for (i64 i = nv * VEC + global_id(); i < n; i += global_threads())
        out[i] = Store<EC_DTYPE>::from(
            ternary_op(OP, to_acc(a[i]), to_acc(b[i]), c ? to_acc(c[i]) : p, p));
}

// operand 0 is out, 1 a, 2 b, 3 c of a Layout
template <int OP, typename I>
__device__ __forceinline__ void ternary_strided_loop(scalar_t *out, const scalar_t *a,
                                                     const scalar_t *b, const scalar_t *c,
                                                     acc_t p, i64 n, const Layout &L) {
    i64 off[4];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        offsets<I>(L, (I)i, 4, off);
        acc_t w = c ? to_acc(c[off[3]]) : p;
        out[off[0]] = Store<EC_DTYPE>::from(
            ternary_op(OP, to_acc(a[off[1]]), to_acc(b[off[2]]), w, p));
    }
}

template <int OP>
__device__ __forceinline__ void ternary_run(scalar_t *out, const scalar_t *a, const scalar_t *b,
                                            const scalar_t *c, acc_t p, i64 n, int flags,
                                            const Layout &L) {
    if (flags & 8)                                       // flat (csrc/elementwise.c's flags)
        ternary_flat_loop<OP>(out, a, b, c, p, n, (flags & 4) != 0);
    else if (L.index32)
        ternary_strided_loop<OP, u32>(out, a, b, c, p, n, L);
    else
        ternary_strided_loop<OP, i64>(out, a, b, c, p, n, L);
}

extern "C" __global__ void ternary_kernel(scalar_t *out, const scalar_t *a, const scalar_t *b,
                                          const scalar_t *c, Scalar p, i64 n, int op,
                                          int flags, Layout L) {
    acc_t pv;
    scalar_as(p, &pv);                     // p rounded to the compute type first
    switch (op) {
    case T_LERP: ternary_run<T_LERP>(out, a, b, c, pv, n, flags, L); break;
    case T_ADDCMUL: ternary_run<T_ADDCMUL>(out, a, b, c, pv, n, flags, L); break;
    default: ternary_run<T_ADDCDIV>(out, a, b, c, pv, n, flags, L);
    }
}
