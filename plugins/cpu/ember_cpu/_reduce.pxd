from libc.stdint cimport int32_t
from ember_cpu._abi cimport ember_ctx, ember_view

cdef int reduce_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                       const ember_view *a, int32_t nreduce) noexcept nogil
