# Cython's view of ember/abi.h, the kernel ABI (the one place it is declared).
from libc.stdint cimport int64_t, uint64_t

cdef extern from "ember/abi.h":
    enum:
        EMBER_ABI_VERSION
        EMBER_MAX_DIM
        EMBER_OK
        EMBER_ERR_RUNTIME
        EMBER_ERR_INDEX
        EMBER_ERR_VALUE
        EMBER_ERR_TYPE
        EMBER_ERR_NOT_IMPLEMENTED
        EMBER_ERR_MEMORY
        EMBER_UNARY_NEG
        EMBER_UNARY_EXP
        EMBER_UNARY_RELU
        EMBER_UNARY_ABS
        EMBER_UNARY_LOG
        EMBER_UNARY_SQRT
        EMBER_UNARY_SIN
        EMBER_UNARY_COS
        EMBER_UNARY_TANH
        EMBER_UNARY_SIGMOID
        EMBER_UNARY_RECIPROCAL
        EMBER_UNARY_SQUARE
        EMBER_BINARY_ADD
        EMBER_BINARY_SUB
        EMBER_BINARY_MUL
        EMBER_BINARY_DIV
        EMBER_BINARY_MAXIMUM
        EMBER_BINARY_MINIMUM
        EMBER_BINARY_POW
        EMBER_REDUCE_SUM
        EMBER_REDUCE_MEAN
        EMBER_REDUCE_PROD
        EMBER_REDUCE_MAX
        EMBER_REDUCE_MIN
        EMBER_RANDOM_UNIFORM
        EMBER_RANDOM_NORMAL

    ctypedef struct ember_view:
        char* data
        int64_t sizes[16]
        int64_t strides[16]
        int ndim
        int dtype

    ctypedef struct ember_ctx:
        int deterministic
        char error[256]

    ctypedef struct ember_kernel_table:
        int abi_version
        void* (*alloc)(int64_t nbytes) noexcept nogil
        void (*free)(void* ptr) noexcept nogil
        int (*copy)(ember_ctx*, const ember_view*, const ember_view*) noexcept nogil
        int (*fill)(ember_ctx*, const ember_view*, const void*) noexcept nogil
        int (*to_host)(ember_ctx*, void*, const void*, int64_t) noexcept nogil
        int (*from_host)(ember_ctx*, void*, const void*, int64_t) noexcept nogil
        int (*unary)(ember_ctx*, int, const ember_view*, const ember_view*) noexcept nogil
        int (*binary)(ember_ctx*, int, const ember_view*, const ember_view*,
                      const ember_view*) noexcept nogil
        int (*reduce)(ember_ctx*, int, const ember_view*, const ember_view*, int) noexcept nogil
        int (*matmul)(ember_ctx*, const ember_view*, const ember_view*,
                      const ember_view*) noexcept nogil
        int (*random)(ember_ctx*, int, const ember_view*, uint64_t, uint64_t, double,
                      double) noexcept nogil
