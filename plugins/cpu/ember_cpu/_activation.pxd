from ember_cpu._abi cimport ember_ctx, ember_view
from libc.stdint cimport int32_t

cdef int activation_kernel(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                           const ember_view *a, const ember_view *b) noexcept nogil
