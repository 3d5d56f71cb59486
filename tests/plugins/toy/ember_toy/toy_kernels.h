/* The "toy" device: the whole ember kernel ABI (ember/abi.h) as plain serial C loops over
 * malloc'd host memory.  A reference for vendors, written for clarity, not speed:
 *   - one N-d iterator (toy_iter) walks any strided view, stride 0 (broadcast) included;
 *   - every element is loaded as double (floating dtypes) or int64 (integers, bool) and
 *     stored back with a cast, so one loop serves every dtype.
 * Kernels report failures through ctx->error and a return code; they never abort. */
#ifndef EMBER_TOY_KERNELS_H
#define EMBER_TOY_KERNELS_H

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/abi.h"
#include "ember/half.h"

/* ---- dtypes ------------------------------------------------------------------------- */

static int64_t toy_itemsize(int32_t dt) {
    switch (dt) {
    case EMBER_UINT8: case EMBER_INT8: case EMBER_BOOL: return 1;
    case EMBER_INT16: case EMBER_FLOAT16: case EMBER_BFLOAT16: return 2;
    case EMBER_INT32: case EMBER_FLOAT32: return 4;
    case EMBER_INT64: case EMBER_FLOAT64: return 8;
    default: return 0;                      /* unknown dtype code */
    }
}

static int toy_is_float(int32_t dt) {
    return dt == EMBER_FLOAT16 || dt == EMBER_BFLOAT16 || dt == EMBER_FLOAT32 ||
           dt == EMBER_FLOAT64;
}

static double load_d(const char *p, int32_t dt) {
    switch (dt) {
    case EMBER_UINT8: return *(const uint8_t *)p;
    case EMBER_INT8: return *(const int8_t *)p;
    case EMBER_INT16: return *(const int16_t *)p;
    case EMBER_INT32: return *(const int32_t *)p;
    case EMBER_INT64: return (double)*(const int64_t *)p;
    case EMBER_FLOAT16: return ember_half_to_float(*(const uint16_t *)p);
    case EMBER_BFLOAT16: return ember_bf16_to_float(*(const uint16_t *)p);
    case EMBER_FLOAT32: return *(const float *)p;
    case EMBER_FLOAT64: return *(const double *)p;
    default: return *(const uint8_t *)p != 0;   /* EMBER_BOOL */
    }
}

static int64_t load_i(const char *p, int32_t dt) {
    if (toy_is_float(dt)) {
        double v = load_d(p, dt);               /* truncate toward zero, as a C cast */
        return isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0;
    }
    return dt == EMBER_INT64 ? *(const int64_t *)p : (int64_t)load_d(p, dt);
}

static void store_i(char *p, int32_t dt, int64_t v);

static void store_d(char *p, int32_t dt, double v) {
    switch (dt) {
    case EMBER_FLOAT16: *(uint16_t *)p = ember_float_to_half((float)v); break;
    case EMBER_BFLOAT16: *(uint16_t *)p = ember_float_to_bf16((float)v); break;
    case EMBER_FLOAT32: *(float *)p = (float)v; break;
    case EMBER_FLOAT64: *(double *)p = v; break;
    case EMBER_BOOL: *(uint8_t *)p = v != 0; break;
    default: store_i(p, dt, isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0);  /* truncate */
    }
}

static void store_i(char *p, int32_t dt, int64_t v) {   /* integers wrap, as in C */
    switch (dt) {
    case EMBER_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case EMBER_INT8: *(int8_t *)p = (int8_t)v; break;
    case EMBER_INT16: *(int16_t *)p = (int16_t)v; break;
    case EMBER_INT32: *(int32_t *)p = (int32_t)v; break;
    case EMBER_INT64: *(int64_t *)p = v; break;
    case EMBER_BOOL: *(uint8_t *)p = v != 0; break;
    default: store_d(p, dt, (double)v); break;
    }
}

/* ---- errors and the N-d iterator ----------------------------------------------------- */

static int toy_fail(ember_ctx *ctx, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, EMBER_ERROR_LEN, fmt, ap);
    va_end(ap);
    return code;
}

