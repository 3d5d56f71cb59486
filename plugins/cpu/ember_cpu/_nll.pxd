from libc.stdint cimport int32_t, int64_t

from ember_cpu._abi cimport ember_ctx, ember_view

cdef int nll_kernel(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                    int64_t ignore_index) noexcept nogil
