/* The elementwise entries: unary, binary (comparisons give bool), where.  Which dtypes an
 * op takes, and what it computes, follow the CPU plugin (kernels/ew.cu holds the math). */
#include <stdint.h>

#include "ec.h"
#include "ember/abi_tables.h"

#define FLAG_ALIGNED 4
#define FLAG_FLAT 8
#define U_LOGICAL_NOT EMBER_UNARY_COUNT   /* kernels/ew.cu: bitwise_not of bool */

/* which dtypes each op takes and its name: ember/abi_tables.h (from ember's op table) */
static int unary_supported(int op, int dtype) {
    return (ember_unary_dtypes[op] & EMBER_DTYPE_BIT(dtype)) != 0;
}

static int binary_supported(int op, int dtype) {
    return (ember_binary_dtypes[op] & EMBER_DTYPE_BIT(dtype)) != 0;
}

static int is_predicate(int op) { return op >= EMBER_BINARY_EQ && op <= EMBER_BINARY_LOGICAL_XOR; }

/* elements per vector step of a dtype (kernels/ew.cu's VEC) */
static int vec_of(int itemsize) {
    int v = 16 / itemsize;
    return v > 8 ? 8 : v;
}

static int is_aligned(const void *p, int bytes) { return ((uintptr_t)p % (uintptr_t)bytes) == 0; }

/* whether every view of v[0..n) that is not NULL starts at a multiple of `bytes` */
static int all_aligned(int n, const ember_view *const *v, int bytes) {
    for (int k = 0; k < n; k++)
        if (v[k] && !is_aligned(v[k]->data, bytes)) return 0;
    return 1;
}

static int check_views(ember_ctx *ctx, const char *op, int n, const ember_view *const *v) {
    for (int k = 0; k < n; k++) {
        if (v[k] == NULL || ec_is_scalar(v[k])) continue;
        int rc = ec_check_view(ctx, op, v[k]);
        if (rc) return rc;
        if (v[k]->ndim > v[0]->ndim)
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: operand has more dims than out", op);
    }
    return EMBER_OK;
}

int ec_unary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a) {
    if (op < 0 || op >= EMBER_UNARY_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "unary: unknown op code %d", (int)op);
    const char *name = ember_unary_names[op];
    const ember_view *v[2] = {out, a};
    int rc = check_views(ctx, name, 2, v);
    if (rc) return rc;
    if (a->dtype != out->dtype)
        return ec_fail(ctx, EMBER_ERR_TYPE, "%s: operands must have out's dtype", name);
    if (!unary_supported(op, out->dtype)) return ec_fail_dtype(ctx, name, out->dtype);
    int kop = (out->dtype == EMBER_BOOL) ? U_LOGICAL_NOT : op;
    ec_layout L;
    int64_t n = ec_layout_make(&L, 2, v);
    if (n == 0) return EMBER_OK;
    CUfunction f;
    int size = ec_itemsize(out->dtype), vec = vec_of(size);
    if (ec_layout_flat(&L, 2, 0)) {
        static ec_kernel cache[16];
        if ((rc = ec_fn(ctx, cache, "ew", out->dtype, "unary_flat", &f))) return rc;
        int flags = is_aligned(out->data, size * vec) && is_aligned(a->data, size * vec)
                    ? FLAG_ALIGNED : 0;
        void *args[] = {(void *)&out->data, (void *)&a->data, &n, &kop, &flags};
        return ec_launch(ctx, f, ec_blocks(ctx, n, vec), 1, 1, EC_THREADS, 0, args);
    }
    static ec_kernel cache[16];
    if ((rc = ec_fn(ctx, cache, "ew", out->dtype, "unary_strided", &f))) return rc;
    void *args[] = {(void *)&out->data, (void *)&a->data, &n, &kop, &L};
    return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}

