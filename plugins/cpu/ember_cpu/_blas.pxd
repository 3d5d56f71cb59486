# BLAS thread control shared by the BLAS-backed kernels (matmul here, convolution in _conv):
# OpenBLAS's own pool held to one thread around a parallel region or a small product.
cdef enum:
    MAX_BLAS_LIBS = 4

cdef void blas_single(int *saved) noexcept nogil
cdef void blas_restore(const int *saved) noexcept nogil
