# The fused optimizer steps (abi.h's optional `adam` entry, ABI 6, and `sgd`, ABI 6.3):
# one call updates every parameter of a group, instead of several ops per parameter.  For
# adam, v holds n groups of five views {param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq
# (NULL unless amsgrad)}; for sgd, groups of three {param, grad, momentum_buffer (NULL when
# momentum is 0)}.  Each group is C-contiguous, of one shape and one dtype.
# float32/float64 run _adam_rows.h's and _sgd_rows.h's loops (the per-tensor ops' bits);
# other dtypes answer NOT_IMPLEMENTED and the core runs its ops.  Every group is checked
# before any is written, so an error leaves the parameters as they were.  A parameter of
# parallel_cutoff() elements or more is cut into chunks threads share (elements are
# independent: the same bits at any thread count).
from libc.stdint cimport int64_t

from ember_cpu._abi cimport (
    EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_VALUE, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_OK,
    ember_adam_params, ember_ctx, ember_sgd_params, ember_view,
)
from ember_cpu._strided cimport contiguous, run_ranges, set_error

cdef extern from "_adam_rows.h":
    void ember_adam_run_f32(const ember_adam_params *p, float *param, const float *grad,
                            float *m, float *v, float *vmax, int64_t n) noexcept nogil
    void ember_adam_run_f64(const ember_adam_params *p, double *param, const double *grad,
                            double *m, double *v, double *vmax, int64_t n) noexcept nogil

cdef extern from "_sgd_rows.h":
    void ember_sgd_run_f32(const ember_sgd_params *p, float *param, const float *grad,
                           float *buf, int64_t n) noexcept nogil
    void ember_sgd_run_f64(const ember_sgd_params *p, double *param, const double *grad,
                           double *buf, int64_t n) noexcept nogil

# one group's elements [lo, hi): the step of one optimizer (p: its parameters' struct)
ctypedef void (*run_fn)(const void *p, const ember_view *const *g, int64_t lo,
                        int64_t hi) noexcept nogil


cdef int64_t numel(const ember_view *v) noexcept nogil:
    cdef int64_t n = 1
    cdef int d
    for d in range(v.ndim):
        n *= v.sizes[d]
    return n


cdef int check_views(ember_ctx *ctx, const ember_view *const *g, int width, int required,
                     const char *op) noexcept nogil:
    """A group's views: the first ``required`` present, every present one contiguous and
    of the first's dtype and shape; NOT_IMPLEMENTED for dtypes other than float32/64."""
    cdef int k, d
    for k in range(width):
        if g[k] == NULL:
            if k < required:
                return set_error(ctx, EMBER_ERR_VALUE, op, "a required view is NULL")
            continue
        if g[k].dtype != g[0].dtype or not contiguous(g[k]) or g[k].ndim != g[0].ndim:
            return set_error(ctx, EMBER_ERR_VALUE, op,
                             "views must be contiguous and share one dtype and shape")
        for d in range(g[0].ndim):
            if g[k].sizes[d] != g[0].sizes[d]:
                return set_error(ctx, EMBER_ERR_VALUE, op,
                                 "views must be contiguous and share one dtype and shape")
    if g[0].dtype != EMBER_FLOAT32 and g[0].dtype != EMBER_FLOAT64:
        return EMBER_ERR_NOT_IMPLEMENTED
    return EMBER_OK


ctypedef struct GroupJob:      # one group, for run_ranges
    run_fn run
    const void *p
    const ember_view *const *g


cdef void group_range(void *job, int64_t lo, int64_t hi) noexcept nogil:
    cdef const GroupJob *j = <const GroupJob *>job
    j.run(j.p, j.g, lo, hi)


cdef int run_groups(ember_ctx *ctx, run_fn run, const void *p, const ember_view *const *v,
                    int64_t n, int width, int required, const char *op) noexcept nogil:
    """Check every group, then run each (a large one in chunks the threads share)."""
    cdef int64_t t, size
    cdef int rc
    cdef GroupJob j
    for t in range(n):
        rc = check_views(ctx, v + width * t, width, required, op)
        if rc != EMBER_OK:
            return rc
    j.run, j.p = run, p
    for t in range(n):
        j.g, size = v + width * t, numel(v[width * t])
        run_ranges(group_range, &j, size, size)
    return EMBER_OK


cdef void run_adam(const void *params, const ember_view *const *g, int64_t lo,
                   int64_t hi) noexcept nogil:
    cdef const ember_adam_params *p = <const ember_adam_params *>params
    cdef char *vmax = g[4].data if g[4] != NULL else NULL
    if g[0].dtype == EMBER_FLOAT32:
        ember_adam_run_f32(p, <float *>g[0].data + lo, <const float *>g[1].data + lo,
                           <float *>g[2].data + lo, <float *>g[3].data + lo,
                           <float *>vmax + lo if vmax != NULL else NULL, hi - lo)
    else:
        ember_adam_run_f64(p, <double *>g[0].data + lo, <const double *>g[1].data + lo,
                           <double *>g[2].data + lo, <double *>g[3].data + lo,
                           <double *>vmax + lo if vmax != NULL else NULL, hi - lo)


cdef void run_sgd(const void *params, const ember_view *const *g, int64_t lo,
                  int64_t hi) noexcept nogil:
    cdef const ember_sgd_params *p = <const ember_sgd_params *>params
    cdef char *buf = g[2].data if p.momentum != 0 else NULL
    if g[0].dtype == EMBER_FLOAT32:
        ember_sgd_run_f32(p, <float *>g[0].data + lo, <const float *>g[1].data + lo,
                          <float *>buf + lo if buf != NULL else NULL, hi - lo)
    else:
        ember_sgd_run_f64(p, <double *>g[0].data + lo, <const double *>g[1].data + lo,
                          <double *>buf + lo if buf != NULL else NULL, hi - lo)


cdef int adam_kernel(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v,
                     int64_t n) noexcept nogil:
    return run_groups(ctx, run_adam, p, v, n, 5, 5 if p.amsgrad else 4, "adam")


cdef int sgd_kernel(ember_ctx *ctx, const ember_sgd_params *p, const ember_view *const *v,
                    int64_t n) noexcept nogil:
    return run_groups(ctx, run_sgd, p, v, n, 3, 3 if p.momentum != 0 else 2, "sgd")
