from libc.stdint cimport int32_t

from ember_cpu._abi cimport ember_ctx, ember_pool_params, ember_view

cdef int pool_kernel(ember_ctx *ctx, int32_t op, const ember_pool_params *p,
                     const ember_view *out, const ember_view *indices,
                     const ember_view *a) noexcept nogil
