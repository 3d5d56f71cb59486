from libc.stdint cimport int64_t

from ember_cpu._abi cimport ember_adam_params, ember_ctx, ember_sgd_params, ember_view

cdef int adam_kernel(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v,
                     int64_t n) noexcept nogil
cdef int sgd_kernel(ember_ctx *ctx, const ember_sgd_params *p, const ember_view *const *v,
                    int64_t n) noexcept nogil
