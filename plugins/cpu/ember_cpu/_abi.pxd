# The kernel ABI as Cython sees it (ember_abi.pxd ships beside ember/abi.h), plus the
# plugin's own matmul entry type.
from libc.stdint cimport int32_t

from ember_abi cimport *

# the matmul entry's signature, shared by _kernels (caller) and _blas (implementation)
ctypedef int (*matmul_fn)(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                          const ember_view *b) noexcept nogil

# the conv entry's signature, shared by _kernels (caller) and _conv (implementation, loaded
# with BLAS at the first convolution)
ctypedef int (*conv_fn)(ember_ctx *ctx, int32_t op, const ember_conv_params *p,
                        const ember_view *out, const ember_view *a, const ember_view *b,
                        const ember_view *c) noexcept nogil
