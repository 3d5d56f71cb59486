// Elementwise kernels of one dtype: unary, binary, comparisons (bool out), where, fill.
// Each comes flat (every operand contiguous, vector loads when aligned) and strided (a
// Layout).  The op codes are abi.h's EMBER_UNARY_* / EMBER_BINARY_*; the semantics are the
// CPU plugin's (_scalar.pxd), computed in acc_t.
// (the op codes and their scalar math: scalar_ops.cuh)

// -- the loops ----------------------------------------------------------------------------------
// flat: every tensor operand contiguous; bit 0/1 of `scalars`: a/b is the host scalar sa/sb.
// VEC elements per step, through one vector load or store when `aligned` (vec.cuh).

// out[i] = f(i, a[i], b[i]) over the flat range, vectorised; R is the result's storage
template <int OUT_CODE, typename R, typename F>
__device__ __forceinline__ void flat2(R *out, const scalar_t *a, const scalar_t *b, Scalar sa,
                                      Scalar sb, i64 n, int scalars, bool aligned, F f) {
    acc_t xa[VEC], xb[VEC];
    acc_t ca, cb;
    scalar_as(sa, &ca);
    scalar_as(sb, &cb);
    i64 nv = n / VEC;
    for (i64 v = global_id(); v < nv; v += global_threads()) {
        if (scalars & 1) {
#pragma unroll
            for (int j = 0; j < VEC; j++) xa[j] = ca;
        } else {
            load_pack<scalar_t, VEC>(a, v * VEC, aligned, xa);
        }
        if (scalars & 2) {
#pragma unroll
            for (int j = 0; j < VEC; j++) xb[j] = cb;
        } else if (b) {
            load_pack<scalar_t, VEC>(b, v * VEC, aligned, xb);
        }
        decltype(f(xa[0], xb[0])) r[VEC];
#pragma unroll
        for (int j = 0; j < VEC; j++) r[j] = f(xa[j], xb[j]);
        store_pack<OUT_CODE, R, VEC>(out, v * VEC, aligned, r);
    }
    for (i64 i = nv * VEC + global_id(); i < n; i += global_threads()) {
        acc_t x = (scalars & 1) ? ca : to_acc(a[i]);
        acc_t y = (scalars & 2) ? cb : (b ? to_acc(b[i]) : (acc_t)0);
        out[i] = Store<OUT_CODE>::from(f(x, y));
    }
}

// the same over a Layout: operand 0 is out, 1 is a, 2 is b
template <int OUT_CODE, typename R, typename I, typename F>
__device__ __forceinline__ void strided2(R *out, const scalar_t *a, const scalar_t *b,
                                         Scalar sa, Scalar sb, i64 n, int scalars,
                                         const Layout &L, F f) {
    acc_t ca, cb;
    scalar_as(sa, &ca);
    scalar_as(sb, &cb);
    i64 off[3];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        offsets<I>(L, (I)i, 3, off);
        acc_t x = (scalars & 1) ? ca : to_acc(a[off[1]]);
        acc_t y = (scalars & 2) ? cb : (b ? to_acc(b[off[2]]) : (acc_t)0);
        out[off[0]] = Store<OUT_CODE>::from(f(x, y));
    }
}

#define EC_FLAG_ALIGNED 4

struct UnaryOp {
    int op;
    __device__ acc_t operator()(acc_t x, acc_t) const { return f_unary(op, x); }
};
// integer division by zero: the CPU's ZeroDivisionError, through the error slot (code 5)
__device__ __forceinline__ void check_divisor(int op, i64 y, i64 *err) {
    if (err && y == 0 && (op == B_FMOD || op == B_REMAINDER || op == B_FLOOR_DIVIDE))
        atomicCAS((unsigned long long *)err, 0ull, 5ull);
}
__device__ __forceinline__ void check_divisor(int, float, i64 *) {}
__device__ __forceinline__ void check_divisor(int, double, i64 *) {}

struct BinaryOp {
    int op;
    i64 *err;               // the error slot, for integer division ops (else NULL)
    __device__ acc_t operator()(acc_t x, acc_t y) const {
        check_divisor(op, y, err);
        return f_binary(op, x, y);
    }
};
struct CompareOp {
    int op;
    __device__ i64 operator()(acc_t x, acc_t y) const { return f_compare(op, x, y); }
};

// The hottest binary ops get loops of their own (no switch per element).
struct AddOp { __device__ acc_t operator()(acc_t x, acc_t y) const { return f_binary(B_ADD, x, y); } };
struct MulOp { __device__ acc_t operator()(acc_t x, acc_t y) const { return f_binary(B_MUL, x, y); } };
struct SubOp { __device__ acc_t operator()(acc_t x, acc_t y) const { return f_binary(B_SUB, x, y); } };

extern "C" __global__ void unary_flat(scalar_t *out, const scalar_t *a, i64 n, int op,
                                      int flags) {
    Scalar z;
    z.i = 0;
    flat2<EC_DTYPE>(out, a, (const scalar_t *)0, z, z, n, 0, flags & EC_FLAG_ALIGNED,
                    UnaryOp{op});
}