int ec_binary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
              const ember_view *b) {
    if (op < 0 || op >= EMBER_BINARY_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "binary: unknown op code %d", (int)op);
    const char *name = ember_binary_names[op];
    const ember_view *v[3] = {out, a, b};
    int rc = check_views(ctx, name, 3, v);
    if (rc) return rc;
    int pred = is_predicate(op);
    if (pred) {
        if (out->dtype != EMBER_BOOL)
            return ec_fail(ctx, EMBER_ERR_TYPE, "%s: out must have dtype bool", name);
        if (a->dtype != b->dtype)
            return ec_fail(ctx, EMBER_ERR_TYPE, "%s: operands a and b must have the same dtype",
                           name);
    } else {
        if (a->dtype != out->dtype || b->dtype != out->dtype)
            return ec_fail(ctx, EMBER_ERR_TYPE, "%s: operands must have out's dtype", name);
        if (!binary_supported(op, out->dtype)) return ec_fail_dtype(ctx, name, out->dtype);
    }
    int dtype = a->dtype;
    int scalars = (ec_is_scalar(a) ? 1 : 0) | (ec_is_scalar(b) ? 2 : 0);
    /* integer division by zero raises, as on the CPU: the kernel flags it, the entry waits */
    CUdeviceptr err = 0;
    if (!pred && !ec_is_floating(dtype) && (op == EMBER_BINARY_FMOD ||
        op == EMBER_BINARY_REMAINDER || op == EMBER_BINARY_FLOOR_DIVIDE)) {
        if ((rc = ec_enter(ctx))) return rc;
        if (!(err = ec_error_slot(ctx)))
            return ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: could not map the error slot", name);
    }
    ec_scalar sa = {0}, sb = {0};
    if (scalars & 1) sa = ec_read_scalar(a);
    if (scalars & 2) sb = ec_read_scalar(b);
    ec_layout L;
    int64_t n = ec_layout_make(&L, 3, v);
    if (n == 0) return EMBER_OK;
    CUfunction f;
    int size = ec_itemsize(dtype), vec = vec_of(size);
    int flags = scalars;
    if (ec_layout_flat(&L, 3, (unsigned)scalars << 1)) {
        static ec_kernel cache_b[16], cache_c[16];
        if ((rc = ec_fn(ctx, pred ? cache_c : cache_b, "ew", dtype,
                        pred ? "compare_flat" : "binary_flat", &f)))
            return rc;
        int ok = is_aligned(out->data, (pred ? 1 : size) * vec);
        if (!(scalars & 1)) ok = ok && is_aligned(a->data, size * vec);
        if (!(scalars & 2)) ok = ok && is_aligned(b->data, size * vec);
        if (ok) flags |= FLAG_ALIGNED;
        /* a host scalar's data pointer is not a device address: pass NULL for it */
        char *pa = (scalars & 1) ? NULL : a->data, *pb = (scalars & 2) ? NULL : b->data;
        void *args[] = {(void *)&out->data, &pa, &pb, &sa, &sb, &n, &op, &flags, &err};
        rc = ec_launch(ctx, f, ec_blocks(ctx, n, vec), 1, 1, EC_THREADS, 0, args);
        return (rc || !err) ? rc : ec_sync_errors(ctx, name);
    }
    static ec_kernel cache_b[16], cache_c[16];
    if ((rc = ec_fn(ctx, pred ? cache_c : cache_b, "ew", dtype,
                    pred ? "compare_strided" : "binary_strided", &f)))
        return rc;
    char *pa = (scalars & 1) ? NULL : a->data, *pb = (scalars & 2) ? NULL : b->data;
    void *cargs[] = {(void *)&out->data, &pa, &pb, &sa, &sb, &n, &op, &flags, &L};
    void *bargs[] = {(void *)&out->data, &pa, &pb, &sa, &sb, &n, &op, &flags, &err, &L};
    rc = ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, pred ? cargs : bargs);
    return (rc || !err) ? rc : ec_sync_errors(ctx, name);
}

int ec_where(ember_ctx *ctx, const ember_view *out, const ember_view *cond, const ember_view *a,
             const ember_view *b) {
    const ember_view *v[4] = {out, cond, a, b};
    int rc = check_views(ctx, "where", 4, v);
    if (rc) return rc;
    if (cond->dtype != EMBER_BOOL)
        return ec_fail(ctx, EMBER_ERR_TYPE, "where: condition must be a bool tensor");
    if (a->dtype != out->dtype || b->dtype != out->dtype)
        return ec_fail(ctx, EMBER_ERR_TYPE, "where: operands must have out's dtype");
    int scalars = (ec_is_scalar(a) ? 1 : 0) | (ec_is_scalar(b) ? 2 : 0);
    ec_scalar sa = {0}, sb = {0};
    if (scalars & 1) sa = ec_read_scalar(a);
    if (scalars & 2) sb = ec_read_scalar(b);
    ec_layout L;
    int64_t n = ec_layout_make(&L, 4, v);
    if (n == 0) return EMBER_OK;
    int flags = scalars | (ec_layout_flat(&L, 4, (unsigned)scalars << 2) ? FLAG_FLAT : 0);
    static ec_kernel cache[16];
    CUfunction f;
    if ((rc = ec_fn(ctx, cache, "ew", out->dtype, "where_kernel", &f))) return rc;
    char *pa = (scalars & 1) ? NULL : a->data, *pb = (scalars & 2) ? NULL : b->data;
    void *args[] = {(void *)&out->data, (void *)&cond->data, &pa, &pb, &sa, &sb, &n, &flags, &L};
    return ec_launch(ctx, f, ec_blocks(ctx, n, 1), 1, 1, EC_THREADS, 0, args);
}

