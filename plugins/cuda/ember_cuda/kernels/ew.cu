// Elementwise kernels of one dtype: unary, binary, comparisons (bool out), where, fill.
// Each comes flat (every operand contiguous, vector loads when aligned) and strided (a
// Layout).  The op codes are abi.h's EMBER_UNARY_* / EMBER_BINARY_*; the semantics are the
// CPU plugin's (_scalar.pxd), computed in acc_t.

// -- unary ------------------------------------------------------------------------------------
#define U_NEG 0
#define U_EXP 1
#define U_RELU 2
#define U_ABS 3
#define U_LOG 4
#define U_SQRT 5
#define U_SIN 6
#define U_COS 7
#define U_TANH 8
#define U_SIGMOID 9
#define U_RECIPROCAL 10
#define U_SQUARE 11
#define U_FLOOR 12
#define U_CEIL 13
#define U_TRUNC 14
#define U_ROUND 15
#define U_EXP2 16
#define U_EXPM1 17
#define U_LOG2 18
#define U_LOG10 19
#define U_LOG1P 20
#define U_ERF 21
#define U_ERFC 22
#define U_ASIN 23
#define U_ACOS 24
#define U_ATAN 25
#define U_SINH 26
#define U_COSH 27
#define U_RSQRT 28
#define U_BITWISE_NOT 29
#define U_TAN 30
#define U_ERFINV 31
#define U_LGAMMA 32
#define U_DIGAMMA 33
#define U_GELU 34
#define U_LOGICAL_NOT 35          // not an abi.h code: bitwise_not of bool

// psi(x): reflection below 0, the recurrence up to x >= 10, then the asymptotic series
// (the CPU plugin's algorithm, in double)
__device__ double digamma_d(double x) {
    double r = 0;
    if (x == 0) return copysign(CUDART_INF, -x);
    if (x < 0) {
        if (x == floor(x)) return CUDART_NAN;
        r = -CUDART_PI / tan(CUDART_PI * x);
        x = 1 - x;
    }
    while (x < 10) {
        r -= 1 / x;
        x += 1;
    }
    double z = 1 / (x * x);
    return r + log(x) - 0.5 / x - z * (1.0 / 12 - z * (1.0 / 120 - z * (
        1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * 691.0 / 32760)))));
}

__device__ __forceinline__ float f_unary(int op, float x) {
    switch (op) {
    case U_NEG: return -x;
    case U_EXP: return expf(x);
    case U_RELU: return x < 0 ? 0.0f : x;
    case U_ABS: return fabsf(x);
    case U_LOG: return logf(x);
    case U_SQRT: return sqrtf(x);
    case U_SIN: return sinf(x);
    case U_COS: return cosf(x);
    case U_TANH: return tanhf(x);
    case U_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case U_RECIPROCAL: return 1.0f / x;
    case U_SQUARE: return x * x;
    case U_FLOOR: return floorf(x);
    case U_CEIL: return ceilf(x);
    case U_TRUNC: return truncf(x);
    case U_ROUND: return rintf(x);
    case U_EXP2: return exp2f(x);
    case U_EXPM1: return expm1f(x);
    case U_LOG2: return log2f(x);
    case U_LOG10: return log10f(x);
    case U_LOG1P: return log1pf(x);
    case U_ERF: return erff(x);
    case U_ERFC: return erfcf(x);
    case U_ASIN: return asinf(x);
    case U_ACOS: return acosf(x);
    case U_ATAN: return atanf(x);
    case U_SINH: return sinhf(x);
    case U_COSH: return coshf(x);
    case U_RSQRT: return 1.0f / sqrtf(x);
    case U_TAN: return tanf(x);
    case U_ERFINV: return erfinvf(x);
    case U_LGAMMA: return lgammaf(x);
    case U_DIGAMMA: return (float)digamma_d(x);
    case U_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    default: return CUDART_NAN_F;
    }
}

