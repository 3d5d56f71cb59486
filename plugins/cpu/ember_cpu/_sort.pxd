from libc.stdint cimport int32_t

from ember_cpu._abi cimport ember_ctx, ember_view

cdef int sort_kernel(ember_ctx *ctx, const ember_view *values, const ember_view *indices,
                     const ember_view *a, int32_t descending) noexcept nogil
