# Scans along the last dim: cumsum, cumprod, cummax, cummin (the `scan` table entry).
# Each row (all dims but the last) is scanned sequentially in its own compute type
# (integers and bool in int64, wrapping; float16/bfloat16 in float32; float64 in double;
# float32 in float32 for cummax/cummin, in double for cumsum/cumprod as PyTorch's); threads share
# whole rows, so results do not depend on the thread count.
# cummax/cummin follow PyTorch: x replaces the running extreme when x is NaN, or when the
# extreme is not NaN and x >= (<=) it, so ties and later NaNs move the index forward.
from libc.stdint cimport int32_t, int64_t

from ember_cpu._abi cimport (
    EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_TYPE, EMBER_INT64, EMBER_BOOL,
    EMBER_FLOAT32, EMBER_FLOAT64,
    EMBER_SCAN_CUMSUM, EMBER_SCAN_CUMPROD, EMBER_SCAN_CUMMAX, EMBER_SCAN_CUMMIN,
    EMBER_SCAN_COUNT,
)
from ember_cpu._scalar cimport _add, _mul
from ember_cpu._strided cimport (
    ct_t, CT_F32, CT_F64, BUF_LEN, StridedIter, compute_type, dtype_itemsize, iter_run,
    rows_init, load, store, set_error, error_dtype,
)

cdef extern from *:
    """
    static const char *const ember_scan_names[] = {"cumsum", "cumprod", "cummax", "cummin"};
    /* one float row's cumsum in double, straight from a to o (any strides): the chain of
     * dependent adds runs at the adder's latency, where scan_row's staging through a
     * buffer took three times as long */
    #define EMBER_CUMSUM_ROW(T, NAME)                                                      \
    static void NAME(T *o, int64_t so, const T *a, int64_t sa, int64_t n) {                \
        double acc = 0;                                                                    \
        for (int64_t j = 0; j < n; j++) {                                                  \
            acc = acc + a[j * sa];                                                         \
            o[j * so] = (T)acc;                                                            \
        }                                                                                  \
    }
    EMBER_CUMSUM_ROW(float, ember_cumsum_row_f32)
    EMBER_CUMSUM_ROW(double, ember_cumsum_row_f64)
    """
    const char *ember_scan_names[]
    void ember_cumsum_row_f32(float *o, int64_t so, const float *a, int64_t sa,
                              int64_t n) noexcept nogil
    void ember_cumsum_row_f64(double *o, int64_t so, const double *a, int64_t sa,
                              int64_t n) noexcept nogil


ctypedef struct ScanPlan:
    int op
    int dtype
    int ct
    bint has_idx
    int64_t itemsize
    int64_t length      # of the scanned (last) dim
    int64_t so, sa, si  # strides along it: out, a, indices
    StridedIter rows    # operands (out, a[, indices]) over the other dims


cdef inline bint _isnan(ct_t x) noexcept nogil:
    if ct_t is int64_t:
        return False
    else:
        return x != x


cdef void scan_row(const ScanPlan *p, char *po, const char *pa, char *pi,
                   ct_t *tag) noexcept nogil:
    cdef ct_t buf[BUF_LEN]
    cdef int64_t ibuf[BUF_LEN]
    cdef ct_t acc = 1 if p.op == EMBER_SCAN_CUMPROD else 0
    cdef double dacc = acc
    cdef bint wide = p.dtype == EMBER_FLOAT32     # the half types accumulate in float32
    cdef int64_t idx = 0, j0 = 0, j, w
    cdef int op = p.op
    cdef ct_t x
    while j0 < p.length:
        w = min(<int64_t>BUF_LEN, p.length - j0)
        load(buf, pa + j0 * p.sa * p.itemsize, p.dtype, w, p.sa)
        if op == EMBER_SCAN_CUMSUM:     # (float32/float64 sums run in scan_rows' loops)
            for j in range(w):
                acc = _add(acc, buf[j])
                buf[j] = acc
        elif op == EMBER_SCAN_CUMPROD:
            if ct_t is float and wide:
                for j in range(w):
                    dacc = dacc * buf[j]
                    buf[j] = <float>dacc
            else:
                for j in range(w):
                    acc = _mul(acc, buf[j])
                    buf[j] = acc
        else:
            if j0 == 0:
                acc = buf[0]
            for j in range(w):
                x = buf[j]
                if op == EMBER_SCAN_CUMMAX:
                    if _isnan(x) or (not _isnan(acc) and x >= acc):
                        acc = x
                        idx = j0 + j
                else:
                    if _isnan(x) or (not _isnan(acc) and x <= acc):
                        acc = x
                        idx = j0 + j
                buf[j] = acc
                ibuf[j] = idx
            store(pi + j0 * p.si * 8, EMBER_INT64, ibuf, w, p.si)
        store(po + j0 * p.so * p.itemsize, p.dtype, buf, w, p.so)
        j0 += w


ctypedef fused real_t:
    float
    double

