from libc.stdint cimport int32_t, int64_t

from ember_cpu._abi cimport ember_ctx, ember_view

cdef int norm_kernel(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                     double eps) noexcept nogil
# EMBER_OK when v is C-contiguous with `dtype` and sizes (s0, s1, s2)[:ndim]; else an error
cdef int check_view(ember_ctx *ctx, const char *op, const ember_view *v, int dtype, int ndim,
                    int64_t s0, int64_t s1, int64_t s2) noexcept nogil
