# The fused normalisation kernels (the optional `norm` table entry): layer norm and batch
# norm, forward and backward, on C-contiguous float32/float64 views (abi.h, EMBER_LAYER_NORM
# and after, gives each op's view layout).  The row loops are C (_norm_rows.h).
#
# Determinism: a layer-norm row, a batch-norm channel and a block of rows each run on one
# thread in a fixed order; the layer-norm weight/bias gradients are column sums over
# blocks of rows whose size depends on the row count only, combined in block order, so
# the bits are the same for any thread count.
from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free

from ember_cpu._abi cimport (
    EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_MEMORY, EMBER_FLOAT32, EMBER_FLOAT64,
    EMBER_LAYER_NORM, EMBER_LAYER_NORM_BACKWARD, EMBER_BATCH_NORM_STATS,
    EMBER_BATCH_NORM_APPLY, EMBER_BATCH_NORM_BACKWARD, EMBER_BATCH_NORM_BACKWARD_EVAL,
    EMBER_NORM_COUNT,
)
from ember_cpu._strided cimport error_dtype, run_items, set_error

cdef extern from "_norm_rows.h":
    float ember_norm_sum_f32(const float *x, int64_t n) noexcept nogil
    double ember_norm_sum_f64(const double *x, int64_t n) noexcept nogil
    float ember_norm_sqdev_f32(const float *x, int64_t n, float m) noexcept nogil
    double ember_norm_sqdev_f64(const double *x, int64_t n, double m) noexcept nogil
    void ember_norm_gsums_f32(const float *g, const float *x, const float *w, int64_t n,
                              float m, float *sg, float *sgx) noexcept nogil
    void ember_norm_gsums_f64(const double *g, const double *x, const double *w, int64_t n,
                              double m, double *sg, double *sgx) noexcept nogil
    void ember_norm_affine_f32(float *y, const float *x, int64_t n, float m, float r,
                               const float *w, const float *b) noexcept nogil
    void ember_norm_affine_f64(double *y, const double *x, int64_t n, double m, double r,
                               const double *w, const double *b) noexcept nogil
    void ember_norm_scale_f32(float *y, const float *x, int64_t n, float a,
                              float c) noexcept nogil
    void ember_norm_scale_f64(double *y, const double *x, int64_t n, double a,
                              double c) noexcept nogil
    void ember_norm_grad_f32(float *gx, const float *g, const float *x, const float *w,
                             int64_t n, float m, float a, float c1, float c2) noexcept nogil
    void ember_norm_grad_f64(double *gx, const double *g, const double *x, const double *w,
                             int64_t n, double m, double a, double c1, double c2) noexcept nogil
    void ember_norm_colsum_f32(float *pgw, float *pgb, const float *g, const float *x,
                               int64_t n, float m, float r) noexcept nogil
    void ember_norm_colsum_f64(double *pgw, double *pgb, const double *g, const double *x,
                               int64_t n, double m, double r) noexcept nogil

    void ember_bn_colsums_f32(float *s, const float *x, int64_t B, int64_t ld,
                              int64_t w) noexcept nogil
    void ember_bn_colsums_f64(double *s, const double *x, int64_t B, int64_t ld,
                              int64_t w) noexcept nogil
    void ember_bn_colsqdev_f32(float *q, const float *x, int64_t B, int64_t ld, int64_t w,
                               const float *m) noexcept nogil
    void ember_bn_colsqdev_f64(double *q, const double *x, int64_t B, int64_t ld, int64_t w,
                               const double *m) noexcept nogil
    void ember_bn_colgsums_f32(float *sg, float *sgx, const float *g, const float *x,
                               int64_t B, int64_t ld, int64_t w, const float *m) noexcept nogil
    void ember_bn_colgsums_f64(double *sg, double *sgx, const double *g, const double *x,
                               int64_t B, int64_t ld, int64_t w,
                               const double *m) noexcept nogil
    void ember_bn_colscale_f32(float *y, const float *x, int64_t w, const float *a,
                               const float *sh) noexcept nogil
    void ember_bn_colscale_f64(double *y, const double *x, int64_t w, const double *a,
                               const double *sh) noexcept nogil
    void ember_bn_colgrad_f32(float *gx, const float *g, const float *x, int64_t B,
                              int64_t ld, int64_t w, const float *m, const float *a,
                              const float *c1, const float *c2) noexcept nogil
    void ember_bn_colgrad_f64(double *gx, const double *g, const double *x, int64_t B,
                              int64_t ld, int64_t w, const double *m, const double *a,
                              const double *c1, const double *c2) noexcept nogil

