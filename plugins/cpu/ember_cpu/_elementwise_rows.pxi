# The C row loops _elementwise.pyx calls (_binary_math.h, _unary_math.h: libm-free and
# cloned per instruction set, where the module's own loops build for SSE2), and the table
# of its float unary ops by op code.  Included by _elementwise.pyx.

cdef extern from "_binary_math.h":
    void ember_add_f32(float *o, const float *a, const float *b, int64_t n) noexcept nogil
    void ember_sub_f32(float *o, const float *a, const float *b, int64_t n) noexcept nogil
    void ember_mul_f32(float *o, const float *a, const float *b, int64_t n) noexcept nogil
    void ember_div_f32(float *o, const float *a, const float *b, int64_t n) noexcept nogil
    void ember_add_f64(double *o, const double *a, const double *b, int64_t n) noexcept nogil
    void ember_sub_f64(double *o, const double *a, const double *b, int64_t n) noexcept nogil
    void ember_mul_f64(double *o, const double *a, const double *b, int64_t n) noexcept nogil
    void ember_div_f64(double *o, const double *a, const double *b, int64_t n) noexcept nogil
    void ember_add_scalar_f32(float *o, const float *a, float s, int rev, int64_t n) noexcept nogil
    void ember_sub_scalar_f32(float *o, const float *a, float s, int rev, int64_t n) noexcept nogil
    void ember_mul_scalar_f32(float *o, const float *a, float s, int rev, int64_t n) noexcept nogil
    void ember_div_scalar_f32(float *o, const float *a, float s, int rev, int64_t n) noexcept nogil
    void ember_maximum_scalar_f32(float *o, const float *a, float s, int rev,
                                  int64_t n) noexcept nogil
    void ember_minimum_scalar_f32(float *o, const float *a, float s, int rev,
                                  int64_t n) noexcept nogil
    void ember_maximum_scalar_f64(double *o, const double *a, double s, int rev,
                                  int64_t n) noexcept nogil
    void ember_minimum_scalar_f64(double *o, const double *a, double s, int rev,
                                  int64_t n) noexcept nogil
    void ember_add_scalar_f64(double *o, const double *a, double s, int rev,
                              int64_t n) noexcept nogil
    void ember_sub_scalar_f64(double *o, const double *a, double s, int rev,
                              int64_t n) noexcept nogil
    void ember_mul_scalar_f64(double *o, const double *a, double s, int rev,
                              int64_t n) noexcept nogil
    void ember_div_scalar_f64(double *o, const double *a, double s, int rev,
                              int64_t n) noexcept nogil
    void ember_fmod_row_f32(float *o, const float *a, const float *b, int64_t n) noexcept nogil
    void ember_remainder_row_f32(float *o, const float *a, const float *b,
                                 int64_t n) noexcept nogil
    void ember_floor_divide_row_f32(float *o, const float *a, const float *b,
                                    int64_t n) noexcept nogil
    void ember_atan2_row_f32(float *o, const float *a, const float *b, int64_t n) noexcept nogil

cdef extern from "_unary_math.h":
    void ember_exp_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_erf_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_sigmoid_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_tanh_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_gelu_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_log_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_log2_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_log10_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_log1p_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_expm1_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_exp2_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_rsqrt_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_sin_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_cos_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_tan_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_cosh_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_sinh_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_acos_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_asin_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_atan_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_neg_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_abs_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_relu_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_square_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_reciprocal_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_sqrt_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_floor_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_ceil_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_trunc_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_round_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_sign_f32(float *o, const float *a, int64_t n) noexcept nogil
    void ember_neg_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_abs_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_relu_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_square_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_reciprocal_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_sqrt_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_floor_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_ceil_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_trunc_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_round_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_sign_f64(double *o, const double *a, int64_t n) noexcept nogil
    void ember_gelu_backward_f32(float *o, const float *g, const float *x,
                                 int64_t n) noexcept nogil

