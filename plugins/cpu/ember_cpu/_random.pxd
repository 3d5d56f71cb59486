from libc.stdint cimport int32_t, uint64_t
from ember_cpu._abi cimport ember_ctx, ember_view

cdef int random_kernel(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                       uint64_t offset, double p0, double p1) noexcept nogil