/* Walks the index space `sizes[0..ndim)` in row-major order, keeping one byte pointer per
 * operand; each operand brings its own element strides (0 = broadcast). */
#define TOY_MAX_OPERANDS 4                   /* where: out, cond, a, b */

typedef struct {
    int ndim, nops;
    int64_t sizes[EMBER_MAX_DIM], idx[EMBER_MAX_DIM];
    int64_t bstrides[TOY_MAX_OPERANDS][EMBER_MAX_DIM];     /* byte strides */
    char *ptr[TOY_MAX_OPERANDS];
} toy_iter;

static int64_t toy_numel(int ndim, const int64_t *sizes) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= sizes[d];
    return n;
}

static void it_init(toy_iter *it, int ndim, const int64_t *sizes) {
    memset(it, 0, sizeof *it);
    it->ndim = ndim;
    memcpy(it->sizes, sizes, (size_t)ndim * sizeof(int64_t));
}

/* add an operand: base address, element strides for the iterator's dims, dtype */
static void it_add(toy_iter *it, char *data, const int64_t *strides, int32_t dt) {
    int k = it->nops++;
    it->ptr[k] = data;
    for (int d = 0; d < it->ndim; d++) it->bstrides[k][d] = strides[d] * toy_itemsize(dt);
}

static void it_next(toy_iter *it) {
    for (int d = it->ndim - 1; d >= 0; d--) {
        for (int k = 0; k < it->nops; k++) it->ptr[k] += it->bstrides[k][d];
        if (++it->idx[d] < it->sizes[d]) return;
        for (int k = 0; k < it->nops; k++) it->ptr[k] -= it->bstrides[k][d] * it->sizes[d];
        it->idx[d] = 0;
    }
}

#define TOY_CHECK_VIEW(ctx, v)                                                            \
    if ((v)->ndim < 0 || (v)->ndim > EMBER_MAX_DIM)                                       \
        return toy_fail(ctx, EMBER_ERR_VALUE, "toy: bad ndim %d", (int)(v)->ndim);       \
    if (toy_itemsize((v)->dtype) == 0)                                                    \
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "toy: unknown dtype code %d",    \
                        (int)(v)->dtype)
#define TOY_SAME_DTYPE(ctx, a, b)                                                         \
    if ((a)->dtype != (b)->dtype)                                                         \
        return toy_fail(ctx, EMBER_ERR_TYPE, "toy: dtype mismatch (%d vs %d)",           \
                        (int)(a)->dtype, (int)(b)->dtype)

/* ---- memory ---------------------------------------------------------------------------- */

static atomic_llong toy_alloc_count;        /* read by ember_toy.runtime.allocations() */

static void *toy_alloc(ember_ctx *ctx, int64_t nbytes) {
    if (nbytes < 0) {
        toy_fail(ctx, EMBER_ERR_VALUE, "toy: negative allocation size");
        return NULL;
    }
    atomic_fetch_add(&toy_alloc_count, 1);
    return malloc(nbytes ? (size_t)nbytes : 1);   /* alloc(0) is a valid pointer too */
}

static void toy_free(int32_t device, void *ptr) { (void)device; free(ptr); }

static int toy_to_host(ember_ctx *ctx, void *dst, const void *src, int64_t nbytes) {
    (void)ctx;
    memcpy(dst, src, (size_t)nbytes);
    return EMBER_OK;
}

static int toy_from_host(ember_ctx *ctx, void *dst, const void *src, int64_t nbytes) {
    (void)ctx;
    memcpy(dst, src, (size_t)nbytes);
    return EMBER_OK;
}

/* ---- copy and fill --------------------------------------------------------------------- */

