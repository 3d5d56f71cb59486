# The pointwise activations (abi.h's optional `activation` entry, ABI 6.4): out = f(a), or
# out = b * f'(a) when b is given, in one pass (_activation_rows.h).  Views are
# C-contiguous, of one shape and one dtype; float32 and float64 run, other dtypes answer
# NOT_IMPLEMENTED and the core runs its composite.  Large calls are cut into chunks the
# threads share (elements are independent: the same bits at any thread count).
from libc.stdint cimport int32_t, int64_t

from ember_cpu._abi cimport (
    EMBER_ACTIVATION_COUNT, EMBER_ACTIVATION_HARDSHRINK, EMBER_ACTIVATION_HARDSWISH,
    EMBER_ACTIVATION_SOFTSHRINK, EMBER_ERR_NOT_IMPLEMENTED,
    EMBER_ERR_VALUE, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_OK, ember_ctx, ember_view,
)
from ember_cpu._strided cimport contiguous, run_ranges, set_error

cdef extern from "_activation_rows.h":
    int ember_activation_f32(int op, const double *p, float *o, const float *a, const float *g,
                             int64_t n) noexcept nogil
    int ember_activation_f64(int op, const double *p, double *o, const double *a,
                             const double *g, int64_t n) noexcept nogil

# the parallel cutoff counts elements of an add: an exp-based activation costs ~8 of them
DEF COSTLY = 8


cdef inline bint cheap(int32_t op) noexcept nogil:
    return op <= EMBER_ACTIVATION_HARDSWISH or op == EMBER_ACTIVATION_HARDSHRINK \
        or op == EMBER_ACTIVATION_SOFTSHRINK


cdef bint same_layout(const ember_view *v, const ember_view *out) noexcept nogil:
    cdef int d
    if v.dtype != out.dtype or v.ndim != out.ndim or not contiguous(v):
        return False
    for d in range(v.ndim):
        if v.sizes[d] != out.sizes[d]:
            return False
    return True


cdef void run(int32_t op, const double *p, const ember_view *out, const ember_view *a,
              const ember_view *b, int64_t lo, int64_t hi) noexcept nogil:
    if out.dtype == EMBER_FLOAT32:
        ember_activation_f32(op, p, <float *>out.data + lo, <const float *>a.data + lo,
                             <const float *>b.data + lo if b != NULL else NULL, hi - lo)
    else:
        ember_activation_f64(op, p, <double *>out.data + lo, <const double *>a.data + lo,
                             <const double *>b.data + lo if b != NULL else NULL, hi - lo)


ctypedef struct ActJob:        # one call, for run_ranges
    int32_t op
    const double *p
    const ember_view *out
    const ember_view *a
    const ember_view *b


cdef void act_range(void *job, int64_t lo, int64_t hi) noexcept nogil:
    cdef const ActJob *j = <const ActJob *>job
    run(j.op, j.p, j.out, j.a, j.b, lo, hi)


cdef int activation_kernel(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                           const ember_view *a, const ember_view *b) noexcept nogil:
    if op < 0 or op >= EMBER_ACTIVATION_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "activation", "unknown op code")
    if not (same_layout(out, out) and same_layout(a, out) and (b == NULL or
                                                             same_layout(b, out))):
        return set_error(ctx, EMBER_ERR_VALUE, "activation",
                         "views must be contiguous and share one dtype and shape")
    if out.dtype != EMBER_FLOAT32 and out.dtype != EMBER_FLOAT64:
        return EMBER_ERR_NOT_IMPLEMENTED
    cdef ActJob j
    cdef int64_t size = 1
    cdef int d
    j.op, j.p, j.out, j.a, j.b = op, p, out, a, b
    for d in range(out.ndim):
        size *= out.sizes[d]
    run_ranges(act_range, &j, size, size * (1 if cheap(op) else COSTLY))
    return EMBER_OK
