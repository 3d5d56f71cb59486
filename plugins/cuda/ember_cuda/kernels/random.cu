// Random fills (csrc/random.c): the CPU plugin's counter-based Philox4x32-10 (_random.pyx),
// bit for bit.  Element i of out, in row-major order, draws the 4 words of counter
// offset + i under key `seed`; uniform float32 takes 24 bits, float64 53 bits; normal is
// Box-Muller on two uniforms of the same draw.  float16/bfloat16 are computed in float32
// and rounded to nearest even, as the CPU does.  Every multiply and add is rounded on its
// own (no contraction into an FMA), as the CPU computes them; the transcendentals (log,
// cos) are CUDA's, within an ulp or two of glibc's.  The math is __host__ __device__ so a
// host program can check it against the CPU plugin.
#define RANDOM_UNIFORM 0

__host__ __device__ __forceinline__ void philox4x32_10(u32 *c, u32 k0, u32 k1) {
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        u64 p0 = (u64)0xD2511F53u * c[0];
        u64 p1 = (u64)0xCD9E8D57u * c[2];
        u32 n0 = (u32)(p1 >> 32) ^ c[1] ^ k0, n2 = (u32)(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = (u32)p1;
        c[2] = n2;
        c[3] = (u32)p0;
    }
}

// the 4 random words of counter `ctr` under key (k0, k1)
__host__ __device__ __forceinline__ void draw(u32 *c, u64 ctr, u32 k0, u32 k1) {
    c[0] = (u32)ctr;
    c[1] = (u32)(ctr >> 32);
    c[2] = 0;
    c[3] = 0;
    philox4x32_10(c, k0, k1);
}

// rounded arithmetic that the compiler may not fuse into an FMA (the CPU's bits)
template <typename T>
__host__ __device__ __forceinline__ T mul_rn(T a, T b) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(T) == 4) return __fmul_rn(a, b); else return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
template <typename T>
__host__ __device__ __forceinline__ T add_rn(T a, T b) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(T) == 4) return __fadd_rn(a, b); else return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

// uniform in [0, 1) from 24 / 53 random bits (exact products)
__host__ __device__ __forceinline__ float u24(u32 x) {
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}
__host__ __device__ __forceinline__ double u53(u32 hi, u32 lo) {
    return ((double)(hi >> 5) * 67108864.0 + (double)(lo >> 6)) * (1.0 / 9007199254740992.0);
}

// U[p0, p1) and N(p0, p1) of one draw, in float32 and in float64
__host__ __device__ __forceinline__ float sample_f32(int op, const u32 *c, float p0, float p1) {
    if (op == RANDOM_UNIFORM) {
        float v = add_rn(p0, mul_rn(p1 - p0, u24(c[0])));
        if (v >= p1 && p1 > p0) v = nextafterf(p1, -__builtin_inff());     // rounding reached p1
        return v;
    }
    // the logarithm of a uniform in (0, 1]
    float radius = sqrtf(mul_rn(-2.0f, logf(add_rn(u24(c[0]), 1.0f / 16777216.0f))));
    float angle = mul_rn((float)6.283185307179586, u24(c[1]));
    return add_rn(p0, mul_rn(p1, mul_rn(radius, cosf(angle))));
}

__host__ __device__ __forceinline__ double sample_f64(int op, const u32 *c, double p0, double p1) {
    if (op == RANDOM_UNIFORM) {
        double v = add_rn(p0, mul_rn(p1 - p0, u53(c[0], c[1])));
        if (v >= p1 && p1 > p0) v = nextafter(p1, -__builtin_inf());
        return v;
    }
    double radius = sqrt(mul_rn(-2.0, log(add_rn(u53(c[0], c[1]), 1.0 / 9007199254740992.0))));
    double angle = mul_rn(6.283185307179586, u53(c[2], c[3]));
    return add_rn(p0, mul_rn(p1, mul_rn(radius, cos(angle))));
}

#ifdef EC_DTYPE
template <typename I>
__device__ void fill(scalar_t *out, i64 n, int op, u32 k0, u32 k1, u64 offset, double p0,
                     double p1, int flat, const Layout &L) {
    u32 c[4];
    i64 off[1];
    for (i64 i = global_id(); i < n; i += global_threads()) {
        draw(c, offset + (u64)i, k0, k1);
        acc_t v;
        if (sizeof(acc_t) == 4)
            v = (acc_t)sample_f32(op, c, (float)p0, (float)p1);
        else
            v = (acc_t)sample_f64(op, c, p0, p1);
        if (flat)
            off[0] = i;
        else
            offsets<I>(L, (I)i, 1, off);
        out[off[0]] = Store<EC_DTYPE>::from(v);
    }
}

extern "C" __global__ void random_fill(scalar_t *out, i64 n, int op, u32 k0, u32 k1,
                                       u64 offset, double p0, double p1, int flat, Layout L) {
    if (L.index32)
        fill<int>(out, n, op, k0, k1, offset, p0, p1, flat, L);
    else
        fill<i64>(out, n, op, k0, k1, offset, p0, p1, flat, L);
}
#endif