__device__ __forceinline__ double f_unary(int op, double x) {
    switch (op) {
    case U_NEG: return -x;
    case U_EXP: return exp(x);
    case U_RELU: return x < 0 ? 0.0 : x;
    case U_ABS: return fabs(x);
    case U_LOG: return log(x);
    case U_SQRT: return sqrt(x);
    case U_SIN: return sin(x);
    case U_COS: return cos(x);
    case U_TANH: return tanh(x);
    case U_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case U_RECIPROCAL: return 1.0 / x;
    case U_SQUARE: return x * x;
    case U_FLOOR: return floor(x);
    case U_CEIL: return ceil(x);
    case U_TRUNC: return trunc(x);
    case U_ROUND: return rint(x);
    case U_EXP2: return exp2(x);
    case U_EXPM1: return expm1(x);
    case U_LOG2: return log2(x);
    case U_LOG10: return log10(x);
    case U_LOG1P: return log1p(x);
    case U_ERF: return erf(x);
    case U_ERFC: return erfc(x);
    case U_ASIN: return asin(x);
    case U_ACOS: return acos(x);
    case U_ATAN: return atan(x);
    case U_SINH: return sinh(x);
    case U_COSH: return cosh(x);
    case U_RSQRT: return 1.0 / sqrt(x);
    case U_TAN: return tan(x);
    case U_ERFINV: return erfinv(x);
    case U_LGAMMA: return lgamma(x);
    case U_DIGAMMA: return digamma_d(x);
    case U_GELU: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752));
    default: return CUDART_NAN;
    }
}

// integers (int64 compute; wrapping through uint64) and bool; the host refuses the rest
__device__ __forceinline__ i64 f_unary(int op, i64 x) {
    switch (op) {
    case U_NEG: return (i64)(0 - (u64)x);
    case U_RELU: return x < 0 ? 0 : x;
    case U_ABS: return x >= 0 ? x : (i64)(0 - (u64)x);
    case U_SQUARE: return (i64)((u64)x * (u64)x);
    case U_BITWISE_NOT: return ~x;
    case U_LOGICAL_NOT: return x == 0;
    default: return x;                    // rounding is the identity on integers
    }
}

// -- binary ---------------------------------------------------------------------------------
#define B_ADD 0
#define B_SUB 1
#define B_MUL 2
#define B_DIV 3
#define B_MAXIMUM 4
#define B_MINIMUM 5
#define B_POW 6
#define B_EQ 7
#define B_NE 8
#define B_LT 9
#define B_LE 10
#define B_GT 11
#define B_GE 12
#define B_LOGICAL_AND 13
#define B_LOGICAL_OR 14
#define B_LOGICAL_XOR 15
#define B_ATAN2 16
#define B_FMOD 17
#define B_REMAINDER 18
#define B_FLOOR_DIVIDE 19
#define B_FMAX 20
#define B_FMIN 21
#define B_BITWISE_AND 22
#define B_BITWISE_OR 23
#define B_BITWISE_XOR 24
#define B_SHIFT_LEFT 25
#define B_SHIFT_RIGHT 26
#define B_GELU_BACKWARD 27

// comparisons and logical ops, in any compute type: 1 or 0
template <typename C>
__device__ __forceinline__ bool f_compare(int op, C x, C y) {
    switch (op) {
    case B_EQ: return x == y;
    case B_NE: return x != y;
    case B_LT: return x < y;
    case B_LE: return x <= y;
    case B_GT: return x > y;
    case B_GE: return x >= y;
    case B_LOGICAL_AND: return (x != 0) & (y != 0);
    case B_LOGICAL_OR: return (x != 0) | (y != 0);
    default: return (x != 0) != (y != 0);            // B_LOGICAL_XOR
    }
}

// PyTorch's floor division of floats (div_floor_floating)
template <typename F>
__device__ __forceinline__ F floor_divide_f(F x, F y) {
    if (y == 0) return x / y;
    F r = fmod(x, y);
    F d = (x - r) / y;
    if ((r != 0) && ((y < 0) != (r < 0))) d -= 1;
    if (d != 0) {
        F f = floor(d);
        if (d - f > (F)0.5) f += 1;
        return f;
    }
    return copysign((F)0, x / y);
}

