from libc.stdint cimport int32_t
from ember_cpu._abi cimport ember_ctx, ember_view

cdef int unary_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                      const ember_view *a) noexcept nogil
cdef int binary_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                       const ember_view *a, const ember_view *b) noexcept nogil
# out = cond ? a : b (cond bool, a and b of out's dtype), a byte copy of the chosen element
cdef int where_kernel(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                      const ember_view *a, const ember_view *b) noexcept nogil
