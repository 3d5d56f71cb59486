/* Elementwise kernels: unary (out = f(a)), binary (out = f(a, b)) and where
 * (out = cond ? a : b).  The core has already broadcast every input to out's shape (a
 * broadcast input has stride 0) and, except for the predicates, given it out's dtype.
 *
 * Each op is one scalar function: floats compute in double (float16/bfloat16 included,
 * rounded once on store), integers in int64 with C's wrapping arithmetic (stored back with
 * a wrap), bool as int64 0/1 stored as "nonzero" (so add is `or` and mul is `and`).
 * Which (op, dtype) pairs exist follows PyTorch, as ember/abi_tables.h lists them (generated
 * from ember's op table, with the ops' names); anything else returns
 * EMBER_ERR_NOT_IMPLEMENTED, which the core turns into NotImplementedError (or a host
 * fallback).
 */
#define _GNU_SOURCE                           /* lgamma_r */
#include <math.h>
#include <string.h>

#include "ember/abi_tables.h"
#include "reference.h"

double lgamma_r(double x, int *sign);

/* ---- special functions the C library lacks --------------------------------------------- */

/* erfinv: Giles' single-precision approximation ("Approximating the erfinv function",
 * 2010), polished by Newton steps on erf (on log erfc in the tails, where 1 - |y| is
 * exact, so the tails keep full precision) */
static double erfinv(double y) {
    static const double central[9] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
        -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
        1.50140941};
    static const double tail[9] = {-0.000200214257, 0.000100950558, 0.00134934322,
        -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
    double a = fabs(y);
    if (!(a <= 1)) return NAN;
    if (a == 1) return copysign(INFINITY, y);
    double w = -log((1 - a) * (1 + a)), t = w < 5 ? w - 2.5 : sqrt(w) - 3;
    const double *c = w < 5 ? central : tail;
    double x = c[0];
    for (int i = 1; i < 9; i++) x = x * t + c[i];
    x *= a;
    for (int k = 0; k < 8; k++) {
        double slope = 1.1283791670955126 * exp(-x * x), step;     /* erf'(x) */
        if (a < 0.5) {
            step = (erf(x) - a) / slope;
        } else {
            double e = erfc(x);
            step = (log(1 - a) - log(e)) * e / slope;
        }
        x -= step;
        if (fabs(step) <= 1e-16 * x) break;
    }
    return copysign(x, y);
}

/* digamma: reflection below 0, psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
 * asymptotic series; PyTorch's values at the poles */
static double digamma(double x) {
    double r = 0;
    if (x == 0) return copysign(INFINITY, -x);    /* -inf at +0, +inf at -0 */
    if (x < 0) {
        if (x == floor(x)) return NAN;
        r = -M_PI / tan(M_PI * x);
        x = 1 - x;
    }
    for (; x < 10; x += 1) r -= 1 / x;
    double z = 1 / (x * x);
    return r + log(x) - 0.5 / x - z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 -
           z * (1.0 / 240 - z * (1.0 / 132 - z * 691.0 / 32760)))));
}

static double normal_cdf(double x) { return 0.5 * (1 + erf(x * M_SQRT1_2)); }

/* ---- unary ----------------------------------------------------------------------------- */

