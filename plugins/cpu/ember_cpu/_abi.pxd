# The kernel ABI as Cython sees it (ember_abi.pxd ships beside ember/abi.h), plus the
# plugin's own matmul entry type.
from ember_abi cimport *

# the matmul entry's signature, shared by _kernels (caller) and _blas (implementation)
ctypedef int (*matmul_fn)(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                          const ember_view *b) noexcept nogil
