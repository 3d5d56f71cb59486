/* Strided data: the helpers every kernel uses.
 *   - dtypes: item sizes, names, and load/store of one element as double or int64 (the
 *     compute types: floats as double, integers and bool as int64; float16/bfloat16 go
 *     through float32 with round-to-nearest-even on store, ember/half.h);
 *   - errors: ref_fail writes the message every failing kernel returns;
 *   - views: ref_map_view, the one place where a view's device address becomes an arena
 *     address (after checking the whole span the view reaches);
 *   - the N-d iterator that walks any strided view, stride 0 (broadcast) included.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* ---- errors ---------------------------------------------------------------------------- */

static int vfail(ember_ctx *ctx, int code, const char *prefix, const char *fmt, va_list ap) {
    if (ctx) {
        int n = snprintf(ctx->error, EMBER_ERROR_LEN, "%s", prefix);
        vsnprintf(ctx->error + n, EMBER_ERROR_LEN - (size_t)n, fmt, ap);
    }
    return code;
}

int ref_fail(ember_ctx *ctx, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(ctx, code, "reference: ", fmt, ap);
    va_end(ap);
    return code;
}

/* With EMBER_REFERENCE_DEFER_ERRORS=1 the device reports data errors as an asynchronous
 * one may (abi.h): the kernel stops and succeeds, and the first error waits for the next
 * synchronising call (to_host, ember.reference.synchronize), so that path of the core and
 * of the conformance suite runs without a GPU.  One slot per process, for this test mode:
 * kernels that several threads run at once may each find it taken or overwrite it. */
static int defer_errors = -1;
static int deferred_code;
static char deferred_msg[EMBER_ERROR_LEN];

int ref_data_error(ember_ctx *ctx, int code, const char *fmt, ...) {
    if (defer_errors < 0) {
        const char *env = getenv("EMBER_REFERENCE_DEFER_ERRORS");
        defer_errors = env && strcmp(env, "1") == 0;
    }
    va_list ap;
    va_start(ap, fmt);
    if (!defer_errors) {
        vfail(ctx, code, "", fmt, ap);
    } else if (!deferred_code) {
        vsnprintf(deferred_msg, EMBER_ERROR_LEN, fmt, ap);
        deferred_code = code;
    }
    va_end(ap);
    return defer_errors ? EMBER_OK : code;
}

int ref_take_deferred_error(ember_ctx *ctx) {
    int code = deferred_code;
    if (code) {
        snprintf(ctx->error, EMBER_ERROR_LEN, "%s", deferred_msg);
        deferred_code = 0;
    }
    return code;
}

/* ---- dtypes ---------------------------------------------------------------------------- */

int64_t ref_itemsize(int32_t dt) {
    switch (dt) {
    case EMBER_UINT8: case EMBER_INT8: case EMBER_BOOL: return 1;
    case EMBER_INT16: case EMBER_FLOAT16: case EMBER_BFLOAT16: case EMBER_UINT16: return 2;
    case EMBER_INT32: case EMBER_FLOAT32: case EMBER_UINT32: return 4;
    case EMBER_INT64: case EMBER_FLOAT64: case EMBER_UINT64: return 8;
    default: return 0;                        /* unknown dtype code */
    }
}

int ref_is_float(int32_t dt) {
    return dt == EMBER_FLOAT16 || dt == EMBER_BFLOAT16 || dt == EMBER_FLOAT32 ||
           dt == EMBER_FLOAT64;
}

const char *ref_dtype_name(int32_t dt) {
    switch (dt) {
    case EMBER_UINT8: return "uint8";
    case EMBER_INT8: return "int8";
    case EMBER_INT16: return "int16";
    case EMBER_INT32: return "int32";
    case EMBER_INT64: return "int64";
    case EMBER_FLOAT16: return "float16";
    case EMBER_FLOAT32: return "float32";
    case EMBER_FLOAT64: return "float64";
    case EMBER_BOOL: return "bool";
    case EMBER_BFLOAT16: return "bfloat16";
    case EMBER_UINT16: return "uint16";
    case EMBER_UINT32: return "uint32";
    case EMBER_UINT64: return "uint64";
    default: return "unknown dtype";
    }
}

double ref_load_d(const char *p, int32_t dt) {
    switch (dt) {
    case EMBER_UINT8: return *(const uint8_t *)p;
    case EMBER_INT8: return *(const int8_t *)p;
    case EMBER_INT16: return *(const int16_t *)p;
    case EMBER_INT32: return *(const int32_t *)p;
    case EMBER_INT64: return (double)*(const int64_t *)p;
    case EMBER_UINT16: return *(const uint16_t *)p;
    case EMBER_UINT32: return *(const uint32_t *)p;
    case EMBER_UINT64: return (double)*(const uint64_t *)p;
    case EMBER_FLOAT16: return ember_half_to_float(*(const uint16_t *)p);
    case EMBER_BFLOAT16: return ember_bf16_to_float(*(const uint16_t *)p);
    case EMBER_FLOAT32: return *(const float *)p;
    case EMBER_FLOAT64: return *(const double *)p;
    default: return *(const uint8_t *)p != 0;       /* EMBER_BOOL */
    }
}

/* a float to an integer: truncation toward zero, as a C cast (0 where that is undefined) */
static int64_t trunc_to_int(double v) {
    return isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0;
}