static int toy_copy(ember_ctx *ctx, const ember_view *out, const ember_view *a) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_CHECK_VIEW(ctx, a);
    toy_iter it;
    it_init(&it, out->ndim, out->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    it_add(&it, a->data, a->strides, a->dtype);
    int64_t n = toy_numel(out->ndim, out->sizes), item = toy_itemsize(out->dtype);
    int exact = !toy_is_float(out->dtype) && !toy_is_float(a->dtype);  /* int/bool -> int/bool */
    for (int64_t i = 0; i < n; i++, it_next(&it)) {
        if (out->dtype == a->dtype) memmove(it.ptr[0], it.ptr[1], (size_t)item);
        else if (exact) store_i(it.ptr[0], out->dtype, load_i(it.ptr[1], a->dtype));
        else store_d(it.ptr[0], out->dtype, load_d(it.ptr[1], a->dtype));
    }
    return EMBER_OK;
}

static int toy_fill(ember_ctx *ctx, const ember_view *out, const void *value) {
    TOY_CHECK_VIEW(ctx, out);
    toy_iter it;
    it_init(&it, out->ndim, out->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    int64_t n = toy_numel(out->ndim, out->sizes), item = toy_itemsize(out->dtype);
    for (int64_t i = 0; i < n; i++, it_next(&it)) memcpy(it.ptr[0], value, (size_t)item);
    return EMBER_OK;
}

/* ---- elementwise ----------------------------------------------------------------------- */

static double unary_d(int32_t op, double x) {
    switch (op) {
    case EMBER_UNARY_NEG: return -x;
    case EMBER_UNARY_EXP: return exp(x);
    case EMBER_UNARY_RELU: return x > 0 || x != x ? x : 0.0;     /* NaN stays NaN */
    case EMBER_UNARY_ABS: return fabs(x);
    case EMBER_UNARY_LOG: return log(x);
    case EMBER_UNARY_SQRT: return sqrt(x);
    case EMBER_UNARY_SIN: return sin(x);
    case EMBER_UNARY_COS: return cos(x);
    case EMBER_UNARY_TANH: return tanh(x);
    case EMBER_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case EMBER_UNARY_RECIPROCAL: return 1.0 / x;
    case EMBER_UNARY_FLOOR: return floor(x);
    case EMBER_UNARY_CEIL: return ceil(x);
    case EMBER_UNARY_TRUNC: return trunc(x);
    case EMBER_UNARY_ROUND: return nearbyint(x);       /* half to even */
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
    default: return x * x;                  /* EMBER_UNARY_SQUARE */
    }
}

static int64_t unary_i(int32_t op, int64_t x) {   /* wrapping integer arithmetic */
    uint64_t u = (uint64_t)x;
    switch (op) {
    case EMBER_UNARY_NEG: return (int64_t)(0 - u);
    case EMBER_UNARY_RELU: return x > 0 ? x : 0;
    case EMBER_UNARY_ABS: return x < 0 ? (int64_t)(0 - u) : x;
    case EMBER_UNARY_SQUARE: return (int64_t)(u * u);
    default: return x;                      /* rounding: the identity on integers */
    }
}

static int toy_unary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_SAME_DTYPE(ctx, out, a);
    int fl = toy_is_float(out->dtype);
    /* floats: every code up to TAN but BITWISE_NOT (the special functions after it are
       left out: the core's NotImplementedError path); integers: sign ops, square, rounding */
    int ok = fl ? op >= 0 && op <= EMBER_UNARY_TAN && op != EMBER_UNARY_BITWISE_NOT
                : op == EMBER_UNARY_NEG || op == EMBER_UNARY_RELU || op == EMBER_UNARY_ABS ||
                  op == EMBER_UNARY_SQUARE || (op >= EMBER_UNARY_FLOOR && op <= EMBER_UNARY_ROUND);
    if (!ok)
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED,
                        "toy: unary op %d not implemented for dtype %d", (int)op, (int)out->dtype);
    toy_iter it;
    it_init(&it, out->ndim, out->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    it_add(&it, a->data, a->strides, a->dtype);
    int64_t n = toy_numel(out->ndim, out->sizes);
    for (int64_t i = 0; i < n; i++, it_next(&it)) {
        if (fl) store_d(it.ptr[0], out->dtype, unary_d(op, load_d(it.ptr[1], a->dtype)));
        else store_i(it.ptr[0], out->dtype, unary_i(op, load_i(it.ptr[1], a->dtype)));
    }
    return EMBER_OK;
}