static double unary_d(int32_t op, double x) {
    int sign;
    switch (op) {
    case EMBER_UNARY_NEG: return -x;
    case EMBER_UNARY_EXP: return exp(x);
    case EMBER_UNARY_RELU: return x > 0 || x != x ? x : 0.0;      /* NaN stays NaN */
    case EMBER_UNARY_ABS: return fabs(x);
    case EMBER_UNARY_LOG: return log(x);
    case EMBER_UNARY_SQRT: return sqrt(x);
    case EMBER_UNARY_SIN: return sin(x);
    case EMBER_UNARY_COS: return cos(x);
    case EMBER_UNARY_TANH: return tanh(x);
    case EMBER_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case EMBER_UNARY_RECIPROCAL: return 1.0 / x;
    case EMBER_UNARY_SQUARE: return x * x;
    case EMBER_UNARY_FLOOR: return floor(x);
    case EMBER_UNARY_CEIL: return ceil(x);
    case EMBER_UNARY_TRUNC: return trunc(x);
    case EMBER_UNARY_ROUND: return nearbyint(x);                   /* half to even */
    case EMBER_UNARY_EXP2: return exp2(x);
    case EMBER_UNARY_EXPM1: return expm1(x);
    case EMBER_UNARY_LOG2: return log2(x);
    case EMBER_UNARY_LOG10: return log10(x);
    case EMBER_UNARY_LOG1P: return log1p(x);
    case EMBER_UNARY_ERF: return erf(x);
    case EMBER_UNARY_ERFC: return erfc(x);
    case EMBER_UNARY_ASIN: return asin(x);
    case EMBER_UNARY_ACOS: return acos(x);
    case EMBER_UNARY_ATAN: return atan(x);
    case EMBER_UNARY_SINH: return sinh(x);
    case EMBER_UNARY_COSH: return cosh(x);
    case EMBER_UNARY_RSQRT: return 1.0 / sqrt(x);
    case EMBER_UNARY_TAN: return tan(x);
    case EMBER_UNARY_ERFINV: return erfinv(x);
    case EMBER_UNARY_LGAMMA: return lgamma_r(x, &sign);            /* thread-safe lgamma */
    case EMBER_UNARY_DIGAMMA: return digamma(x);
    case EMBER_UNARY_SIGN: return (double)((x > 0) - (x < 0));    /* NaN and -0.0: 0 */
    default: return x * normal_cdf(x);                             /* EMBER_UNARY_GELU */
    }
}

static int64_t unary_i(int32_t op, int64_t x) {    /* wrapping integer arithmetic */
    uint64_t u = (uint64_t)x;
    switch (op) {
    case EMBER_UNARY_NEG: return (int64_t)(0 - u);
    case EMBER_UNARY_RELU: return x > 0 ? x : 0;
    case EMBER_UNARY_ABS: return x < 0 ? (int64_t)(0 - u) : x;
    case EMBER_UNARY_SQUARE: return (int64_t)(u * u);
    case EMBER_UNARY_BITWISE_NOT: return ~x;
    case EMBER_UNARY_SIGN: return (x > 0) - (x < 0);
    default: return x;                        /* rounding: the identity on integers */
    }
}

static int unary_supported(int32_t op, int32_t dt) {
    return (ember_unary_dtypes[op] & EMBER_DTYPE_BIT(dt)) != 0;
}

int ref_unary(ember_ctx *ctx, int32_t op, const ember_view *out_dev, const ember_view *a_dev) {
    if (op < 0 || op >= EMBER_UNARY_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "unary: unknown op code %d", (int)op);
    ember_view out, a;
    REF_TRY(ref_map_view(ctx, &out, out_dev, ember_unary_names[op]));
    REF_TRY(ref_map_view(ctx, &a, a_dev, ember_unary_names[op]));
    REF_TRY(ref_check_same_dtype(ctx, ember_unary_names[op], &out, &a));
    if (!unary_supported(op, out.dtype))
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "unary '%s' is not implemented for %s",
                        ember_unary_names[op], ref_dtype_name(out.dtype));
    int fl = ref_is_float(out.dtype);
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    int64_t n = ref_numel(out.ndim, out.sizes);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) {
        if (fl) {
            ref_store_d(it.ptr[0], out.dtype, unary_d(op, ref_load_d(it.ptr[1], a.dtype)));
        } else {
            int64_t x = ref_load_i(it.ptr[1], a.dtype);
            ref_store_i(it.ptr[0], out.dtype, out.dtype == EMBER_BOOL ? !x : unary_i(op, x));
        }
    }
    return EMBER_OK;
}

/* ---- binary ---------------------------------------------------------------------------- */

double ref_maximum(double x, double y) { return x != x || x > y ? x : y; }
double ref_minimum(double x, double y) { return x != x || x < y ? x : y; }

static int is_predicate(int32_t op) { return op >= EMBER_BINARY_EQ && op <= EMBER_BINARY_LOGICAL_XOR; }

