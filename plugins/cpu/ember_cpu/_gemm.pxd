# The blocked, packed GEMM of _gemm.h (declarations only): one tile of C = A B, A and B of
# any strides, C rows of unit stride; a caller shares tiles among its threads.
from libc.stdint cimport int64_t

cdef extern from "_gemm.h":
    int EMBER_GEMM_MR
    int ember_gemm_cap
    int64_t ember_gemm_nr_f32() noexcept nogil
    int64_t ember_gemm_nr_f64() noexcept nogil
    int64_t ember_gemm_scratch_f32(int64_t m, int64_t n, int64_t K) noexcept nogil
    int64_t ember_gemm_scratch_f64(int64_t m, int64_t n, int64_t K) noexcept nogil
    void ember_gemm_tile_f32(int64_t K, const float *a, int64_t sam, int64_t sak,
                             const float *b, int64_t sbk, int64_t sbn, float *c, int64_t ldc,
                             int64_t m0, int64_t m1, int64_t n0, int64_t n1, int add,
                             float *buf) noexcept nogil
    void ember_gemm_tile_f64(int64_t K, const double *a, int64_t sam, int64_t sak,
                             const double *b, int64_t sbk, int64_t sbn, double *c,
                             int64_t ldc, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
                             int add, double *buf) noexcept nogil
