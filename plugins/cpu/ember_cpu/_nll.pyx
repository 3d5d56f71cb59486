# The fused negative log-likelihood kernels (the optional `nll` table entry) over
# class-index targets: nll on log-probs, and cross-entropy on logits with log_softmax fused
# in (the forward never writes the [R, C] log-probs; the backward recomputes the row's
# logsumexp and writes softmax - onehot in one pass).  Rows are independent, each computed
# by one thread in a fixed order: results do not depend on the thread count.  Targets are
# all checked before anything is written, so a bad one raises with nothing half done.
from libc.stdint cimport int32_t, int64_t
from libc.stdio cimport snprintf
from libc.string cimport memset

from ember_cpu._abi cimport (
    EMBER_OK, EMBER_ERR_INDEX, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_INT64,
    EMBER_NLL, EMBER_CROSS_ENTROPY, EMBER_NLL_BACKWARD, EMBER_NLL_COUNT, EMBER_ERROR_LEN,
)
from ember_cpu._norm cimport check_view
from ember_cpu._strided cimport error_dtype, run_items, set_error

cdef extern from "_nll_rows.h":
    float ember_nll_lse_f32(const float *a, int64_t n) noexcept nogil
    double ember_nll_lse_f64(const double *a, int64_t n) noexcept nogil
    void ember_nll_softmax_f32(float *gx, const float *a, int64_t n, float lse,
                               float f) noexcept nogil
    void ember_nll_softmax_f64(double *gx, const double *a, int64_t n, double lse,
                               double f) noexcept nogil

cdef extern from *:
    """
    static const char *const ember_nll_names[] = {"nll_loss", "cross_entropy",
        "nll_loss_backward", "cross_entropy_backward"};
    """
    const char *NAMES "ember_nll_names"[]

ctypedef fused real:
    float
    double


ctypedef struct NllJob:
    int op
    bint f64
    char *p[5]           # out0 (loss or gx), out1 (wt or scale), a, target, w
    int64_t R, C, ignore


cdef void nll_typed(const NllJob *j, real *tag, int64_t r) noexcept nogil:
    cdef int64_t t = (<const int64_t *>j.p[3])[r], C = j.C
    cdef const real *a = <const real *>j.p[2] + r * C if j.p[2] != NULL else NULL
    cdef real *gx = <real *>j.p[0] + r * C
    cdef real wt, lse, s
    cdef bint forward = j.op == EMBER_NLL or j.op == EMBER_CROSS_ENTROPY
    if t == j.ignore:
        if forward:
            (<real *>j.p[0])[r] = 0
            (<real *>j.p[1])[r] = 0
        else:
            memset(gx, 0, C * sizeof(real))
        return
    wt = (<const real *>j.p[4])[t] if j.p[4] != NULL else 1
    if j.op == EMBER_NLL:
        (<real *>j.p[0])[r] = -wt * a[t]
        (<real *>j.p[1])[r] = wt
        return
    if j.op == EMBER_NLL_BACKWARD:
        memset(gx, 0, C * sizeof(real))
        gx[t] = -(<const real *>j.p[1])[r] * wt
        return
    if real is float:
        lse = ember_nll_lse_f32(a, C)
    else:
        lse = ember_nll_lse_f64(a, C)
    if j.op == EMBER_CROSS_ENTROPY:
        (<real *>j.p[0])[r] = -wt * (a[t] - lse)
        (<real *>j.p[1])[r] = wt
        return
    s = (<const real *>j.p[1])[r] * wt
    if real is float:
        ember_nll_softmax_f32(gx, a, C, lse, s)
    else:
        ember_nll_softmax_f64(gx, a, C, lse, s)
    gx[t] -= s


cdef void nll_item(void *job, int64_t r) noexcept nogil:
    cdef const NllJob *j = <const NllJob *>job
    if j.f64:
        nll_typed(j, <double *>NULL, r)
    else:
        nll_typed(j, <float *>NULL, r)


cdef int nll_kernel(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                    int64_t ignore_index) noexcept nogil:
    cdef NllJob j
    cdef int status, dtype, k
    cdef int64_t r, t
    cdef bint forward = op == EMBER_NLL or op == EMBER_CROSS_ENTROPY
    if op < 0 or op >= EMBER_NLL_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "nll", "unknown op code")
    if v[0] == NULL or v[1] == NULL or v[3] == NULL or (op != EMBER_NLL_BACKWARD
                                                        and v[2] == NULL):
        return set_error(ctx, EMBER_ERR_VALUE, NAMES[op], "a required operand is NULL")
    dtype = v[1].dtype
    if dtype != EMBER_FLOAT32 and dtype != EMBER_FLOAT64:
        return error_dtype(ctx, NAMES[op], dtype)
    j.op, j.f64, j.ignore = op, dtype == EMBER_FLOAT64, ignore_index
    if v[3].ndim != 1:
        return set_error(ctx, EMBER_ERR_VALUE, NAMES[op], "target must be 1-d")
    j.R = v[3].sizes[0]
    # the class count: from a, or from gx for nll backward
    k = 2 if op != EMBER_NLL_BACKWARD else 0
    if v[k].ndim != 2:
        return set_error(ctx, EMBER_ERR_VALUE, NAMES[op], "expected [R, C] views")
    j.C = v[k].sizes[1]
    status = check_view(ctx, NAMES[op], v[3], EMBER_INT64, 1, j.R, 0, 0)
    for k in range(5):
        if status != EMBER_OK:
            return status
        j.p[k] = NULL if v[k] == NULL else v[k].data
        if v[k] == NULL or k == 3:
            continue
        if k == 4:
            status = check_view(ctx, NAMES[op], v[k], dtype, 1, j.C, 0, 0)
        elif k == 1 or (k == 0 and forward):
            status = check_view(ctx, NAMES[op], v[k], dtype, 1, j.R, 0, 0)
        else:
            status = check_view(ctx, NAMES[op], v[k], dtype, 2, j.R, j.C, 0)
    if status != EMBER_OK:
        return status
    for r in range(j.R):
        t = (<const int64_t *>j.p[3])[r]
        if t != ignore_index and (t < 0 or t >= j.C):
            snprintf(ctx.error, EMBER_ERROR_LEN, "Target %lld is out of bounds.",
                     <long long>t)
            return EMBER_ERR_INDEX
    run_items(nll_item, &j, j.R, j.R * j.C * (1 if op == EMBER_NLL else 8))
    return EMBER_OK