/* lerp, addcmul, addcdiv (ABI 6.5; kernels/ternary.cu): operands are out's shape and
 * dtype, broadcast by stride 0; c NULL: lerp's weight is the number p. */
int ec_ternary(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
               const ember_view *b, const ember_view *c, double p) {
    if (op < 0 || op >= EMBER_TERNARY_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "ternary: unknown op code %d", (int)op);
    if (c == NULL && op != EMBER_TERNARY_LERP)
        return ec_fail(ctx, EMBER_ERR_VALUE, "ternary: addcmul and addcdiv need c");
    const ember_view *v[4] = {out, a, b, c};
    int rc = check_views(ctx, "ternary", 4, v);
    if (rc) return rc;
    for (int k = 1; k < 4; k++)
        if (v[k] && (ec_is_scalar(v[k]) || v[k]->dtype != out->dtype))
            return ec_fail(ctx, EMBER_ERR_TYPE, "ternary: operands must be tensors of out's "
                           "dtype");
    if (!ec_is_floating(out->dtype)) return ec_fail_dtype(ctx, "ternary", out->dtype);
    ec_layout L;
    int64_t n = ec_layout_make(&L, 4, v);
    if (n == 0) return EMBER_OK;
    int size = ec_itemsize(out->dtype), vec = 1, flags = 0;
    if (ec_layout_flat(&L, c ? 4 : 3, 0)) {
        vec = vec_of(size);
        flags = FLAG_FLAT | (all_aligned(4, v, size * vec) ? FLAG_ALIGNED : 0);
    }
    ec_scalar sp;
    sp.f = p;
    static ec_kernel cache[16];
    CUfunction f;
    if ((rc = ec_fn(ctx, cache, "ternary", out->dtype, "ternary_kernel", &f))) return rc;
    char *pc = c ? c->data : NULL;
    void *args[] = {(void *)&out->data, (void *)&a->data, (void *)&b->data, &pc, &sp, &n, &op,
                    &flags, &L};
    return ec_launch(ctx, f, ec_blocks(ctx, n, vec), 1, 1, EC_THREADS, 0, args);
}

static int same_shape(const ember_view *x, const ember_view *y) {
    if (x->ndim != y->ndim) return 0;
    for (int d = 0; d < x->ndim; d++)
        if (x->sizes[d] != y->sizes[d]) return 0;
    return 1;
}

/* a pointwise activation, or its gradient when b is given (ABI 6.4; kernels/activation.cu):
 * contiguous views of one shape and dtype; float32 and float64 run, the rest answer
 * NOT_IMPLEMENTED (the core runs its composite), as on the CPU. */
int ec_activation(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                  const ember_view *a, const ember_view *b) {
    if (op < 0 || op >= EMBER_ACTIVATION_COUNT)
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "activation: unknown op code %d",
                       (int)op);
    const ember_view *v[3] = {out, a, b};
    for (int k = 0; k < 3; k++) {
        if (v[k] == NULL) continue;
        int rc = ec_check_view(ctx, "activation", v[k]);
        if (rc) return rc;
        if (ec_is_scalar(v[k]) || v[k]->dtype != out->dtype || !same_shape(v[k], out) ||
            !ec_contiguous(v[k]))
            return ec_fail(ctx, EMBER_ERR_VALUE, "activation: views must be contiguous and "
                           "share one dtype and shape");
    }
    if (out->dtype != EMBER_FLOAT32 && out->dtype != EMBER_FLOAT64)
        return ec_fail_dtype(ctx, "activation", out->dtype);
    int64_t n = ec_numel(out);
    if (n == 0) return EMBER_OK;
    static ec_kernel cache[16];
    CUfunction f;
    int rc = ec_fn(ctx, cache, "activation", out->dtype, "activation_kernel", &f);
    if (rc) return rc;
    char *pb = b ? b->data : NULL;
    double p0 = p[0], p1 = p[1], p2 = p[2];
    int size = ec_itemsize(out->dtype), vec = vec_of(size);
    int aligned = all_aligned(3, v, size * vec);
    void *args[] = {(void *)&out->data, (void *)&a->data, &pb, &n, &op, &p0, &p1, &p2, &aligned};
    return ec_launch(ctx, f, ec_blocks(ctx, n, vec), 1, 1, EC_THREADS, 0, args);
}