extern "C" __global__ void unary_strided(scalar_t *out, const scalar_t *a, i64 n, int op,
                                         Layout L) {
    Scalar z;
    z.i = 0;
    if (L.index32)
        strided2<EC_DTYPE, scalar_t, u32>(out, a, (const scalar_t *)0, z, z, n, 0, L,
                                          UnaryOp{op});
    else
        strided2<EC_DTYPE, scalar_t, i64>(out, a, (const scalar_t *)0, z, z, n, 0, L,
                                          UnaryOp{op});
}

extern "C" __global__ void binary_flat(scalar_t *out, const scalar_t *a, const scalar_t *b,
                                       Scalar sa, Scalar sb, i64 n, int op, int flags,
                                       i64 *err) {
    int sc = flags & 3;
    bool al = flags & EC_FLAG_ALIGNED;
    switch (op) {
    case B_ADD: flat2<EC_DTYPE>(out, a, b, sa, sb, n, sc, al, AddOp{}); break;
    case B_MUL: flat2<EC_DTYPE>(out, a, b, sa, sb, n, sc, al, MulOp{}); break;
    case B_SUB: flat2<EC_DTYPE>(out, a, b, sa, sb, n, sc, al, SubOp{}); break;
    default: flat2<EC_DTYPE>(out, a, b, sa, sb, n, sc, al, BinaryOp{op, err});
    }
}

extern "C" __global__ void binary_strided(scalar_t *out, const scalar_t *a, const scalar_t *b,
                                          Scalar sa, Scalar sb, i64 n, int op, int flags,
                                          i64 *err, Layout L) {
    if (L.index32)
        strided2<EC_DTYPE, scalar_t, u32>(out, a, b, sa, sb, n, flags & 3, L,
                                          BinaryOp{op, err});
    else
        strided2<EC_DTYPE, scalar_t, i64>(out, a, b, sa, sb, n, flags & 3, L,
                                          BinaryOp{op, err});
}

extern "C" __global__ void compare_flat(unsigned char *out, const scalar_t *a,
                                        const scalar_t *b, Scalar sa, Scalar sb, i64 n, int op,
                                        int flags) {
    flat2<D_BOOL>(out, a, b, sa, sb, n, flags & 3, flags & EC_FLAG_ALIGNED, CompareOp{op});
}

extern "C" __global__ void compare_strided(unsigned char *out, const scalar_t *a,
                                           const scalar_t *b, Scalar sa, Scalar sb, i64 n,
                                           int op, int flags, Layout L) {
    if (L.index32)
        strided2<D_BOOL, unsigned char, u32>(out, a, b, sa, sb, n, flags & 3, L,
                                             CompareOp{op});
    else
        strided2<D_BOOL, unsigned char, i64>(out, a, b, sa, sb, n, flags & 3, L,
                                             CompareOp{op});
}

// out = cond ? a : b (cond bool; a, b and out of this dtype, moved as they are)
template <typename I>
__device__ __forceinline__ void where_loop(scalar_t *out, const unsigned char *cond,
                                           const scalar_t *a, const scalar_t *b, Scalar sa,
                                           Scalar sb, i64 n, int scalars, const Layout &L,
                                           bool flat) {
    acc_t ca, cb;
    scalar_as(sa, &ca);
    scalar_as(sb, &cb);
    scalar_t va = Store<EC_DTYPE>::from(ca), vb = Store<EC_DTYPE>::from(cb);
    i64 off[4];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        if (flat) {
            off[0] = off[1] = off[2] = off[3] = i;
        } else {
            offsets<I>(L, (I)i, 4, off);
        }
        bool c = cond[off[1]] != 0;
        scalar_t x = c ? ((scalars & 1) ? va : a[off[2]]) : ((scalars & 2) ? vb : b[off[3]]);
        out[off[0]] = x;
    }
}

extern "C" __global__ void where_kernel(scalar_t *out, const unsigned char *cond,
                                        const scalar_t *a, const scalar_t *b, Scalar sa,
                                        Scalar sb, i64 n, int flags, Layout L) {
    bool flat = (flags & 8) != 0;
    if (flat || L.index32)
        where_loop<u32>(out, cond, a, b, sa, sb, n, flags & 3, L, flat);
    else
        where_loop<i64>(out, cond, a, b, sa, sb, n, flags & 3, L, false);
}

// out[...] = value (one element of this dtype, by value)
extern "C" __global__ void fill_kernel(scalar_t *out, Scalar value, i64 n, int flat,
                                       Layout L) {
    acc_t c;
    scalar_as(value, &c);
    scalar_t v = Store<EC_DTYPE>::from(c);
    i64 off[1];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        if (flat) {
            off[0] = i;
        } else if (L.index32) {
            offsets<u32>(L, (u32)i, 1, off);
        } else {
            offsets<i64>(L, i, 1, off);
        }
        out[off[0]] = v;
    }
}
