# The kernel ABI (ember/abi.h) and the float16/bfloat16 conversions (ember/half.h), as
# Cython sees them: `from ember_abi cimport ...` with ember.get_include() on Cython's
# include path.  The core and every plugin cimport the ABI from this one file.
from libc.stdint cimport int32_t, int64_t, uint16_t, uint64_t

cdef extern from "ember/abi.h":
    enum:
        EMBER_ABI_VERSION
        EMBER_ABI_MINOR
        EMBER_MAX_DIM
        EMBER_VIEW_HOST_SCALAR
        EMBER_ERROR_LEN
    const char *EMBER_KERNEL_TABLE_CAPSULE

    enum:
        EMBER_UINT8, EMBER_INT8, EMBER_INT16, EMBER_INT32, EMBER_INT64
        EMBER_FLOAT16, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_BOOL, EMBER_BFLOAT16
        EMBER_UINT16, EMBER_UINT32, EMBER_UINT64

    enum:
        EMBER_OK, EMBER_ERR_RUNTIME, EMBER_ERR_INDEX, EMBER_ERR_VALUE, EMBER_ERR_TYPE
        EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_MEMORY

    # ---- generated from core/optable.py: python -m ember.core.optable_codegen ----
    enum:
        EMBER_UNARY_NEG, EMBER_UNARY_EXP, EMBER_UNARY_RELU, EMBER_UNARY_ABS, EMBER_UNARY_LOG
        EMBER_UNARY_SQRT, EMBER_UNARY_SIN, EMBER_UNARY_COS, EMBER_UNARY_TANH, EMBER_UNARY_SIGMOID
        EMBER_UNARY_RECIPROCAL, EMBER_UNARY_SQUARE, EMBER_UNARY_FLOOR, EMBER_UNARY_CEIL
        EMBER_UNARY_TRUNC, EMBER_UNARY_ROUND, EMBER_UNARY_EXP2, EMBER_UNARY_EXPM1, EMBER_UNARY_LOG2
        EMBER_UNARY_LOG10, EMBER_UNARY_LOG1P, EMBER_UNARY_ERF, EMBER_UNARY_ERFC, EMBER_UNARY_ASIN
        EMBER_UNARY_ACOS, EMBER_UNARY_ATAN, EMBER_UNARY_SINH, EMBER_UNARY_COSH, EMBER_UNARY_RSQRT
        EMBER_UNARY_BITWISE_NOT, EMBER_UNARY_TAN, EMBER_UNARY_ERFINV, EMBER_UNARY_LGAMMA
        EMBER_UNARY_DIGAMMA, EMBER_UNARY_GELU, EMBER_UNARY_SIGN, EMBER_UNARY_COUNT

    enum:
        EMBER_BINARY_ADD, EMBER_BINARY_SUB, EMBER_BINARY_MUL, EMBER_BINARY_DIV
        EMBER_BINARY_MAXIMUM, EMBER_BINARY_MINIMUM, EMBER_BINARY_POW, EMBER_BINARY_EQ
        EMBER_BINARY_NE, EMBER_BINARY_LT, EMBER_BINARY_LE, EMBER_BINARY_GT, EMBER_BINARY_GE
        EMBER_BINARY_LOGICAL_AND, EMBER_BINARY_LOGICAL_OR, EMBER_BINARY_LOGICAL_XOR
        EMBER_BINARY_ATAN2, EMBER_BINARY_FMOD, EMBER_BINARY_REMAINDER, EMBER_BINARY_FLOOR_DIVIDE
        EMBER_BINARY_FMAX, EMBER_BINARY_FMIN, EMBER_BINARY_BITWISE_AND, EMBER_BINARY_BITWISE_OR
        EMBER_BINARY_BITWISE_XOR, EMBER_BINARY_SHIFT_LEFT, EMBER_BINARY_SHIFT_RIGHT
        EMBER_BINARY_GELU_BACKWARD, EMBER_BINARY_COUNT

    enum:
        EMBER_REDUCE_SUM, EMBER_REDUCE_MEAN, EMBER_REDUCE_PROD, EMBER_REDUCE_MAX, EMBER_REDUCE_MIN
        EMBER_REDUCE_ARGMAX, EMBER_REDUCE_ARGMIN, EMBER_REDUCE_COUNT

    enum:
        EMBER_SCAN_CUMSUM, EMBER_SCAN_CUMPROD, EMBER_SCAN_CUMMAX, EMBER_SCAN_CUMMIN
        EMBER_SCAN_COUNT
    # ---- end of the generated op codes ----

    enum:
        EMBER_INDEX_GATHER, EMBER_INDEX_SCATTER, EMBER_INDEX_SCATTER_ADD
        EMBER_INDEX_SCATTER_MUL, EMBER_INDEX_SCATTER_AMAX, EMBER_INDEX_SCATTER_AMIN
        EMBER_INDEX_COUNT, EMBER_INDEX_WRAP

    enum:
        EMBER_SEARCH_LEFT, EMBER_SEARCH_RIGHT, EMBER_SEARCH_MULTINOMIAL, EMBER_SEARCH_COUNT
        EMBER_SOFTMAX, EMBER_LOG_SOFTMAX, EMBER_SOFTMAX_BACKWARD, EMBER_LOG_SOFTMAX_BACKWARD
        EMBER_SOFTMAX_COUNT

    # ---- ABI 5, norms and losses ----
    enum:
        EMBER_LAYER_NORM, EMBER_LAYER_NORM_BACKWARD, EMBER_BATCH_NORM_STATS
        EMBER_BATCH_NORM_APPLY, EMBER_BATCH_NORM_BACKWARD, EMBER_BATCH_NORM_BACKWARD_EVAL
        EMBER_NORM_COUNT

    enum:
        EMBER_NLL, EMBER_CROSS_ENTROPY, EMBER_NLL_BACKWARD, EMBER_CROSS_ENTROPY_BACKWARD
        EMBER_NLL_COUNT
    # ---- end of ABI 5 norms and losses ----
    # --- conv and pooling (ABI 5) ---
    ctypedef struct ember_conv_params:
        int64_t stride[2]
        int64_t padding[2]
        int64_t dilation[2]
        int64_t groups

    enum:
        EMBER_CONV_FORWARD, EMBER_CONV_BACKWARD_INPUT, EMBER_CONV_BACKWARD_WEIGHT
        EMBER_CONV_COUNT

    ctypedef struct ember_pool_params:
        int64_t kernel[2]
        int64_t stride[2]
        int64_t padding[2]
        int64_t dilation[2]
        int32_t count_include_pad
        int32_t reserved
        int64_t divisor_override

    enum:
        EMBER_POOL_MAX, EMBER_POOL_MAX_BACKWARD, EMBER_POOL_AVG, EMBER_POOL_AVG_BACKWARD
        EMBER_POOL_ADAPTIVE_AVG, EMBER_POOL_ADAPTIVE_AVG_BACKWARD, EMBER_POOL_ADAPTIVE_MAX
        EMBER_POOL_COUNT
    # --- end of conv and pooling ---

    enum:
        EMBER_RANDOM_UNIFORM, EMBER_RANDOM_NORMAL, EMBER_RANDOM_COUNT

    # ---- ABI 6.2: recurrent layers ----
    enum:
        EMBER_RNN_LSTM, EMBER_RNN_LSTM_BACKWARD, EMBER_RNN_COUNT

    # ---- ABI 6.4: pointwise activations ----
    enum:
        EMBER_ACTIVATION_LEAKY_RELU, EMBER_ACTIVATION_HARDTANH, EMBER_ACTIVATION_CLAMP,
        EMBER_ACTIVATION_HARDSIGMOID, EMBER_ACTIVATION_HARDSWISH, EMBER_ACTIVATION_SILU,
        EMBER_ACTIVATION_ELU, EMBER_ACTIVATION_SOFTPLUS, EMBER_ACTIVATION_LOG_SIGMOID,
        EMBER_ACTIVATION_HARDSHRINK, EMBER_ACTIVATION_SOFTSHRINK, EMBER_ACTIVATION_MISH,
        EMBER_ACTIVATION_COUNT

    # ---- ABI 6.5: lerp, addcmul, addcdiv ----
    enum:
        EMBER_TERNARY_LERP, EMBER_TERNARY_ADDCMUL, EMBER_TERNARY_ADDCDIV, EMBER_TERNARY_COUNT

    ctypedef struct ember_adam_params:
        double lr, beta1, beta2, eps, weight_decay
        double step_size, bias_correction2_sqrt
        int32_t decoupled, amsgrad, maximize, reserved

    ctypedef struct ember_sgd_params:
        double lr, momentum, dampening, weight_decay
        int32_t nesterov, maximize, first, reserved

    ctypedef struct ember_view:
        char *data
        int64_t sizes[EMBER_MAX_DIM]
        int64_t strides[EMBER_MAX_DIM]
        int32_t ndim
        int32_t dtype
        int32_t flags
        int32_t reserved

    enum:
        EMBER_MATMUL_HIGHEST, EMBER_MATMUL_HIGH, EMBER_MATMUL_MEDIUM

    ctypedef struct ember_ctx:
        int32_t deterministic
        int32_t device
        int32_t matmul_precision
        int32_t reserved
        char error[EMBER_ERROR_LEN]

    ctypedef struct ember_kernel_table:
        int32_t abi_version
        int32_t abi_minor
        int64_t size
        void *(*alloc)(ember_ctx *ctx, int64_t nbytes) noexcept nogil
        void (*free)(int32_t device, void *ptr) noexcept nogil
        int (*copy)(ember_ctx *ctx, const ember_view *out, const ember_view *a) noexcept nogil
        int (*fill)(ember_ctx *ctx, const ember_view *out, const void *value) noexcept nogil
        int (*to_host)(ember_ctx *ctx, void *host_dst, const void *device_src,
                       int64_t nbytes) noexcept nogil
        int (*from_host)(ember_ctx *ctx, void *device_dst, const void *host_src,
                         int64_t nbytes) noexcept nogil
        int (*unary)(ember_ctx *ctx, int32_t op, const ember_view *out,
                     const ember_view *a) noexcept nogil
        int (*binary)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                      const ember_view *b) noexcept nogil
        int (*reduce)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                      int32_t nreduce) noexcept nogil
        int (*matmul)(ember_ctx *ctx, const ember_view *out, const ember_view *a,
                      const ember_view *b) noexcept nogil
        int (*random)(ember_ctx *ctx, int32_t op, const ember_view *out, uint64_t seed,
                      uint64_t offset, double p0, double p1) noexcept nogil
        int (*where)(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                     const ember_view *a, const ember_view *b) noexcept nogil
        int (*scan)(ember_ctx *ctx, int32_t op, const ember_view *out,
                    const ember_view *indices, const ember_view *a) noexcept nogil
        int (*index)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                     const ember_view *index, int32_t dim) noexcept nogil
        int (*search)(ember_ctx *ctx, int32_t op, const ember_view *out,
                      const ember_view *sorted, const ember_view *values) noexcept nogil
        # optional fused kernels: NULL means "run the core's composite"
        int (*softmax)(ember_ctx *ctx, int32_t op, const ember_view *out,
                       const ember_view *a, const ember_view *b) noexcept nogil
        # ---- ABI 5, norms and losses ----
        int (*norm)(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                    double eps) noexcept nogil
        int (*nll)(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                   int64_t ignore_index) noexcept nogil
        # ---- end of ABI 5 norms and losses ----
        # --- conv and pooling (ABI 5) ---
        int (*conv)(ember_ctx *ctx, int32_t op, const ember_conv_params *p,
                    const ember_view *out, const ember_view *a, const ember_view *b,
                    const ember_view *c) noexcept nogil
        int (*pool)(ember_ctx *ctx, int32_t op, const ember_pool_params *p,
                    const ember_view *out, const ember_view *indices,
                    const ember_view *a) noexcept nogil
        # --- end of conv and pooling ---
        int (*adam)(ember_ctx *ctx, const ember_adam_params *p, const ember_view *const *v,
                    int64_t n) noexcept nogil
        int (*sort)(ember_ctx *ctx, const ember_view *values, const ember_view *indices,
                    const ember_view *a, int32_t descending) noexcept nogil
        int (*rnn)(ember_ctx *ctx, int32_t op, const ember_view *const *v,
                   int32_t reverse) noexcept nogil
        int (*sgd)(ember_ctx *ctx, const ember_sgd_params *p, const ember_view *const *v,
                   int64_t n) noexcept nogil
        int (*activation)(ember_ctx *ctx, int32_t op, const double *p, const ember_view *out,
                          const ember_view *a, const ember_view *b) noexcept nogil
        int (*ternary)(ember_ctx *ctx, int32_t op, const ember_view *out, const ember_view *a,
                       const ember_view *b, const ember_view *c, double p) noexcept nogil

cdef extern from "ember/half.h":
    float ember_half_to_float(uint16_t h) noexcept nogil
    uint16_t ember_float_to_half(float f) noexcept nogil
    float ember_bf16_to_float(uint16_t h) noexcept nogil
    uint16_t ember_float_to_bf16(float f) noexcept nogil
