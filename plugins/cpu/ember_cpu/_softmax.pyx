# The fused softmax family (the optional `softmax` table entry): softmax, log_softmax and
# their backward ops along the last dim.  A row is read once for its maximum (or sum); the
# exp, sum and scale passes then find it in the L1 cache.  Each row is
# computed by one thread in a fixed order (blocks of EMBER_NACC independent accumulators
# combined in order), so results do not depend on the thread count; the accumulators are
# also what lets the loops vectorise without -ffast-math.  float32 and float64 rows that
# are contiguous are worked on in place in out; any other row (strided, float16, bfloat16)
# is staged through a buffer in its compute type (float32 for the 16-bit floats).
#
# The row loops are C (below) so that GCC can build them twice, for baseline x86-64 and for
# AVX2 + FMA, and pick one when the module loads: exp dominates and is 3-4x faster 8 wide
# with FMA.  The C is stamped out for float and double by one macro.
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc

from ember_cpu._abi cimport (
    EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_TYPE, EMBER_ERR_MEMORY,
    EMBER_FLOAT32, EMBER_FLOAT64, EMBER_SOFTMAX_BACKWARD, EMBER_SOFTMAX_COUNT,
)
from ember_cpu._strided cimport (
    CT_F32, StridedIter, compute_type, dtype_itemsize, is_floating, iter_run, load_ct,
    rows_init, store_ct, set_error, error_dtype,
)


DEF SOFTMAX_COST = 6       # an element's work in adds (measured 5.6-7.3x, float32)

cdef extern from *:
    """
    #include <math.h>
    #include <string.h>
    static const char *const ember_softmax_names[] = {"softmax", "log_softmax",
        "softmax_backward", "log_softmax_backward"};

    #include "_rowmath.h"
    #define EMBER_NACC EMBER_ROW_NACC

    /* one contiguous row of n >= 1 elements; y may alias a (staged rows work in place).
     * The ops write y in a separate pass after each row reduction, so aliasing is safe.
     * Every loop is a plain map, an EMBER_ROW_SUM or a row max, so each vectorises;
     * softmax writes exp(a - m) first and sums y after (a fused store + sum keeps its
     * accumulators in memory, one store-to-load chain per block). */
    #define EMBER_SOFTMAX_ROW(T, NAME, EXP, LOG, MAX) \
    EMBER_ROW_CLONES static void NAME(int op, T *y, const T *a, const T *b, int64_t n) { \
        T s, m; \
        int64_t i, k, nb = n - n % EMBER_NACC; \
        int j; \
        if (op == EMBER_SOFTMAX) { \
            m = MAX(a, n); \
            for (k = 0; k < n; k++) y[k] = EXP(a[k] - m); \
            EMBER_ROW_SUM(T, e, y[k], s); \
            s = 1 / s; \
            for (k = 0; k < n; k++) y[k] *= s; \
        } else if (op == EMBER_LOG_SOFTMAX) { \
            m = MAX(a, n); \
            EMBER_ROW_SUM(T, e, EXP(a[k] - m), s); \
            m += LOG(s); \
            for (k = 0; k < n; k++) y[k] = a[k] - m; \
        } else if (op == EMBER_SOFTMAX_BACKWARD) { /* a = grad, b = output */ \
            EMBER_ROW_SUM(T, g, a[k] * b[k], s); \
            for (k = 0; k < n; k++) y[k] = b[k] * (a[k] - s); \
        } else {                    /* log_softmax backward */ \
            EMBER_ROW_SUM(T, g, a[k], s); \
            for (k = 0; k < n; k++) y[k] = a[k] - EXP(b[k]) * s; \
        } \
    }
    EMBER_SOFTMAX_ROW(float, ember_softmax_row_f32, ember_fast_expf, logf, ember_row_max_f32)
    EMBER_SOFTMAX_ROW(double, ember_softmax_row_f64, exp, log, ember_row_max_f64)
    """
    const char *ember_softmax_names[]
    void ember_softmax_row_f32(int op, float *y, const float *a, const float *b,
                               int64_t n) noexcept nogil
    void ember_softmax_row_f64(int op, double *y, const double *a, const double *b,
                               int64_t n) noexcept nogil


