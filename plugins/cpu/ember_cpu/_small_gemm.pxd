# The register-tiled small-product kernel of _small_gemm.h (declarations only): the LSTM
# time loop (_rnn) and batches of small products (_blas) share it.
from libc.stdint cimport int64_t

cdef extern from "_small_gemm.h":
    int64_t ember_sg_panel_f32(int64_t N) noexcept nogil
    int64_t ember_sg_panel_f64(int64_t N) noexcept nogil
    void ember_sg_pack_f32(const float *B, int64_t K, int64_t N, int64_t sk, int64_t sn,
                           int64_t np, float *Bp) noexcept nogil
    void ember_sg_pack_f64(const double *B, int64_t K, int64_t N, int64_t sk, int64_t sn,
                           int64_t np, double *Bp) noexcept nogil
    void ember_sg_mm_f32(int64_t np, int64_t M, int64_t N, int64_t K, const float *A,
                         int64_t lda, int64_t ka, const float *Bp, int64_t p0, int64_t p1,
                         const float *D, float *C) noexcept nogil
    void ember_sg_mm_f64(int64_t np, int64_t M, int64_t N, int64_t K, const double *A,
                         int64_t lda, int64_t ka, const double *Bp, int64_t p0, int64_t p1,
                         const double *D, double *C) noexcept nogil