/* predicates (EQ..LOGICAL_XOR) give 0/1; the store into the bool output keeps it */
#define TOY_PREDICATES(x, y)                                                            \
    case EMBER_BINARY_EQ: return (x) == (y);                                            \
    case EMBER_BINARY_NE: return (x) != (y);                                            \
    case EMBER_BINARY_LT: return (x) < (y);                                             \
    case EMBER_BINARY_LE: return (x) <= (y);                                            \
    case EMBER_BINARY_GT: return (x) > (y);                                             \
    case EMBER_BINARY_GE: return (x) >= (y);                                            \
    case EMBER_BINARY_LOGICAL_AND: return ((x) != 0) && ((y) != 0);                     \
    case EMBER_BINARY_LOGICAL_OR: return ((x) != 0) || ((y) != 0);                      \
    case EMBER_BINARY_LOGICAL_XOR: return ((x) != 0) != ((y) != 0);

static double binary_d(int32_t op, double x, double y) {
    switch (op) {
    TOY_PREDICATES(x, y)
    case EMBER_BINARY_ADD: return x + y;
    case EMBER_BINARY_SUB: return x - y;
    case EMBER_BINARY_MUL: return x * y;
    case EMBER_BINARY_DIV: return x / y;
    case EMBER_BINARY_MAXIMUM: return x != x || x > y ? x : y;   /* NaN propagates */
    case EMBER_BINARY_MINIMUM: return x != x || x < y ? x : y;
    case EMBER_BINARY_ATAN2: return atan2(x, y);
    case EMBER_BINARY_FMOD: return fmod(x, y);
    case EMBER_BINARY_FMAX: return fmax(x, y);
    case EMBER_BINARY_FMIN: return fmin(x, y);
    default: return pow(x, y);              /* EMBER_BINARY_POW */
    }
}

static int64_t binary_i(int32_t op, int64_t x, int64_t y) {  /* wrapping integer arithmetic */
    switch (op) {
    TOY_PREDICATES(x, y)
    case EMBER_BINARY_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case EMBER_BINARY_SUB: return (int64_t)((uint64_t)x - (uint64_t)y);
    case EMBER_BINARY_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case EMBER_BINARY_MAXIMUM: case EMBER_BINARY_FMAX: return x > y ? x : y;
    case EMBER_BINARY_BITWISE_AND: return x & y;
    case EMBER_BINARY_BITWISE_OR: return x | y;
    case EMBER_BINARY_BITWISE_XOR: return x ^ y;
    default: return x < y ? x : y;          /* EMBER_BINARY_MINIMUM, FMIN */
    }
}

static int toy_binary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                      const ember_view *b) {
    TOY_CHECK_VIEW(ctx, out);
    int predicate = op >= EMBER_BINARY_EQ && op <= EMBER_BINARY_LOGICAL_XOR;
    if (predicate && out->dtype != EMBER_BOOL)
        return toy_fail(ctx, EMBER_ERR_TYPE, "toy: binary op %d needs a bool output", (int)op);
    TOY_SAME_DTYPE(ctx, predicate ? b : out, a);    /* predicates: out is bool, a ~ b */
    TOY_SAME_DTYPE(ctx, predicate ? a : out, b);
    int fl = toy_is_float(a->dtype);
    /* a reference, not a catalogue: the codes below; the rest answer NOT_IMPLEMENTED */
    int common = (op >= EMBER_BINARY_ADD && op <= EMBER_BINARY_MINIMUM && op != EMBER_BINARY_DIV)
                 || predicate || op == EMBER_BINARY_FMAX || op == EMBER_BINARY_FMIN;
    int ok = fl ? common || op == EMBER_BINARY_DIV || op == EMBER_BINARY_POW ||
                  op == EMBER_BINARY_ATAN2 || op == EMBER_BINARY_FMOD
                : common || (op >= EMBER_BINARY_BITWISE_AND && op <= EMBER_BINARY_BITWISE_XOR);
    if (!ok)
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED,
                        "toy: binary op %d not implemented for dtype %d", (int)op, (int)out->dtype);
    toy_iter it;
    it_init(&it, out->ndim, out->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    it_add(&it, a->data, a->strides, a->dtype);
    it_add(&it, b->data, b->strides, b->dtype);
    int64_t n = toy_numel(out->ndim, out->sizes);
    for (int64_t i = 0; i < n; i++, it_next(&it)) {
        if (fl)
            store_d(it.ptr[0], out->dtype,
                    binary_d(op, load_d(it.ptr[1], a->dtype), load_d(it.ptr[2], b->dtype)));
        else
            store_i(it.ptr[0], out->dtype,
                    binary_i(op, load_i(it.ptr[1], a->dtype), load_i(it.ptr[2], b->dtype)));
    }
    return EMBER_OK;
}