# the float ops with a loop in C (_unary_math.h), by op code (NULL: unary_loop's own):
# libm-free and cloned per instruction set, where this module's loops build for SSE2
ctypedef void (*f32_row)(float *o, const float *a, int64_t n) noexcept nogil
ctypedef void (*f64_row)(double *o, const double *a, int64_t n) noexcept nogil
cdef f32_row F32_ROWS[EMBER_UNARY_COUNT + 1]
cdef f64_row F64_ROWS[EMBER_UNARY_COUNT + 1]


cdef void init_rows() noexcept nogil:
    F32_ROWS[EMBER_UNARY_EXP] = ember_exp_f32
    F32_ROWS[EMBER_UNARY_ERF] = ember_erf_f32
    F32_ROWS[EMBER_UNARY_SIGMOID] = ember_sigmoid_f32
    F32_ROWS[EMBER_UNARY_TANH] = ember_tanh_f32
    F32_ROWS[EMBER_UNARY_GELU] = ember_gelu_f32
    F32_ROWS[EMBER_UNARY_LOG] = ember_log_f32
    F32_ROWS[EMBER_UNARY_LOG2] = ember_log2_f32
    F32_ROWS[EMBER_UNARY_LOG10] = ember_log10_f32
    F32_ROWS[EMBER_UNARY_LOG1P] = ember_log1p_f32
    F32_ROWS[EMBER_UNARY_EXPM1] = ember_expm1_f32
    F32_ROWS[EMBER_UNARY_EXP2] = ember_exp2_f32
    F32_ROWS[EMBER_UNARY_RSQRT] = ember_rsqrt_f32
    F32_ROWS[EMBER_UNARY_SIN] = ember_sin_f32
    F32_ROWS[EMBER_UNARY_COS] = ember_cos_f32
    F32_ROWS[EMBER_UNARY_TAN] = ember_tan_f32
    F32_ROWS[EMBER_UNARY_COSH] = ember_cosh_f32
    F32_ROWS[EMBER_UNARY_SINH] = ember_sinh_f32
    F32_ROWS[EMBER_UNARY_ACOS] = ember_acos_f32
    F32_ROWS[EMBER_UNARY_ASIN] = ember_asin_f32
    F32_ROWS[EMBER_UNARY_ATAN] = ember_atan_f32
    F32_ROWS[EMBER_UNARY_NEG] = ember_neg_f32
    F32_ROWS[EMBER_UNARY_ABS] = ember_abs_f32
    F32_ROWS[EMBER_UNARY_RELU] = ember_relu_f32
    F32_ROWS[EMBER_UNARY_SQUARE] = ember_square_f32
    F32_ROWS[EMBER_UNARY_RECIPROCAL] = ember_reciprocal_f32
    F32_ROWS[EMBER_UNARY_SQRT] = ember_sqrt_f32
    F32_ROWS[EMBER_UNARY_FLOOR] = ember_floor_f32
    F32_ROWS[EMBER_UNARY_CEIL] = ember_ceil_f32
    F32_ROWS[EMBER_UNARY_TRUNC] = ember_trunc_f32
    F32_ROWS[EMBER_UNARY_ROUND] = ember_round_f32
    F32_ROWS[EMBER_UNARY_SIGN] = ember_sign_f32
    F64_ROWS[EMBER_UNARY_NEG] = ember_neg_f64
    F64_ROWS[EMBER_UNARY_ABS] = ember_abs_f64
    F64_ROWS[EMBER_UNARY_RELU] = ember_relu_f64
    F64_ROWS[EMBER_UNARY_SQUARE] = ember_square_f64
    F64_ROWS[EMBER_UNARY_RECIPROCAL] = ember_reciprocal_f64
    F64_ROWS[EMBER_UNARY_SQRT] = ember_sqrt_f64
    F64_ROWS[EMBER_UNARY_FLOOR] = ember_floor_f64
    F64_ROWS[EMBER_UNARY_CEIL] = ember_ceil_f64
    F64_ROWS[EMBER_UNARY_TRUNC] = ember_trunc_f64
    F64_ROWS[EMBER_UNARY_ROUND] = ember_round_f64
    F64_ROWS[EMBER_UNARY_SIGN] = ember_sign_f64


init_rows()