ctypedef fused real:
    float
    double

cdef enum:
    NSLOTS = 8
    # layer-norm backward: blocks of at most this many per row count (fixed, so the
    # column sums have the same shape of additions at any thread count)
    LN_BLOCKS = 64
    # batch norm over [B, C, 1]: channels per work item of the column loops
    COLS = 64

cdef extern from *:
    """
    static const char *const ember_norm_names[] = {"layer_norm", "layer_norm_backward",
        "batch_norm", "batch_norm", "batch_norm_backward", "batch_norm_backward"};
    """
    const char *NAMES "ember_norm_names"[]


ctypedef struct NormJob:
    int op
    bint f64
    char *p[NSLOTS]      # the views' data, NULL where absent
    int64_t M, N         # layer norm: rows x row length
    int64_t B, C, L      # batch norm
    double eps
    int64_t rb           # layer-norm backward: rows per block
    char *partial        # per block: N weight then N bias partial sums


# --- the C row loops by compute type ------------------------------------------------------

cdef inline real row_sum(const real *x, int64_t n) noexcept nogil:
    if real is float:
        return ember_norm_sum_f32(x, n)
    else:
        return ember_norm_sum_f64(x, n)


cdef inline real row_sqdev(const real *x, int64_t n, real m) noexcept nogil:
    if real is float:
        return ember_norm_sqdev_f32(x, n, m)
    else:
        return ember_norm_sqdev_f64(x, n, m)


cdef inline void row_gsums(const real *g, const real *x, const real *w, int64_t n, real m,
                           real *sg, real *sgx) noexcept nogil:
    if real is float:
        ember_norm_gsums_f32(g, x, w, n, m, sg, sgx)
    else:
        ember_norm_gsums_f64(g, x, w, n, m, sg, sgx)


cdef inline void row_grad(real *gx, const real *g, const real *x, const real *w, int64_t n,
                          real m, real a, real c1, real c2) noexcept nogil:
    if real is float:
        ember_norm_grad_f32(gx, g, x, w, n, m, a, c1, c2)
    else:
        ember_norm_grad_f64(gx, g, x, w, n, m, a, c1, c2)


# --- work items ---------------------------------------------------------------------------

cdef void layer_forward(const NormJob *j, real *tag, int64_t i) noexcept nogil:
    cdef int64_t N = j.N
    cdef const real *x = <const real *>j.p[3] + i * N
    cdef real m = row_sum(x, N) / N
    cdef real r = <real>1 / <real>sqrt(<double>(row_sqdev(x, N, m) / N) + j.eps)
    (<real *>j.p[1])[i] = m
    (<real *>j.p[2])[i] = r
    if real is float:
        ember_norm_affine_f32(<float *>j.p[0] + i * N, x, N, m, r, <const float *>j.p[4],
                              <const float *>j.p[5])
    else:
        ember_norm_affine_f64(<double *>j.p[0] + i * N, x, N, m, r, <const double *>j.p[4],
                              <const double *>j.p[5])