int64_t ref_load_i(const char *p, int32_t dt) {
    switch (dt) {
    case EMBER_UINT8: return *(const uint8_t *)p;
    case EMBER_INT8: return *(const int8_t *)p;
    case EMBER_INT16: return *(const int16_t *)p;
    case EMBER_INT32: return *(const int32_t *)p;
    case EMBER_INT64: return *(const int64_t *)p;
    case EMBER_UINT16: return *(const uint16_t *)p;
    case EMBER_UINT32: return *(const uint32_t *)p;
    case EMBER_UINT64: return (int64_t)*(const uint64_t *)p;    /* the bits (wrapping ops) */
    case EMBER_BOOL: return *(const uint8_t *)p != 0;
    default: return trunc_to_int(ref_load_d(p, dt));
    }
}

void ref_store_i(char *p, int32_t dt, int64_t v) {     /* integers wrap, as in C */
    switch (dt) {
    case EMBER_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case EMBER_INT8: *(int8_t *)p = (int8_t)v; break;
    case EMBER_INT16: *(int16_t *)p = (int16_t)v; break;
    case EMBER_INT32: *(int32_t *)p = (int32_t)v; break;
    case EMBER_INT64: *(int64_t *)p = v; break;
    case EMBER_UINT16: *(uint16_t *)p = (uint16_t)v; break;
    case EMBER_UINT32: *(uint32_t *)p = (uint32_t)v; break;
    case EMBER_UINT64: *(uint64_t *)p = (uint64_t)v; break;
    case EMBER_BOOL: *(uint8_t *)p = v != 0; break;
    default: ref_store_d(p, dt, (double)v); break;
    }
}

void ref_store_d(char *p, int32_t dt, double v) {
    switch (dt) {
    case EMBER_FLOAT16: *(uint16_t *)p = ember_float_to_half((float)v); break;
    case EMBER_BFLOAT16: *(uint16_t *)p = ember_float_to_bf16((float)v); break;
    case EMBER_FLOAT32: *(float *)p = (float)v; break;
    case EMBER_FLOAT64: *(double *)p = v; break;
    case EMBER_BOOL: *(uint8_t *)p = v != 0; break;          /* NaN is true */
    case EMBER_UINT64:                 /* from 2**63 up the value only fits unsigned */
        *(uint64_t *)p = isfinite(v) && v >= 9223372036854775808.0 && v < 18446744073709551616.0
            ? (uint64_t)v : (uint64_t)trunc_to_int(v);
        break;
    default: ref_store_i(p, dt, trunc_to_int(v)); break;
    }
}

/* ---- views ----------------------------------------------------------------------------- */

int64_t ref_numel(int ndim, const int64_t *sizes) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= sizes[d];
    return n;
}

/* where an empty view points: nothing is read or written there */
static char empty_view_data[16];

int ref_map_view(ember_ctx *ctx, ember_view *host, const ember_view *dev, const char *what) {
    if (!dev)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: a required view is NULL", what);
    if (dev->ndim < 0 || dev->ndim > EMBER_MAX_DIM)
        return ref_fail(ctx, EMBER_ERR_VALUE, "%s: bad ndim %d", what, (int)dev->ndim);
    int64_t item = ref_itemsize(dev->dtype);
    if (item == 0)
        return ref_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s: unknown dtype code %d", what,
                        (int)dev->dtype);
    *host = *dev;
    if (dev->flags & EMBER_VIEW_HOST_SCALAR)  /* one element in host memory: read it there */
        return EMBER_OK;
    if (ref_numel(dev->ndim, dev->sizes) == 0) {
        host->data = empty_view_data;
        return EMBER_OK;
    }
    /* the bytes [lo, hi) around `data` that the view reaches */
    int64_t lo = 0, hi = item;
    for (int d = 0; d < dev->ndim; d++) {
        int64_t reach = (dev->sizes[d] - 1) * dev->strides[d] * item;
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    return ref_arena_translate(ctx, dev->data, lo, hi, &host->data, what);
}

int ref_map_optional(ember_ctx *ctx, ember_view *storage, const ember_view **host,
                     const ember_view *dev, const char *what) {
    *host = NULL;
    if (!dev) return EMBER_OK;
    REF_TRY(ref_map_view(ctx, storage, dev, what));
    *host = storage;
    return EMBER_OK;
}

int ref_is_contiguous(const ember_view *v) {
    int64_t expected = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->sizes[d] != 1 && v->strides[d] != expected) return 0;
        expected *= v->sizes[d];
    }
    return 1;
}

int ref_check_same_dtype(ember_ctx *ctx, const char *op, const ember_view *a,
                         const ember_view *b) {
    if (a->dtype == b->dtype) return EMBER_OK;
    return ref_fail(ctx, EMBER_ERR_TYPE, "%s: operands must share one dtype (%s vs %s)", op,
                    ref_dtype_name(a->dtype), ref_dtype_name(b->dtype));
}

/* ---- the N-d iterator ------------------------------------------------------------------ */

void ref_iter_init(ref_iter *it, int ndim, const int64_t *sizes) {
    memset(it, 0, sizeof *it);
    it->ndim = ndim;
    memcpy(it->sizes, sizes, (size_t)ndim * sizeof(int64_t));
}

void ref_iter_add(ref_iter *it, char *data, const int64_t *strides, int32_t dt) {
    int k = it->nops++;
    it->ptr[k] = data;
    for (int d = 0; d < it->ndim; d++) it->bstrides[k][d] = strides[d] * ref_itemsize(dt);
}

void ref_iter_next(ref_iter *it) {
    for (int d = it->ndim - 1; d >= 0; d--) {
        for (int k = 0; k < it->nops; k++) it->ptr[k] += it->bstrides[k][d];
        if (++it->idx[d] < it->sizes[d]) return;
        for (int k = 0; k < it->nops; k++) it->ptr[k] -= it->bstrides[k][d] * it->sizes[d];
        it->idx[d] = 0;
    }
}
