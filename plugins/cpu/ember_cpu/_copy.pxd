from libc.stdint cimport int32_t, int64_t
from ember_cpu._abi cimport ember_ctx, ember_view

cdef void *mem_alloc(ember_ctx *ctx, int64_t nbytes) noexcept nogil
cdef void mem_free(int32_t device, void *ptr) noexcept nogil
cdef int copy_kernel(ember_ctx *ctx, const ember_view *out, const ember_view *a) noexcept nogil
cdef int fill_kernel(ember_ctx *ctx, const ember_view *out, const void *value) noexcept nogil
cdef int to_host_kernel(ember_ctx *ctx, void *host_dst, const void *device_src,
                        int64_t nbytes) noexcept nogil
cdef int from_host_kernel(ember_ctx *ctx, void *device_dst, const void *host_src,
                          int64_t nbytes) noexcept nogil