template <typename F>
__device__ __forceinline__ F f_binary_float(int op, F x, F y) {
    switch (op) {
    case B_ADD: return x + y;
    case B_SUB: return x - y;
    case B_MUL: return x * y;
    case B_DIV: return x / y;
    case B_MAXIMUM: return ((x > y) | (x != x)) ? x : y;
    case B_MINIMUM: return ((x < y) | (x != x)) ? x : y;
    case B_POW: return pow(x, y);
    case B_ATAN2: return atan2(x, y);
    case B_FMOD: return fmod(x, y);
    case B_REMAINDER: {
        F r = fmod(x, y);
        if ((r != 0) && ((r < 0) != (y < 0))) r += y;
        return r;
    }
    case B_FLOOR_DIVIDE: return floor_divide_f(x, y);
    case B_FMAX: return fmax(x, y);
    case B_FMIN: return fmin(x, y);
    case B_GELU_BACKWARD: {             // x: the gradient, y: the GELU's input
        F cdf = (F)0.5 * ((F)1 + erf(y * (F)0.70710678118654752));
        return x * (cdf + y * (F)0.39894228040143268 * exp((F)-0.5 * y * y));
    }
    default: return (F)f_compare(op, x, y);
    }
}

__device__ __forceinline__ float f_binary(int op, float x, float y) {
    return f_binary_float<float>(op, x, y);
}

__device__ __forceinline__ double f_binary(int op, double x, double y) {
    return f_binary_float<double>(op, x, y);
}

__device__ __forceinline__ i64 ipow(i64 x, i64 e) {
    if (e < 0) return x == 1 ? 1 : (x == -1 ? (1 - 2 * ((-e) & 1)) : 0);
    u64 base = (u64)x, r = 1;
    while (e > 0) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return (i64)r;
}

// integers: a zero divisor gives 0 here, and the kernel reports it (check_divisor)
__device__ __forceinline__ i64 f_binary(int op, i64 x, i64 y) {
    switch (op) {
    case B_ADD: return (i64)((u64)x + (u64)y);
    case B_SUB: return (i64)((u64)x - (u64)y);
    case B_MUL: return (i64)((u64)x * (u64)y);
    case B_MAXIMUM: case B_FMAX: return x > y ? x : y;
    case B_MINIMUM: case B_FMIN: return x < y ? x : y;
    case B_POW: return ipow(x, y);
    case B_FMOD: return y == 0 ? 0 : (y == -1 ? 0 : x % y);
    case B_REMAINDER: {
        if (y == 0) return 0;
        i64 r = y == -1 ? 0 : x % y;
        if ((r != 0) && ((r < 0) != (y < 0))) r += y;
        return r;
    }
    case B_FLOOR_DIVIDE: {
        if (y == 0) return 0;
        if (y == -1) return (i64)(0 - (u64)x);
        i64 q = x / y, r = x % y;
        return ((r != 0) && ((r < 0) != (y < 0))) ? q - 1 : q;
    }
    case B_BITWISE_AND: return x & y;
    case B_BITWISE_OR: return x | y;
    case B_BITWISE_XOR: return x ^ y;
    case B_SHIFT_LEFT: return ((y < 0) | (y >= 64)) ? 0 : (i64)((u64)x << y);
    case B_SHIFT_RIGHT: return x >> (((y < 0) | (y >= 64)) ? 63 : y);
    default: return f_compare(op, x, y);
    }
}

// -- the loops ----------------------------------------------------------------------------------
// flat: every tensor operand contiguous; bit 0/1 of `scalars`: a/b is the host scalar sa/sb.
// VEC elements per step, through one vector load or store when `aligned`.
#define VEC (16 / sizeof(scalar_t) > 8 ? 8 : 16 / sizeof(scalar_t))

template <typename T, int N> struct __align__(sizeof(T) * N) Pack { T v[N]; };

template <typename T, int N>
__device__ __forceinline__ void load_pack(const T *p, i64 i, bool aligned, acc_t *out) {
    if (aligned) {
        Pack<T, N> k = *reinterpret_cast<const Pack<T, N> *>(p + i);
#pragma unroll
        for (int j = 0; j < N; j++) out[j] = to_acc(k.v[j]);
    } else {
#pragma unroll
        for (int j = 0; j < N; j++) out[j] = to_acc(p[i + j]);
    }
}

template <int CODE, typename T, int N, typename C>
__device__ __forceinline__ void store_pack(T *p, i64 i, bool aligned, const C *in) {
    if (aligned) {
        Pack<T, N> k;
#pragma unroll
        for (int j = 0; j < N; j++) k.v[j] = Store<CODE>::from(in[j]);
        *reinterpret_cast<Pack<T, N> *>(p + i) = k;
    } else {
#pragma unroll
        for (int j = 0; j < N; j++) p[i + j] = Store<CODE>::from(in[j]);
    }
}

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