/* ---- reductions over the trailing `nreduce` dims of a --------------------------------- */

static int toy_reduce(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                      int32_t nreduce) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_CHECK_VIEW(ctx, a);
    int arg = op == EMBER_REDUCE_ARGMAX || op == EMBER_REDUCE_ARGMIN;   /* int64 positions */
    if (arg && out->dtype != EMBER_INT64)
        return toy_fail(ctx, EMBER_ERR_TYPE, "toy: argmax/argmin write int64");
    if (!arg)
        TOY_SAME_DTYPE(ctx, out, a);
    int fl = toy_is_float(a->dtype), nkeep = a->ndim - nreduce;
    if (nreduce < 0 || nkeep != out->ndim)
        return toy_fail(ctx, EMBER_ERR_VALUE, "toy: reduce got %d dims, nreduce %d, out %d dims",
                        (int)a->ndim, (int)nreduce, (int)out->ndim);
    if (op < 0 || op >= EMBER_REDUCE_COUNT)
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "toy: reduce op %d not implemented", (int)op);
    int extreme = op == EMBER_REDUCE_MAX || op == EMBER_REDUCE_MIN;   /* the core never sends
                                                                         an empty range */
    if (op == EMBER_REDUCE_MEAN && !fl)
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "toy: mean needs a floating dtype");
    int64_t m = toy_numel(nreduce, a->sizes + nkeep), n = toy_numel(nkeep, a->sizes);
    toy_iter outer, inner;
    it_init(&outer, nkeep, a->sizes);
    it_add(&outer, out->data, out->strides, out->dtype);
    it_add(&outer, a->data, a->strides, a->dtype);
    for (int64_t i = 0; i < n; i++, it_next(&outer)) {
        it_init(&inner, nreduce, a->sizes + nkeep);
        it_add(&inner, outer.ptr[1], a->strides + nkeep, a->dtype);
        double sd = op == EMBER_REDUCE_PROD ? 1.0 : 0.0;
        uint64_t si = op == EMBER_REDUCE_PROD ? 1 : 0;       /* wrapping integer accumulator */
        if (arg) {                                       /* first extreme; NaN wins */
            int64_t best = 0;
            double bv = 0;
            for (int64_t j = 0; j < m; j++, it_next(&inner)) {
                double v = fl ? load_d(inner.ptr[0], a->dtype)
                              : (double)load_i(inner.ptr[0], a->dtype);
                if (j == 0 || (bv == bv && (v != v || (op == EMBER_REDUCE_ARGMAX ? v > bv
                                                                                 : v < bv)))) {
                    best = j;
                    bv = v;
                }
            }
            store_i(outer.ptr[0], out->dtype, best);
            continue;
        }
        for (int64_t j = 0; j < m; j++, it_next(&inner)) {
            if (fl) {
                double v = load_d(inner.ptr[0], a->dtype);
                if (extreme) sd = j == 0 ? v : binary_d(op == EMBER_REDUCE_MAX ?
                    EMBER_BINARY_MAXIMUM : EMBER_BINARY_MINIMUM, sd, v);
                else if (op == EMBER_REDUCE_PROD) sd *= v;
                else sd += v;
            } else {
                int64_t v = load_i(inner.ptr[0], a->dtype);
                if (extreme) si = (uint64_t)(j == 0 ? v : binary_i(op == EMBER_REDUCE_MAX ?
                    EMBER_BINARY_MAXIMUM : EMBER_BINARY_MINIMUM, (int64_t)si, v));
                else if (op == EMBER_REDUCE_PROD) si *= (uint64_t)v;
                else si += (uint64_t)v;
            }
        }
        if (op == EMBER_REDUCE_MEAN) sd /= (double)m;        /* m == 0: 0/0 = NaN */
        if (fl) store_d(outer.ptr[0], out->dtype, sd);
        else store_i(outer.ptr[0], out->dtype, (int64_t)si);
    }
    return EMBER_OK;
}