DEF LANES = 8       # rows a float cumsum scans in lockstep


cdef void cumsum_lanes(const ScanPlan *p, char *po, char *pa, int64_t so_row, int64_t sa_row,
                       real_t *tag) noexcept nogil:
    """LANES rows of a float32/float64 cumsum at once, in double as scan_row: one row's sum is
    a chain of dependent adds (an add's latency per element); LANES independent chains run
    at the adders' throughput, and rows side by side in memory (a scan along a leading dim)
    vectorise across them."""
    cdef double acc[LANES]
    cdef real_t *o = <real_t *>po
    cdef const real_t *a = <const real_t *>pa
    cdef int64_t j, r, n = p.length, so = p.so, sa = p.sa
    for r in range(LANES):
        acc[r] = 0
    if so_row == 1 and sa_row == 1:
        for j in range(n):
            for r in range(LANES):
                acc[r] = acc[r] + a[j * sa + r]
                o[j * so + r] = <real_t>acc[r]
    else:
        for j in range(n):
            for r in range(LANES):
                acc[r] = acc[r] + a[j * sa + r * sa_row]
                o[j * so + r * so_row] = <real_t>acc[r]


cdef int scan_rows(void *arg, char **ptrs, const int64_t *st, int64_t n,
                   int64_t index) noexcept nogil:
    cdef const ScanPlan *p = <const ScanPlan *>arg
    cdef int64_t e = 0
    cdef char *po
    cdef char *pa
    cdef char *pi = NULL
    if p.op == EMBER_SCAN_CUMSUM and (p.dtype == EMBER_FLOAT32 or p.dtype == EMBER_FLOAT64):
        while e + LANES <= n:
            po = ptrs[0] + e * st[0] * p.itemsize
            pa = ptrs[1] + e * st[1] * p.itemsize
            if p.dtype == EMBER_FLOAT32:
                cumsum_lanes(p, po, pa, st[0], st[1], <float *>NULL)
            else:
                cumsum_lanes(p, po, pa, st[0], st[1], <double *>NULL)
            e += LANES
        for e in range(e, n):       # the rows left over, one at a time
            po = ptrs[0] + e * st[0] * p.itemsize
            pa = ptrs[1] + e * st[1] * p.itemsize
            if p.dtype == EMBER_FLOAT32:
                ember_cumsum_row_f32(<float *>po, p.so, <const float *>pa, p.sa, p.length)
            else:
                ember_cumsum_row_f64(<double *>po, p.so, <const double *>pa, p.sa, p.length)
        return EMBER_OK
    for e in range(e, n):
        po = ptrs[0] + e * st[0] * p.itemsize
        pa = ptrs[1] + e * st[1] * p.itemsize
        if p.has_idx:
            pi = ptrs[2] + e * st[2] * 8
        if p.ct == CT_F32:
            scan_row(p, po, pa, pi, <float *>NULL)
        elif p.ct == CT_F64:
            scan_row(p, po, pa, pi, <double *>NULL)
        else:
            scan_row(p, po, pa, pi, <int64_t *>NULL)
    return EMBER_OK


cdef int scan_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                     const ember_view *indices, const ember_view *a) noexcept nogil:
    cdef ScanPlan p
    cdef const char *name
    cdef int status
    cdef const ember_view *views[3]
    cdef int64_t inner[3]
    if op < 0 or op >= EMBER_SCAN_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "scan", "unknown op code")
    name = ember_scan_names[op]
    if a.dtype != out.dtype:
        return set_error(ctx, EMBER_ERR_TYPE, name, "out must have the input's dtype")
    p.itemsize = dtype_itemsize(a.dtype)
    if p.itemsize == 0:
        return set_error(ctx, EMBER_ERR_TYPE, name, "unknown dtype code")
    if a.dtype == EMBER_BOOL and (op == EMBER_SCAN_CUMSUM or op == EMBER_SCAN_CUMPROD):
        return error_dtype(ctx, name, a.dtype)
    p.has_idx = op == EMBER_SCAN_CUMMAX or op == EMBER_SCAN_CUMMIN
    if p.has_idx:
        if indices == NULL:
            return set_error(ctx, EMBER_ERR_VALUE, name, "needs an indices view")
        if indices.dtype != EMBER_INT64:
            return set_error(ctx, EMBER_ERR_TYPE, name, "indices must be int64")
    views[0], views[1], views[2] = out, a, indices
    status = rows_init(&p.rows, ctx, name, 3 if p.has_idx else 2, views, inner)
    if status != EMBER_OK:
        return status
    p.op = op
    p.dtype = a.dtype
    p.ct = compute_type(a.dtype)
    p.length = a.sizes[a.ndim - 1]
    p.so, p.sa, p.si = inner[0], inner[1], inner[2] if p.has_idx else 0
    if p.rows.numel == 0 or p.length == 0:
        return EMBER_OK
    return iter_run(&p.rows, scan_rows, &p, p.rows.numel * p.length)