ctypedef struct SoftmaxPlan:
    int op
    int dtype
    int ct
    bint has_b
    bint in_place    # contiguous float32/float64 rows: no staging
    int64_t itemsize
    int64_t length   # of the last dim
    int64_t so, sa, sb
    StridedIter rows # out, a[, b] over the other dims


cdef inline void run_row(const SoftmaxPlan *p, void *y, const void *a,
                         const void *b) noexcept nogil:
    if p.ct == CT_F32:
        ember_softmax_row_f32(p.op, <float *>y, <const float *>a, <const float *>b, p.length)
    else:
        ember_softmax_row_f64(p.op, <double *>y, <const double *>a, <const double *>b,
                              p.length)


cdef int softmax_rows(void *arg, char **ptrs, const int64_t *st, int64_t n,
                      int64_t index) noexcept nogil:
    cdef const SoftmaxPlan *p = <const SoftmaxPlan *>arg
    cdef int64_t e, L = p.length, size = p.itemsize
    cdef int64_t ct_size = sizeof(float) if p.ct == CT_F32 else sizeof(double)
    cdef char *po
    cdef char *pa
    cdef char *pb = NULL
    cdef char *buf = NULL
    if not p.in_place:
        # staging: a's row (computed in place) and b's, in the compute type
        buf = <char *>malloc(2 * L * ct_size)
        if buf == NULL:
            return EMBER_ERR_MEMORY
    for e in range(n):
        po = ptrs[0] + e * st[0] * size
        pa = ptrs[1] + e * st[1] * size
        if p.has_b:
            pb = ptrs[2] + e * st[2] * size
        if p.in_place:
            run_row(p, po, pa, pb)
            continue
        load_ct(p.ct, buf, pa, p.dtype, L, p.sa)
        if p.has_b:
            load_ct(p.ct, buf + L * ct_size, pb, p.dtype, L, p.sb)
        run_row(p, buf, buf, buf + L * ct_size)
        store_ct(p.ct, po, p.dtype, buf, L, p.so)
    free(buf)
    return EMBER_OK


cdef int softmax_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                        const ember_view *a, const ember_view *b) noexcept nogil:
    cdef SoftmaxPlan p
    cdef const char *name
    cdef int status
    cdef const ember_view *views[3]
    cdef int64_t inner[3]
    if op < 0 or op >= EMBER_SOFTMAX_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "softmax", "unknown op code")
    name = ember_softmax_names[op]
    p.has_b = op >= EMBER_SOFTMAX_BACKWARD
    if p.has_b and b == NULL:
        return set_error(ctx, EMBER_ERR_VALUE, name, "needs the output view (b)")
    if a.dtype != out.dtype or (p.has_b and b.dtype != out.dtype):
        return set_error(ctx, EMBER_ERR_TYPE, name, "operands must have out's dtype")
    p.itemsize = dtype_itemsize(a.dtype)
    if p.itemsize == 0:
        return set_error(ctx, EMBER_ERR_TYPE, name, "unknown dtype code")
    if not is_floating(a.dtype):
        return error_dtype(ctx, name, a.dtype)
    views[0], views[1], views[2] = out, a, b
    status = rows_init(&p.rows, ctx, name, 3 if p.has_b else 2, views, inner)
    if status != EMBER_OK:
        return status
    p.op = op
    p.dtype = a.dtype
    p.ct = compute_type(a.dtype)
    p.length = a.sizes[a.ndim - 1]
    p.so, p.sa, p.sb = inner[0], inner[1], inner[2] if p.has_b else 1
    p.in_place = ((a.dtype == EMBER_FLOAT32 or a.dtype == EMBER_FLOAT64)
                  and p.so == 1 and p.sa == 1 and p.sb == 1)
    if p.rows.numel == 0 or p.length == 0:
        return EMBER_OK
    # an element costs several adds (a max, an exp, a sum, a scale): the cutoff counts adds
    status = iter_run(&p.rows, softmax_rows, &p, p.rows.numel * p.length * SOFTMAX_COST)
    if status == EMBER_ERR_MEMORY:
        return set_error(ctx, status, name, "out of memory for a row buffer")
    return status