/* ---- batched matmul: out [B, M, N] = a [B, M, K] @ b [B, K, N] ------------------------ */

static int toy_matmul(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                      const ember_view *b) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_SAME_DTYPE(ctx, out, a);
    TOY_SAME_DTYPE(ctx, out, b);
    if (out->ndim != 3 || a->ndim != 3 || b->ndim != 3)
        return toy_fail(ctx, EMBER_ERR_VALUE, "toy: matmul expects 3-d views");
    if (!toy_is_float(out->dtype))
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED,
                        "toy: matmul not implemented for dtype %d", (int)out->dtype);
    int64_t B = out->sizes[0], M = out->sizes[1], N = out->sizes[2], K = a->sizes[2];
    int64_t is = toy_itemsize(out->dtype);
    const int64_t *so = out->strides, *sa = a->strides, *sb = b->strides;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; k++)
                    acc += load_d(a->data + (bi * sa[0] + i * sa[1] + k * sa[2]) * is, a->dtype) *
                           load_d(b->data + (bi * sb[0] + k * sb[1] + j * sb[2]) * is, b->dtype);
                store_d(out->data + (bi * so[0] + i * so[1] + j * so[2]) * is, out->dtype, acc);
            }
    return EMBER_OK;
}

/* ---- random: element i of out (row-major) depends only on (seed, offset + i) ---------- */

static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static int toy_random(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                      uint64_t offset, double p0, double p1) {
    TOY_CHECK_VIEW(ctx, out);
    if (!toy_is_float(out->dtype))
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "toy: random needs a floating dtype");
    if (op != EMBER_RANDOM_UNIFORM && op != EMBER_RANDOM_NORMAL)
        return toy_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "toy: random op %d not implemented", (int)op);
    /* uniform draws keep only the target's mantissa bits, so U[0, 1) never rounds up to 1 */
    int bits = out->dtype == EMBER_FLOAT64 ? 53 : out->dtype == EMBER_FLOAT32 ? 24
             : out->dtype == EMBER_FLOAT16 ? 11 : 8;
    toy_iter it;
    it_init(&it, out->ndim, out->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    int64_t n = toy_numel(out->ndim, out->sizes);
    for (int64_t i = 0; i < n; i++, it_next(&it)) {
        uint64_t r = splitmix64(seed ^ splitmix64(offset + (uint64_t)i));
        double v;
        if (op == EMBER_RANDOM_UNIFORM) {
            v = p0 + (p1 - p0) * ldexp((double)(r >> (64 - bits)), -bits);
        } else {                                /* Box-Muller on two 53-bit uniforms */
            double u1 = ldexp((double)((r >> 11) + 1), -53);          /* (0, 1] */
            double u2 = ldexp((double)(splitmix64(r) >> 11), -53);     /* [0, 1) */
            v = p0 + p1 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        }
        store_d(it.ptr[0], out->dtype, v);
    }
    return EMBER_OK;
}

/* ---- where: out = cond ? a : b (a, b share out's dtype: copy the chosen element) ------- */