/* predicates give 0/1 (NaN compares false but for NE; logical ops read NaN as true) */
#define REF_PREDICATES(x, y)                                                            \
    case EMBER_BINARY_EQ: return (x) == (y);                                            \
    case EMBER_BINARY_NE: return (x) != (y);                                            \
    case EMBER_BINARY_LT: return (x) < (y);                                             \
    case EMBER_BINARY_LE: return (x) <= (y);                                            \
    case EMBER_BINARY_GT: return (x) > (y);                                             \
    case EMBER_BINARY_GE: return (x) >= (y);                                            \
    case EMBER_BINARY_LOGICAL_AND: return ((x) != 0) && ((y) != 0);                     \
    case EMBER_BINARY_LOGICAL_OR: return ((x) != 0) || ((y) != 0);                      \
    case EMBER_BINARY_LOGICAL_XOR: return ((x) != 0) != ((y) != 0);

/* floor division of floats as PyTorch's div_floor_floating: from fmod, so that
 * x == y * q + r holds as closely as it can */
static double floor_divide_d(double x, double y) {
    if (y == 0) return x / y;
    double r = fmod(x, y), d = (x - r) / y;
    if (r != 0 && (y < 0) != (r < 0)) d -= 1;
    if (d == 0) return copysign(0, x / y);
    double f = floor(d);
    return d - f > 0.5 ? f + 1 : f;
}

static double binary_d(int32_t op, double x, double y) {
    double r;
    switch (op) {
    REF_PREDICATES(x, y)
    case EMBER_BINARY_ADD: return x + y;
    case EMBER_BINARY_SUB: return x - y;
    case EMBER_BINARY_MUL: return x * y;
    case EMBER_BINARY_DIV: return x / y;
    case EMBER_BINARY_MAXIMUM: return ref_maximum(x, y);
    case EMBER_BINARY_MINIMUM: return ref_minimum(x, y);
    case EMBER_BINARY_POW: return pow(x, y);
    case EMBER_BINARY_ATAN2: return atan2(x, y);
    case EMBER_BINARY_FMOD: return fmod(x, y);
    case EMBER_BINARY_REMAINDER:                  /* the divisor's sign (Python %) */
        r = fmod(x, y);
        return r != 0 && (r < 0) != (y < 0) ? r + y : r;
    case EMBER_BINARY_FLOOR_DIVIDE: return floor_divide_d(x, y);
    case EMBER_BINARY_FMAX: return fmax(x, y);
    case EMBER_BINARY_FMIN: return fmin(x, y);
    default:                                      /* EMBER_BINARY_GELU_BACKWARD */
        return x * (normal_cdf(y) + y * 0.3989422804014327 * exp(-0.5 * y * y));
    }
}

/* x ** e for integers, wrapping; a negative exponent truncates 1 / x ** -e (PyTorch) */
static int64_t ipow(int64_t x, int64_t e) {
    if (e < 0) return x == 1 ? 1 : x == -1 ? ((-e) & 1 ? -1 : 1) : 0;
    uint64_t base = (uint64_t)x, r = 1;
    for (; e > 0; e >>= 1, base *= base)
        if (e & 1) r *= base;
    return (int64_t)r;
}

/* integer ops; the caller has refused division by zero (FMOD, REMAINDER, FLOOR_DIVIDE) */
static int64_t binary_i(int32_t op, int64_t x, int64_t y) {
    int64_t r;
    switch (op) {
    REF_PREDICATES(x, y)
    case EMBER_BINARY_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case EMBER_BINARY_SUB: return (int64_t)((uint64_t)x - (uint64_t)y);
    case EMBER_BINARY_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case EMBER_BINARY_MAXIMUM: case EMBER_BINARY_FMAX: return x > y ? x : y;
    case EMBER_BINARY_MINIMUM: case EMBER_BINARY_FMIN: return x < y ? x : y;
    case EMBER_BINARY_POW: return ipow(x, y);
    case EMBER_BINARY_FMOD: return y == -1 ? 0 : x % y;      /* INT64_MIN % -1 traps */
    case EMBER_BINARY_REMAINDER:
        r = y == -1 ? 0 : x % y;
        return r != 0 && (r < 0) != (y < 0) ? r + y : r;
    case EMBER_BINARY_FLOOR_DIVIDE:
        if (y == -1) return (int64_t)(0 - (uint64_t)x);
        r = x % y;
        return x / y - (r != 0 && (r < 0) != (y < 0));
    case EMBER_BINARY_BITWISE_AND: return x & y;
    case EMBER_BINARY_BITWISE_OR: return x | y;
    case EMBER_BINARY_BITWISE_XOR: return x ^ y;
    case EMBER_BINARY_SHIFT_LEFT: return y < 0 || y >= 64 ? 0 : (int64_t)((uint64_t)x << y);
    default: return x >> (y < 0 || y >= 64 ? 63 : y);        /* EMBER_BINARY_SHIFT_RIGHT */
    }
}