cdef void layer_backward(const NormJob *j, real *tag, int64_t blk) noexcept nogil:
    """Rows [blk * rb, (blk + 1) * rb): gx, and this block's weight/bias partial sums."""
    cdef int64_t N = j.N, i, end = min(j.M, (blk + 1) * j.rb)
    cdef real *pgw = NULL
    cdef real *pgb = NULL
    cdef const real *g
    cdef const real *x
    cdef const real *w = <const real *>j.p[7]
    cdef real m, r, sg, sgx
    if j.partial != NULL:
        pgw = <real *>j.partial + blk * 2 * N if j.p[1] != NULL else NULL
        pgb = <real *>j.partial + blk * 2 * N + N if j.p[2] != NULL else NULL
    for i in range(blk * j.rb, end):
        g = <const real *>j.p[3] + i * N
        x = <const real *>j.p[4] + i * N
        m = (<const real *>j.p[5])[i]
        r = (<const real *>j.p[6])[i]
        if j.p[0] != NULL:
            row_gsums(g, x, w, N, m, &sg, &sgx)
            row_grad(<real *>j.p[0] + i * N, g, x, w, N, m, r, -r * sg / N,
                     -r * r * r * sgx / N)
        if real is float:
            ember_norm_colsum_f32(pgw, pgb, g, x, N, m, r)
        else:
            ember_norm_colsum_f64(pgw, pgb, g, x, N, m, r)


cdef void batch_stats(const NormJob *j, real *tag, int64_t c) noexcept nogil:
    cdef int64_t b, L = j.L, stride = j.C * L
    cdef const real *x = <const real *>j.p[2] + c * L
    cdef real s = 0, q = 0, m
    cdef double n = <double>(j.B * L)
    for b in range(j.B):
        s += row_sum(x + b * stride, L)
    m = <real>(s / n)
    for b in range(j.B):
        q += row_sqdev(x + b * stride, L, m)
    (<real *>j.p[0])[c] = m
    (<real *>j.p[1])[c] = <real>(1 / sqrt(q / n + j.eps))


cdef void batch_apply(const NormJob *j, real *tag, int64_t row) noexcept nogil:
    cdef int64_t c = row % j.C
    cdef real a = (<const real *>j.p[3])[c]
    cdef real shift
    if j.p[4] != NULL:
        a = a * (<const real *>j.p[4])[c]
    shift = -(<const real *>j.p[2])[c] * a
    if j.p[5] != NULL:
        shift = shift + (<const real *>j.p[5])[c]
    if real is float:
        ember_norm_scale_f32(<float *>j.p[0] + row * j.L, <const float *>j.p[1] + row * j.L,
                             j.L, a, shift)
    else:
        ember_norm_scale_f64(<double *>j.p[0] + row * j.L, <const double *>j.p[1] + row * j.L,
                             j.L, a, shift)


cdef void batch_backward(const NormJob *j, real *tag, int64_t c) noexcept nogil:
    cdef int64_t b, L = j.L, off, stride = j.C * L
    cdef real m = (<const real *>j.p[5])[c], r = (<const real *>j.p[6])[c]
    cdef real wc = (<const real *>j.p[7])[c] if j.p[7] != NULL else 1
    cdef real sg = 0, sgx = 0, rs, rsx, c1 = 0, c2 = 0
    cdef real n = <real>(j.B * L)
    for b in range(j.B):
        off = b * stride + c * L
        row_gsums(<const real *>j.p[3] + off, <const real *>j.p[4] + off, <const real *>NULL,
                  L, m, &rs, &rsx)
        sg += rs
        sgx += rsx
    if j.p[1] != NULL:
        (<real *>j.p[1])[c] = sgx * r
    if j.p[2] != NULL:
        (<real *>j.p[2])[c] = sg
    if j.p[0] == NULL:
        return
    if j.op == EMBER_BATCH_NORM_BACKWARD:
        c1 = -wc * r * sg / n
        c2 = -wc * r * r * r * sgx / n
    for b in range(j.B):
        off = b * stride + c * L
        row_grad(<real *>j.p[0] + off, <const real *>j.p[3] + off, <const real *>j.p[4] + off,
                 <const real *>NULL, L, m, wc * r, c1, c2)


# --- batch norm over [B, C, 1] (BatchNorm1d on (N, C)): channels are columns ---------------
# One call per element (the [B, C, L] loops above with L = 1) costs more than the
# arithmetic: a block of COLS channels runs over the rows instead, the inner loop across
# channels.  Each channel still adds its rows in order, so the bits match any thread count.