static int toy_where(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                     const ember_view *a, const ember_view *b) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_SAME_DTYPE(ctx, out, a);
    TOY_SAME_DTYPE(ctx, out, b);
    if (cond->dtype != EMBER_BOOL)
        return toy_fail(ctx, EMBER_ERR_TYPE, "toy: where needs a bool condition");
    toy_iter it;
    it_init(&it, out->ndim, out->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    it_add(&it, cond->data, cond->strides, cond->dtype);
    it_add(&it, a->data, a->strides, a->dtype);
    it_add(&it, b->data, b->strides, b->dtype);
    int64_t n = toy_numel(out->ndim, out->sizes), item = toy_itemsize(out->dtype);
    for (int64_t i = 0; i < n; i++, it_next(&it))
        memcpy(it.ptr[0], *(const uint8_t *)it.ptr[1] ? it.ptr[2] : it.ptr[3], (size_t)item);
    return EMBER_OK;
}

/* ---- scans along the last dim: cumsum, cumprod, cummax/cummin (with indices) ---------- */

static int toy_scan(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *indices,
                    const ember_view *a) {
    TOY_CHECK_VIEW(ctx, out);
    TOY_SAME_DTYPE(ctx, out, a);
    int extreme = op == EMBER_SCAN_CUMMAX || op == EMBER_SCAN_CUMMIN;
    if (op < 0 || op >= EMBER_SCAN_COUNT || a->ndim < 1 || (extreme && !indices))
        return toy_fail(ctx, EMBER_ERR_VALUE, "toy: bad scan call (op %d)", (int)op);
    int fl = toy_is_float(a->dtype), last = a->ndim - 1;
    int64_t len = a->sizes[last], rows = toy_numel(last, a->sizes);
    toy_iter it;                                         /* over every dim but the last */
    it_init(&it, last, a->sizes);
    it_add(&it, out->data, out->strides, out->dtype);
    it_add(&it, a->data, a->strides, a->dtype);
    if (extreme) it_add(&it, indices->data, indices->strides, EMBER_INT64);
    int64_t so = out->strides[last] * toy_itemsize(out->dtype);
    int64_t sa = a->strides[last] * toy_itemsize(a->dtype);
    int64_t si = extreme ? indices->strides[last] * 8 : 0;
    for (int64_t r = 0; r < rows; r++, it_next(&it)) {
        double accd = op == EMBER_SCAN_CUMPROD ? 1.0 : 0.0;
        int64_t acci = op == EMBER_SCAN_CUMPROD ? 1 : 0, at = 0;
        for (int64_t j = 0; j < len; j++) {
            char *po = it.ptr[0] + j * so, *pa = it.ptr[1] + j * sa;
            if (fl) {
                double v = load_d(pa, a->dtype);
                if (op == EMBER_SCAN_CUMSUM) accd += v;
                else if (op == EMBER_SCAN_CUMPROD) accd *= v;
                else if (j == 0 || v != v ||             /* a NaN takes over, as in torch */
                         (accd == accd && (op == EMBER_SCAN_CUMMAX ? v >= accd : v <= accd))) {
                    accd = v;                            /* ties: the latest index, as torch */
                    at = j;
                }
                store_d(po, out->dtype, accd);
            } else {
                int64_t v = load_i(pa, a->dtype);
                if (op == EMBER_SCAN_CUMSUM) acci = (int64_t)((uint64_t)acci + (uint64_t)v);
                else if (op == EMBER_SCAN_CUMPROD) acci = (int64_t)((uint64_t)acci * (uint64_t)v);
                else if (j == 0 || (op == EMBER_SCAN_CUMMAX ? v >= acci : v <= acci)) {
                    acci = v;
                    at = j;
                }
                store_i(po, out->dtype, acci);
            }
            if (extreme) store_i(it.ptr[2] + j * si, EMBER_INT64, at);
        }
    }
    return EMBER_OK;
}

#include "toy_index.h"

/* ---- the table handed to ember --------------------------------------------------------- */

static ember_kernel_table toy_table = {
    EMBER_ABI_VERSION, EMBER_ABI_MINOR, sizeof(ember_kernel_table), toy_alloc, toy_free, toy_copy, toy_fill, toy_to_host, toy_from_host,
    toy_unary, toy_binary, toy_reduce, toy_matmul, toy_random, toy_where, toy_scan,
    toy_index, toy_search,
};

static int64_t toy_allocations(void) { return (int64_t)atomic_load(&toy_alloc_count); }

#endif
