// The scalar math of the elementwise ops, shared by the ew module and by ember.compile's
// generated kernels (codegen.py): abi.h's EMBER_UNARY_* / EMBER_BINARY_* codes and the
// functions computing one op in a compute type (float, double, int64), as the CPU plugin
// computes (_scalar.pxd).  A call with a constant op code folds to that op's code.

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
#define U_SIGN 35
#define U_LOGICAL_NOT 36          // not an abi.h code (EMBER_UNARY_COUNT): bitwise_not of bool

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
    case U_SIGN: return (float)((x > 0.0f) - (x < 0.0f));      // NaN and -0.0 give 0
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
    case U_SIGN: return (double)((x > 0.0) - (x < 0.0));
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
    case U_SIGN: return (x > 0) - (x < 0);
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