cdef void cols_stats(const NormJob *j, real *tag, int64_t blk) noexcept nogil:
    cdef int64_t c0 = blk * COLS, w = min(<int64_t>COLS, j.C - c0), c
    cdef real s[COLS]
    cdef real q[COLS]
    cdef double n = <double>j.B
    cdef const real *x = <const real *>j.p[2] + c0
    cdef real *m = <real *>j.p[0] + c0
    if real is float:
        ember_bn_colsums_f32(s, x, j.B, j.C, w)
    else:
        ember_bn_colsums_f64(s, x, j.B, j.C, w)
    for c in range(w):
        m[c] = <real>(s[c] / n)
    if real is float:
        ember_bn_colsqdev_f32(q, x, j.B, j.C, w, m)
    else:
        ember_bn_colsqdev_f64(q, x, j.B, j.C, w, m)
    for c in range(w):
        (<real *>j.p[1])[c0 + c] = <real>(1 / sqrt(q[c] / n + j.eps))


cdef void cols_apply(const NormJob *j, real *tag, int64_t b) noexcept nogil:
    cdef int64_t c0 = 0, c, w
    cdef real a[COLS]
    cdef real sh[COLS]
    while c0 < j.C:
        w = min(<int64_t>COLS, j.C - c0)
        for c in range(w):                  # batch_apply's a and shift, per channel
            a[c] = (<const real *>j.p[3])[c0 + c]
            if j.p[4] != NULL:
                a[c] = a[c] * (<const real *>j.p[4])[c0 + c]
            sh[c] = -(<const real *>j.p[2])[c0 + c] * a[c]
            if j.p[5] != NULL:
                sh[c] = sh[c] + (<const real *>j.p[5])[c0 + c]
        if real is float:
            ember_bn_colscale_f32(<float *>j.p[0] + b * j.C + c0,
                                  <const float *>j.p[1] + b * j.C + c0, w, a, sh)
        else:
            ember_bn_colscale_f64(<double *>j.p[0] + b * j.C + c0,
                                  <const double *>j.p[1] + b * j.C + c0, w, a, sh)
        c0 += w


cdef void cols_backward(const NormJob *j, real *tag, int64_t blk) noexcept nogil:
    cdef int64_t c0 = blk * COLS, w = min(<int64_t>COLS, j.C - c0), c
    cdef real sg[COLS]
    cdef real sgx[COLS]
    cdef real a[COLS]
    cdef real c1[COLS]
    cdef real c2[COLS]
    cdef real r, wc, n = <real>j.B
    cdef const real *g = <const real *>j.p[3] + c0
    cdef const real *x = <const real *>j.p[4] + c0
    cdef const real *m = <const real *>j.p[5] + c0
    if real is float:
        ember_bn_colgsums_f32(sg, sgx, g, x, j.B, j.C, w, m)
    else:
        ember_bn_colgsums_f64(sg, sgx, g, x, j.B, j.C, w, m)
    for c in range(w):                      # batch_backward's per-channel terms
        r = (<const real *>j.p[6])[c0 + c]
        wc = (<const real *>j.p[7])[c0 + c] if j.p[7] != NULL else 1
        if j.p[1] != NULL:
            (<real *>j.p[1])[c0 + c] = sgx[c] * r
        if j.p[2] != NULL:
            (<real *>j.p[2])[c0 + c] = sg[c]
        a[c] = wc * r
        c1[c] = c2[c] = 0
        if j.op == EMBER_BATCH_NORM_BACKWARD:
            c1[c] = -wc * r * sg[c] / n
            c2[c] = -wc * r * r * r * sgx[c] / n
    if j.p[0] == NULL:
        return
    if real is float:
        ember_bn_colgrad_f32(<float *>j.p[0] + c0, g, x, j.B, j.C, w, m, a, c1, c2)
    else:
        ember_bn_colgrad_f64(<double *>j.p[0] + c0, g, x, j.B, j.C, w, m, a, c1, c2)