static int binary_supported(int32_t op, int32_t dt) {
    return (ember_binary_dtypes[op] & EMBER_DTYPE_BIT(dt)) != 0;
}

int ref_binary(ember_ctx *ctx, int32_t op, const ember_view *out_dev, const ember_view *a_dev,
               const ember_view *b_dev) {
    if (op < 0 || op >= EMBER_BINARY_COUNT)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "binary: unknown op code %d", (int)op);
    const char *name = ember_binary_names[op];
    ember_view out, a, b;
    REF_TRY(ref_map_view(ctx, &out, out_dev, name));
    REF_TRY(ref_map_view(ctx, &a, a_dev, name));
    REF_TRY(ref_map_view(ctx, &b, b_dev, name));
    REF_TRY(ref_check_same_dtype(ctx, name, &a, &b));
    if (is_predicate(op)) {                   /* any one input dtype, bool out */
        if (out.dtype != EMBER_BOOL)
            return ref_fail(ctx, EMBER_ERR_TYPE, "%s: out must be bool", name);
    } else {
        REF_TRY(ref_check_same_dtype(ctx, name, &out, &a));
        if (!binary_supported(op, out.dtype))
            return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED,
                            "binary '%s' is not implemented for %s", name,
                            ref_dtype_name(out.dtype));
    }
    int fl = ref_is_float(a.dtype);
    int divides = op == EMBER_BINARY_FMOD || op == EMBER_BINARY_REMAINDER ||
                  op == EMBER_BINARY_FLOOR_DIVIDE;
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    ref_iter_add(&it, b.data, b.strides, b.dtype);
    int64_t n = ref_numel(out.ndim, out.sizes);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it)) {
        if (fl) {
            double r = binary_d(op, ref_load_d(it.ptr[1], a.dtype), ref_load_d(it.ptr[2], b.dtype));
            ref_store_d(it.ptr[0], out.dtype, r);
        } else {
            int64_t x = ref_load_i(it.ptr[1], a.dtype), y = ref_load_i(it.ptr[2], b.dtype);
            if (divides && y == 0)
                return ref_data_error(ctx, EMBER_ERR_RUNTIME, "ZeroDivisionError");
            ref_store_i(it.ptr[0], out.dtype, binary_i(op, x, y));
        }
    }
    return EMBER_OK;
}

/* ---- where: out = cond ? a : b (a, b share out's dtype: copy the chosen element) ------- */

int ref_where(ember_ctx *ctx, const ember_view *out_dev, const ember_view *cond_dev,
              const ember_view *a_dev, const ember_view *b_dev) {
    ember_view out, cond, a, b;
    REF_TRY(ref_map_view(ctx, &out, out_dev, "where"));
    REF_TRY(ref_map_view(ctx, &cond, cond_dev, "where"));
    REF_TRY(ref_map_view(ctx, &a, a_dev, "where"));
    REF_TRY(ref_map_view(ctx, &b, b_dev, "where"));
    REF_TRY(ref_check_same_dtype(ctx, "where", &out, &a));
    REF_TRY(ref_check_same_dtype(ctx, "where", &out, &b));
    if (cond.dtype != EMBER_BOOL)
        return ref_fail(ctx, EMBER_ERR_TYPE, "where: the condition must be bool, got %s",
                        ref_dtype_name(cond.dtype));
    ref_iter it;
    ref_iter_init(&it, out.ndim, out.sizes);
    ref_iter_add(&it, out.data, out.strides, out.dtype);
    ref_iter_add(&it, cond.data, cond.strides, cond.dtype);
    ref_iter_add(&it, a.data, a.strides, a.dtype);
    ref_iter_add(&it, b.data, b.strides, b.dtype);
    int64_t n = ref_numel(out.ndim, out.sizes), item = ref_itemsize(out.dtype);
    for (int64_t i = 0; i < n; i++, ref_iter_next(&it))
        memcpy(it.ptr[0], *(const uint8_t *)it.ptr[1] ? it.ptr[2] : it.ptr[3], (size_t)item);
    return EMBER_OK;
}
