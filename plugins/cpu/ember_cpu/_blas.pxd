from libc.stdint cimport int64_t

# BLAS thread control shared by the BLAS-backed kernels (matmul here, convolution in _conv):
# OpenBLAS's own pool held to one thread around a parallel region or a small product.  And
# _gemm.h's packed products over ember's team (matmul here, the LSTM's weight gradient).
cdef enum:
    MAX_BLAS_LIBS = 4

cdef void blas_single(int *saved) noexcept nogil
cdef void blas_restore(const int *saved) noexcept nogil

# whether an M x N float product goes to packed_gemm; out[e] (+)= a[e] @ b[e] for e < B:
# strides in elements, sa/sb (entry, row, column), so (entry, row) with C's columns of unit
# stride; EMBER_OK or EMBER_ERR_MEMORY
cdef bint packed_suits(bint f64, int64_t M, int64_t N) noexcept nogil
cdef int packed_gemm(bint f64, int64_t B, int64_t M, int64_t N, int64_t K, const char *a,
                     const int64_t *sa, const char *b, const int64_t *sb, char *out,
                     const int64_t *so, bint add) noexcept nogil