cdef void run_typed(const NormJob *j, real *tag, int64_t i) noexcept nogil:
    if j.op >= EMBER_BATCH_NORM_STATS and j.L == 1:
        if j.op == EMBER_BATCH_NORM_STATS:
            cols_stats(j, tag, i)
        elif j.op == EMBER_BATCH_NORM_APPLY:
            cols_apply(j, tag, i)
        else:
            cols_backward(j, tag, i)
        return
    if j.op == EMBER_LAYER_NORM:
        layer_forward(j, tag, i)
    elif j.op == EMBER_LAYER_NORM_BACKWARD:
        layer_backward(j, tag, i)
    elif j.op == EMBER_BATCH_NORM_STATS:
        batch_stats(j, tag, i)
    elif j.op == EMBER_BATCH_NORM_APPLY:
        batch_apply(j, tag, i)
    else:
        batch_backward(j, tag, i)


cdef void norm_item(void *job, int64_t i) noexcept nogil:
    cdef const NormJob *j = <const NormJob *>job
    if j.f64:
        run_typed(j, <double *>NULL, i)
    else:
        run_typed(j, <float *>NULL, i)


# --- checks and the entry -----------------------------------------------------------------

cdef int check_view(ember_ctx *ctx, const char *op, const ember_view *v, int dtype, int ndim,
                    int64_t s0, int64_t s1, int64_t s2) noexcept nogil:
    cdef int64_t sizes[3]
    cdef int64_t expected = 1
    cdef int d
    sizes[0], sizes[1], sizes[2] = s0, s1, s2
    if v.dtype != dtype:
        return set_error(ctx, EMBER_ERR_VALUE, op, "operands must share one dtype")
    if v.ndim != ndim:
        return set_error(ctx, EMBER_ERR_VALUE, op, "an operand has the wrong number of dims")
    for d in range(ndim - 1, -1, -1):
        if v.sizes[d] != sizes[d]:
            return set_error(ctx, EMBER_ERR_VALUE, op, "an operand has the wrong sizes")
        if v.sizes[d] != 1 and v.strides[d] != expected:
            return set_error(ctx, EMBER_ERR_VALUE, op, "operands must be C-contiguous")
        expected *= v.sizes[d]
    return EMBER_OK


cdef int check_slots(ember_ctx *ctx, const char *op, const ember_view *const *v, int n,
                     const int *kinds, const NormJob *j, int dtype,
                     char **data) noexcept nogil:
    """kinds[k]: 0 full (2-d [M,N] or 3-d [B,C,L]), 1 per row/channel, 2 per column/channel,
    negative: the slot is required (the kind is -kind - 1)."""
    cdef int k, kind, status
    cdef bint layer = j.op <= EMBER_LAYER_NORM_BACKWARD
    for k in range(n):
        kind = kinds[k]
        if v[k] == NULL:
            if kind < 0:
                return set_error(ctx, EMBER_ERR_VALUE, op, "a required operand is NULL")
            data[k] = NULL
            continue
        kind = -kind - 1 if kind < 0 else kind
        if kind == 0:
            status = (check_view(ctx, op, v[k], dtype, 2, j.M, j.N, 0) if layer else
                      check_view(ctx, op, v[k], dtype, 3, j.B, j.C, j.L))
        else:
            status = check_view(ctx, op, v[k], dtype, 1,
                                (j.M if kind == 1 else j.N) if layer else j.C, 0, 0)
        if status != EMBER_OK:
            return status
        data[k] = v[k].data
    return EMBER_OK


# per op: its slot count, then each slot's kind (see check_slots)
cdef int SLOTS[EMBER_NORM_COUNT][NSLOTS + 1]
SLOTS[EMBER_LAYER_NORM][:7] = [6, -1, -2, -2, -1, 2, 2]
SLOTS[EMBER_LAYER_NORM_BACKWARD][:] = [8, 0, 2, 2, -1, -1, -2, -2, 2]
SLOTS[EMBER_BATCH_NORM_STATS][:4] = [3, -3, -3, -1]
SLOTS[EMBER_BATCH_NORM_APPLY][:7] = [6, -1, -1, -3, -3, 2, 2]
SLOTS[EMBER_BATCH_NORM_BACKWARD][:] = [8, 0, 2, 2, -1, -1, -3, -3, 2]
SLOTS[EMBER_BATCH_NORM_BACKWARD_EVAL][:] = [8, 0, 2, 2, -1, -1, -3, -3, 2]


