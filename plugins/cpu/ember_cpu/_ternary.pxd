from ember_cpu._abi cimport ember_ctx, ember_view
from libc.stdint cimport int32_t

cdef int ternary_kernel(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                        const ember_view *b, const ember_view *c, double p) noexcept nogil