cdef int norm_kernel(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                     double eps) noexcept nogil:
    cdef NormJob j
    cdef int status, dtype, slot
    cdef const ember_view *x
    if op < 0 or op >= EMBER_NORM_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "norm", "unknown op code")
    j.op, j.eps, j.partial = op, eps, NULL
    # the full-size input: x (forward) or g (backward) sets the shape and dtype
    slot = 3 if op == EMBER_LAYER_NORM or op == EMBER_LAYER_NORM_BACKWARD else (
        2 if op == EMBER_BATCH_NORM_STATS else (1 if op == EMBER_BATCH_NORM_APPLY else 3))
    x = v[slot]
    if x == NULL:
        return set_error(ctx, EMBER_ERR_VALUE, NAMES[op], "the input view is NULL")
    dtype = x.dtype
    if dtype != EMBER_FLOAT32 and dtype != EMBER_FLOAT64:
        return error_dtype(ctx, NAMES[op], dtype)
    j.f64 = dtype == EMBER_FLOAT64
    if op <= EMBER_LAYER_NORM_BACKWARD:
        if x.ndim != 2:
            return set_error(ctx, EMBER_ERR_VALUE, NAMES[op], "expected [M, N] views")
        j.M, j.N = x.sizes[0], x.sizes[1]
    else:
        if x.ndim != 3:
            return set_error(ctx, EMBER_ERR_VALUE, NAMES[op], "expected [B, C, L] views")
        j.B, j.C, j.L = x.sizes[0], x.sizes[1], x.sizes[2]
    status = check_slots(ctx, NAMES[op], v, SLOTS[op][0], &SLOTS[op][1], &j, dtype, j.p)
    if status != EMBER_OK:
        return status
    if op == EMBER_LAYER_NORM:
        run_items(norm_item, &j, j.M, j.M * j.N)
    elif op == EMBER_BATCH_NORM_STATS or op == EMBER_BATCH_NORM_BACKWARD \
            or op == EMBER_BATCH_NORM_BACKWARD_EVAL:
        # a channel per item, or COLS channels per item over [B, C, 1]
        run_items(norm_item, &j, (j.C + COLS - 1) // COLS if j.L == 1 else j.C,
                  j.B * j.C * j.L)
    elif op == EMBER_BATCH_NORM_APPLY:
        run_items(norm_item, &j, j.B if j.L == 1 else j.B * j.C, j.B * j.C * j.L)
    else:
        return layer_backward_run(ctx, &j)
    return EMBER_OK


cdef int layer_backward_run(ember_ctx *ctx, NormJob *j) noexcept nogil:
    cdef int64_t nblk, blk, col, N = j.N
    cdef int64_t size = sizeof(double) if j.f64 else sizeof(float)
    cdef int half
    if j.M == 0:
        nblk = 0
    else:
        j.rb = (j.M + LN_BLOCKS - 1) // LN_BLOCKS
        nblk = (j.M + j.rb - 1) // j.rb
    if (j.p[1] != NULL or j.p[2] != NULL) and nblk * N > 0:
        j.partial = <char *>calloc(nblk * 2 * N, size)
        if j.partial == NULL:
            return set_error(ctx, EMBER_ERR_MEMORY, "layer_norm_backward",
                             "out of memory for the partial sums")
    run_items(norm_item, j, nblk, j.M * N)
    # the partial sums, combined in block order (zeros when there are no rows)
    for half in range(2):
        if j.p[1 + half] == NULL:
            continue
        for col in range(N):
            if j.f64:
                (<double *>j.p[1 + half])[col] = 0
                for blk in range(nblk):
                    (<double *>j.p[1 + half])[col] += (<double *>j.partial)[
                        (blk * 2 + half) * N + col]
            else:
                (<float *>j.p[1 + half])[col] = 0
                for blk in range(nblk):
                    (<float *>j.p[1 + half])[col] += (<float *>j.partial)[
                        (blk * 2 + half) * N + col]
    free(j.partial)
    return EMBER_OK
