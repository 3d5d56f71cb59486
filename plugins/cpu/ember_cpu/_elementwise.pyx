# Elementwise unary and binary kernels, and where (a byte-copying select).
#
# A row of the strided iteration is processed in blocks: each operand is either used in
# place (stored as its compute type, stride 1), broadcast (stride 0: loaded once into a
# buffer), or gathered/converted into a staging buffer; the op then runs as one
# contiguous loop per (op, compute type), which the compiler vectorizes.  Only the three
# compute types (int64, float, double) get loops: narrow integers, bool, float16 and
# bfloat16 are converted on load and store.  The predicates (comparisons, logical ops)
# run in their inputs' compute type too, giving 0/1 there, which the store converts to
# the bool out: that is the one case where out's dtype differs from the inputs'.
from libc.math cimport (
    exp, log, sin, cos, tanh, pow, powf, erf,
    M_SQRT1_2,
)

cdef double M_1_SQRT_2PI = 0.3989422804014327     # 1 / sqrt(2 pi)
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from ember_cpu._abi cimport (
    ember_ctx, ember_view, EMBER_MAX_DIM, EMBER_OK, EMBER_ERR_VALUE, EMBER_ERR_NOT_IMPLEMENTED, EMBER_ERR_TYPE,
    EMBER_ERR_RUNTIME, EMBER_BOOL, EMBER_UNARY_NEG, EMBER_UNARY_EXP, EMBER_UNARY_RELU,
    EMBER_UNARY_ABS, EMBER_UNARY_LOG, EMBER_UNARY_SQRT, EMBER_UNARY_SIN, EMBER_UNARY_COS,
    EMBER_UNARY_TANH, EMBER_UNARY_SIGMOID, EMBER_UNARY_RECIPROCAL, EMBER_UNARY_SQUARE,
    EMBER_UNARY_FLOOR, EMBER_UNARY_CEIL, EMBER_UNARY_TRUNC, EMBER_UNARY_ROUND,
    EMBER_UNARY_EXP2, EMBER_UNARY_EXPM1, EMBER_UNARY_LOG2, EMBER_UNARY_LOG10,
    EMBER_UNARY_LOG1P, EMBER_UNARY_ERF, EMBER_UNARY_ERFC, EMBER_UNARY_ASIN, EMBER_UNARY_ACOS,
    EMBER_UNARY_ATAN, EMBER_UNARY_SINH, EMBER_UNARY_COSH, EMBER_UNARY_RSQRT,
    EMBER_UNARY_BITWISE_NOT, EMBER_UNARY_TAN, EMBER_UNARY_ERFINV, EMBER_UNARY_LGAMMA,
    EMBER_UNARY_DIGAMMA, EMBER_UNARY_GELU, EMBER_UNARY_SIGN, EMBER_UNARY_COUNT,
    EMBER_BINARY_ADD, EMBER_BINARY_SUB, EMBER_BINARY_MUL, EMBER_BINARY_DIV,
    EMBER_BINARY_MAXIMUM, EMBER_BINARY_MINIMUM, EMBER_BINARY_POW, EMBER_BINARY_EQ,
    EMBER_BINARY_NE, EMBER_BINARY_LT, EMBER_BINARY_LE, EMBER_BINARY_GT, EMBER_BINARY_GE,
    EMBER_BINARY_LOGICAL_AND, EMBER_BINARY_LOGICAL_OR, EMBER_BINARY_LOGICAL_XOR,
    EMBER_BINARY_ATAN2, EMBER_BINARY_FMOD, EMBER_BINARY_REMAINDER, EMBER_BINARY_FLOOR_DIVIDE,
    EMBER_BINARY_FMAX, EMBER_BINARY_FMIN, EMBER_BINARY_BITWISE_AND, EMBER_BINARY_BITWISE_OR,
    EMBER_BINARY_BITWISE_XOR, EMBER_BINARY_SHIFT_LEFT, EMBER_BINARY_SHIFT_RIGHT,
    EMBER_BINARY_GELU_BACKWARD, EMBER_BINARY_COUNT,
)
from ember_cpu._scalar cimport (
    _add, _sub, _mul, _max, _min, _neg, _abs, _relu, _ipow, _floor, _ceil, _trunc, _round,
    _exp2, _expm1, _log2, _log10, _log1p, _erf, _erfc, _asin, _acos, _atan, _sinh, _cosh,
    _rsqrt, _tan, _atan2, _fmod, _remainder, _floor_divide, _fmax, _fmin, _shift_left,
    _shift_right,
)
from ember_cpu._special cimport _digamma, _erfinv, _lgamma
from ember_cpu._strided cimport (
    ct_t, CT_F32, CT_F64, BUF_LEN, StageBuf, StridedIter, compute_type, parallel_cutoff,
    is_native, is_floating, dtype_itemsize, iter_init, iter_run, load_ct, store_ct,
    set_error, error_dtype, num_threads,
)

include "_elementwise_rows.pxi"

cdef extern from "_byte_rows.h":
    void ember_byte_binary(int kind, int truth, uint8_t *o, const uint8_t *a, int64_t sa,
                           const uint8_t *b, int64_t sb, int64_t n) noexcept nogil
    void ember_byte_not(int truth, uint8_t *o, const uint8_t *a, int64_t n) noexcept nogil

cdef extern from "_compare_rows.h":
    int ember_compare_row(int dtype, int op, uint8_t *o, const void *a, int64_t sa,
                          const void *b, int64_t sb, int64_t n) noexcept nogil

# each op's name and the dtypes its kernel takes: generated from ember's op table
cdef extern from "ember/abi_tables.h":
    const char *ember_unary_names[]
    const char *ember_binary_names[]
    const uint32_t ember_unary_dtypes[]
    const uint32_t ember_binary_dtypes[]


cdef enum:
    # internal unary op (not an abi.h code): bitwise_not on bool
    OP_LOGICAL_NOT = EMBER_UNARY_COUNT


ctypedef struct EwCall:
    int op
    int nin           # 1: unary, 2: binary
    int ct            # compute type (of the inputs)
    int dtype         # of every input, and of out unless the op is a predicate
    int64_t itemsize
    bint native       # dtype is stored as its compute type
    int out_dtype     # bool for the predicates, else dtype
    int64_t out_itemsize
    bint out_native   # out is stored as the compute type (out_dtype == dtype, native)


# -- contiguous loops ---------------------------------------------------------------------


cdef int unary_loop(int op, ct_t *o, const ct_t *a, int64_t n) noexcept nogil:
    cdef int64_t i
    if ct_t is float:
        if F32_ROWS[op] != NULL:
            F32_ROWS[op](o, a, n)
            return EMBER_OK
    elif ct_t is double:
        if F64_ROWS[op] != NULL:
            F64_ROWS[op](o, a, n)
            return EMBER_OK
    if op == EMBER_UNARY_NEG:
        for i in range(n):
            o[i] = _neg(a[i])
    elif op == EMBER_UNARY_ABS:
        for i in range(n):
            o[i] = _abs(a[i])
    elif op == EMBER_UNARY_RELU:
        for i in range(n):
            o[i] = _relu(a[i])
    elif op == EMBER_UNARY_SQUARE:
        for i in range(n):
            o[i] = _mul(a[i], a[i])
    elif op == EMBER_UNARY_SIGN:              # NaN and -0.0 give 0, as PyTorch
        for i in range(n):
            o[i] = (a[i] > 0) - (a[i] < 0)
    elif ct_t is int64_t:
        if EMBER_UNARY_FLOOR <= op <= EMBER_UNARY_ROUND:      # identity on integers
            for i in range(n):
                o[i] = a[i]
        elif op == EMBER_UNARY_BITWISE_NOT:
            for i in range(n):
                o[i] = ~a[i]
        elif op == OP_LOGICAL_NOT:
            for i in range(n):
                o[i] = a[i] == 0
    elif ct_t is double and op == EMBER_UNARY_GELU:
        for i in range(n):
            o[i] = 0.5 * a[i] * (1 + erf(a[i] * M_SQRT1_2))
    elif op >= EMBER_UNARY_FLOOR:
        # floating ops shared by float and double (the _scalar helpers pick the libm
        # function); the older ones below keep their own per-type branches
        if op == EMBER_UNARY_FLOOR:
            for i in range(n):
                o[i] = _floor(a[i])
        elif op == EMBER_UNARY_CEIL:
            for i in range(n):
                o[i] = _ceil(a[i])
        elif op == EMBER_UNARY_TRUNC:
            for i in range(n):
                o[i] = _trunc(a[i])
        elif op == EMBER_UNARY_ROUND:
            for i in range(n):
                o[i] = _round(a[i])
        elif op == EMBER_UNARY_EXP2:
            for i in range(n):
                o[i] = _exp2(a[i])
        elif op == EMBER_UNARY_EXPM1:
            for i in range(n):
                o[i] = _expm1(a[i])
        elif op == EMBER_UNARY_LOG2:
            for i in range(n):
                o[i] = _log2(a[i])
        elif op == EMBER_UNARY_LOG10:
            for i in range(n):
                o[i] = _log10(a[i])
        elif op == EMBER_UNARY_LOG1P:
            for i in range(n):
                o[i] = _log1p(a[i])
        elif op == EMBER_UNARY_ERF:
            for i in range(n):
                o[i] = _erf(a[i])
        elif op == EMBER_UNARY_ERFC:
            for i in range(n):
                o[i] = _erfc(a[i])
        elif op == EMBER_UNARY_ASIN:
            for i in range(n):
                o[i] = _asin(a[i])
        elif op == EMBER_UNARY_ACOS:
            for i in range(n):
                o[i] = _acos(a[i])
        elif op == EMBER_UNARY_ATAN:
            for i in range(n):
                o[i] = _atan(a[i])
        elif op == EMBER_UNARY_SINH:
            for i in range(n):
                o[i] = _sinh(a[i])
        elif op == EMBER_UNARY_COSH:
            for i in range(n):
                o[i] = _cosh(a[i])
        elif op == EMBER_UNARY_RSQRT:
            for i in range(n):
                o[i] = _rsqrt(a[i])
        elif op == EMBER_UNARY_TAN:
            for i in range(n):
                o[i] = _tan(a[i])
        elif op == EMBER_UNARY_ERFINV:
            for i in range(n):
                o[i] = _erfinv(a[i])
        elif op == EMBER_UNARY_LGAMMA:
            for i in range(n):
                o[i] = _lgamma(a[i])
        elif op == EMBER_UNARY_DIGAMMA:
            for i in range(n):
                o[i] = _digamma(a[i])
    elif ct_t is double:      # float32's are all in F32_ROWS
        if op == EMBER_UNARY_EXP:
            for i in range(n):
                o[i] = exp(a[i])
        elif op == EMBER_UNARY_LOG:
            for i in range(n):
                o[i] = log(a[i])
        elif op == EMBER_UNARY_SIN:
            for i in range(n):
                o[i] = sin(a[i])
        elif op == EMBER_UNARY_COS:
            for i in range(n):
                o[i] = cos(a[i])
        elif op == EMBER_UNARY_TANH:
            for i in range(n):
                o[i] = tanh(a[i])
        elif op == EMBER_UNARY_SIGMOID:
            for i in range(n):
                o[i] = 1 / (1 + exp(-a[i]))
    return EMBER_OK


cdef int binary_loop(int op, ct_t *o, const ct_t *a, const ct_t *b, int64_t n) noexcept nogil:
    cdef int64_t i
    # float arithmetic: vector blocks built per instruction set (_binary_math.h)
    if ct_t is float and EMBER_BINARY_ADD <= op <= EMBER_BINARY_DIV:
        (ember_add_f32 if op == EMBER_BINARY_ADD else ember_sub_f32 if op == EMBER_BINARY_SUB
         else ember_mul_f32 if op == EMBER_BINARY_MUL else ember_div_f32)(o, a, b, n)
    elif ct_t is double and EMBER_BINARY_ADD <= op <= EMBER_BINARY_DIV:
        (ember_add_f64 if op == EMBER_BINARY_ADD else ember_sub_f64 if op == EMBER_BINARY_SUB
         else ember_mul_f64 if op == EMBER_BINARY_MUL else ember_div_f64)(o, a, b, n)
    elif op == EMBER_BINARY_ADD:
        for i in range(n):
            o[i] = _add(a[i], b[i])
    elif op == EMBER_BINARY_SUB:
        for i in range(n):
            o[i] = _sub(a[i], b[i])
    elif op == EMBER_BINARY_MUL:
        for i in range(n):
            o[i] = _mul(a[i], b[i])
    elif op == EMBER_BINARY_MAXIMUM:
        for i in range(n):
            o[i] = _max(a[i], b[i])
    elif op == EMBER_BINARY_MINIMUM:
        for i in range(n):
            o[i] = _min(a[i], b[i])
    elif op == EMBER_BINARY_POW:
        if ct_t is int64_t:
            for i in range(n):
                o[i] = _ipow(a[i], b[i])
        elif ct_t is float:
            for i in range(n):
                o[i] = powf(a[i], b[i])
        else:
            for i in range(n):
                o[i] = pow(a[i], b[i])
    elif op == EMBER_BINARY_DIV:
        if ct_t is not int64_t:       # integer dtypes never reach div
            for i in range(n):
                o[i] = a[i] / b[i]
    elif EMBER_BINARY_FMOD <= op <= EMBER_BINARY_FLOOR_DIVIDE:
        if ct_t is int64_t:
            # integer division by zero: an error (reported by binary_kernel)
            for i in range(n):
                if b[i] == 0:
                    return EMBER_ERR_RUNTIME
        if ct_t is float:     # vectorising loops (_binary_math.h)
            if op == EMBER_BINARY_FMOD:
                ember_fmod_row_f32(o, a, b, n)
            elif op == EMBER_BINARY_REMAINDER:
                ember_remainder_row_f32(o, a, b, n)
            else:
                ember_floor_divide_row_f32(o, a, b, n)
        elif op == EMBER_BINARY_FMOD:
            for i in range(n):
                o[i] = _fmod(a[i], b[i])
        elif op == EMBER_BINARY_REMAINDER:
            for i in range(n):
                o[i] = _remainder(a[i], b[i])
        else:
            for i in range(n):
                o[i] = _floor_divide(a[i], b[i])
    elif op == EMBER_BINARY_FMAX:
        for i in range(n):
            o[i] = _fmax(a[i], b[i])
    elif op == EMBER_BINARY_FMIN:
        for i in range(n):
            o[i] = _fmin(a[i], b[i])
    elif op == EMBER_BINARY_ATAN2:
        if ct_t is float:
            ember_atan2_row_f32(o, a, b, n)
        elif ct_t is double:          # floating dtypes only
            for i in range(n):
                o[i] = _atan2(a[i], b[i])
    elif op == EMBER_BINARY_GELU_BACKWARD:
        if ct_t is float:
            ember_gelu_backward_f32(o, a, b, n)
        elif ct_t is double:
            for i in range(n):
                o[i] = a[i] * (0.5 * (1 + erf(b[i] * M_SQRT1_2))
                               + b[i] * M_1_SQRT_2PI * exp(-0.5 * b[i] * b[i]))
    # predicates: 0/1 in the compute type (IEEE comparisons: false on NaN but for !=;
    # logical ops: NaN is nonzero, so true); `&`/`!=` on truth values, not `and`: no
    # branch, so the loops vectorize
    elif op == EMBER_BINARY_EQ:
        for i in range(n):
            o[i] = a[i] == b[i]
    elif op == EMBER_BINARY_NE:
        for i in range(n):
            o[i] = a[i] != b[i]
    elif op == EMBER_BINARY_LT:
        for i in range(n):
            o[i] = a[i] < b[i]
    elif op == EMBER_BINARY_LE:
        for i in range(n):
            o[i] = a[i] <= b[i]
    elif op == EMBER_BINARY_GT:
        for i in range(n):
            o[i] = a[i] > b[i]
    elif op == EMBER_BINARY_GE:
        for i in range(n):
            o[i] = a[i] >= b[i]
    elif op == EMBER_BINARY_LOGICAL_AND:
        for i in range(n):
            o[i] = (a[i] != 0) & (b[i] != 0)
    elif op == EMBER_BINARY_LOGICAL_OR:
        for i in range(n):
            o[i] = (a[i] != 0) | (b[i] != 0)
    elif op == EMBER_BINARY_LOGICAL_XOR:
        for i in range(n):
            o[i] = (a[i] != 0) != (b[i] != 0)
    elif ct_t is int64_t:             # integer/bool only; floats are refused before
        if op == EMBER_BINARY_BITWISE_AND:
            for i in range(n):
                o[i] = a[i] & b[i]
        elif op == EMBER_BINARY_BITWISE_OR:
            for i in range(n):
                o[i] = a[i] | b[i]
        elif op == EMBER_BINARY_BITWISE_XOR:
            for i in range(n):
                o[i] = a[i] ^ b[i]
        elif op == EMBER_BINARY_SHIFT_LEFT:
            for i in range(n):
                o[i] = _shift_left(a[i], b[i])
        elif op == EMBER_BINARY_SHIFT_RIGHT:
            for i in range(n):
                o[i] = _shift_right(a[i], b[i])
    return EMBER_OK


cdef inline bint is_predicate(int op) noexcept nogil:
    return op >= EMBER_BINARY_EQ and op <= EMBER_BINARY_LOGICAL_XOR


cdef int run_block(const EwCall *e, void *o, const void *a, const void *b,
                   int64_t n) noexcept nogil:
    if e.nin == 1:
        if e.ct == CT_F32:
            return unary_loop(e.op, <float *>o, <const float *>a, n)
        if e.ct == CT_F64:
            return unary_loop(e.op, <double *>o, <const double *>a, n)
        return unary_loop(e.op, <int64_t *>o, <const int64_t *>a, n)
    if e.ct == CT_F32:
        return binary_loop(e.op, <float *>o, <const float *>a, <const float *>b, n)
    if e.ct == CT_F64:
        return binary_loop(e.op, <double *>o, <const double *>a, <const double *>b, n)
    return binary_loop(e.op, <int64_t *>o, <const int64_t *>a, <const int64_t *>b, n)


# float arithmetic, maximum and minimum with one operand a broadcast number (x * 0.5,
# grad.mul_(coef), clamp's bounds): one pass in vector blocks, the number read once (a
# staged row would copy it into a buffer first)
cdef bint scalar_arith(const EwCall *e, char **ptrs, const int64_t *strides,
                       int64_t n) noexcept nogil:
    cdef bint extremum = e.op == EMBER_BINARY_MAXIMUM or e.op == EMBER_BINARY_MINIMUM
    if e.nin != 2 or not (EMBER_BINARY_ADD <= e.op <= EMBER_BINARY_DIV or extremum) \
            or not e.out_native or strides[0] != 1 or (e.ct != CT_F32 and e.ct != CT_F64):
        return False
    cdef int rev
    if strides[1] == 1 and strides[2] == 0:
        rev = 0
    elif strides[1] == 0 and strides[2] == 1:
        rev = 1
    else:
        return False
    cdef char *a = ptrs[2 if rev else 1]
    cdef char *s = ptrs[1 if rev else 2]
    if extremum and e.ct == CT_F32:
        (ember_maximum_scalar_f32 if e.op == EMBER_BINARY_MAXIMUM else
         ember_minimum_scalar_f32)(<float *>ptrs[0], <const float *>a, (<float *>s)[0], rev, n)
    elif extremum:
        (ember_maximum_scalar_f64 if e.op == EMBER_BINARY_MAXIMUM else
         ember_minimum_scalar_f64)(<double *>ptrs[0], <const double *>a, (<double *>s)[0], rev,
                                   n)
    elif e.ct == CT_F32:
        (ember_add_scalar_f32 if e.op == EMBER_BINARY_ADD else ember_sub_scalar_f32
         if e.op == EMBER_BINARY_SUB else ember_mul_scalar_f32 if e.op == EMBER_BINARY_MUL
         else ember_div_scalar_f32)(<float *>ptrs[0], <const float *>a, (<float *>s)[0], rev, n)
    else:
        (ember_add_scalar_f64 if e.op == EMBER_BINARY_ADD else ember_sub_scalar_f64
         if e.op == EMBER_BINARY_SUB else ember_mul_scalar_f64 if e.op == EMBER_BINARY_MUL
         else ember_div_scalar_f64)(<double *>ptrs[0], <const double *>a, (<double *>s)[0], rev,
                                    n)
    return True


# comparisons into a contiguous bool row from operands each contiguous or broadcast, in their
# own type (_compare_rows.h); False where the row or the dtype is not one of those
cdef bint direct_compare(const EwCall *e, char **ptrs, const int64_t *strides,
                         int64_t n) noexcept nogil:
    if not (EMBER_BINARY_EQ <= e.op <= EMBER_BINARY_GE) or strides[0] != 1 \
            or not (0 <= strides[1] <= 1) or not (0 <= strides[2] <= 1):
        return False
    return ember_compare_row(e.dtype, e.op - EMBER_BINARY_EQ, <uint8_t *>ptrs[0], ptrs[1],
                             strides[1], ptrs[2], strides[2], n) != 0


# bitwise and logical ops of 1-byte operands (bool, uint8, int8) into a contiguous 1-byte row,
# operands each contiguous or broadcast (_byte_rows.h); False where the call is not one
cdef bint direct_bytes(const EwCall *e, char **ptrs, const int64_t *strides,
                       int64_t n) noexcept nogil:
    cdef int op = e.op, kind
    cdef bint boolean = e.dtype == EMBER_BOOL
    if e.itemsize != 1 or e.out_itemsize != 1 or strides[0] != 1 or \
            not (0 <= strides[1] <= 1):
        return False
    if e.nin == 1:
        if strides[1] != 1 or not (op == OP_LOGICAL_NOT or op == EMBER_UNARY_BITWISE_NOT):
            return False
        ember_byte_not(op == OP_LOGICAL_NOT, <uint8_t *>ptrs[0], <const uint8_t *>ptrs[1], n)
        return True
    if not (0 <= strides[2] <= 1):
        return False
    if op == EMBER_BINARY_BITWISE_AND or op == EMBER_BINARY_LOGICAL_AND or \
            (boolean and op == EMBER_BINARY_MUL):
        kind = 0
    elif op == EMBER_BINARY_BITWISE_OR or op == EMBER_BINARY_LOGICAL_OR or \
            (boolean and op == EMBER_BINARY_ADD):
        kind = 1
    elif op == EMBER_BINARY_BITWISE_XOR or op == EMBER_BINARY_LOGICAL_XOR:
        kind = 2
    else:
        return False
    ember_byte_binary(kind, boolean or is_predicate(op), <uint8_t *>ptrs[0],
                      <const uint8_t *>ptrs[1], strides[1], <const uint8_t *>ptrs[2],
                      strides[2], n)
    return True


# -- one row of the iteration ---------------------------------------------------------------

cdef int ew_row(void *arg, char **ptrs, const int64_t *strides, int64_t n,
                int64_t index) noexcept nogil:
    cdef const EwCall *e = <const EwCall *>arg
    cdef StageBuf bufs[3]
    cdef void *blk[3]
    cdef bint direct[3]
    cdef bint all_direct = True
    cdef int k, status
    cdef int64_t i = 0, m, step = BUF_LEN
    if scalar_arith(e, ptrs, strides, n) or (e.nin == 2 and direct_compare(e, ptrs, strides, n)) \
            or direct_bytes(e, ptrs, strides, n):
        return EMBER_OK
    for k in range(e.nin + 1):
        direct[k] = (e.out_native if k == 0 else e.native) and strides[k] == 1
        all_direct = all_direct and direct[k]
        if k > 0 and strides[k] == 0:
            # broadcast input: one value for the whole row, loaded once
            load_ct(e.ct, &bufs[k], ptrs[k], e.dtype, min(n, BUF_LEN), 0)
    if all_direct:
        step = n
    while i < n:
        m = min(step, n - i)
        for k in range(e.nin + 1):
            if direct[k]:
                blk[k] = ptrs[k] + i * (e.out_itemsize if k == 0 else e.itemsize)
            else:
                blk[k] = &bufs[k]
                if k > 0 and strides[k] != 0:
                    load_ct(e.ct, &bufs[k], ptrs[k] + i * strides[k] * e.itemsize, e.dtype,
                            m, strides[k])
        status = run_block(e, blk[0], blk[1], blk[2] if e.nin == 2 else NULL, m)
        if status != EMBER_OK:
            return status
        if not direct[0]:
            store_ct(e.ct, ptrs[0] + i * strides[0] * e.out_itemsize, e.out_dtype, &bufs[0],
                     m, strides[0])
        i += m
    return EMBER_OK


# 1 when `v` is row-major contiguous over out's shape, 0 when it broadcasts one element
# (stride 0 wherever out's size is not 1), else -1; numel[0] = out's element count
cdef inline int64_t flat_stride(const ember_view *v, const ember_view *out,
                                int64_t *numel) noexcept nogil:
    cdef int64_t n = 1
    cdef bint contiguous = True, scalar = True
    cdef int d
    if v.ndim != out.ndim or out.ndim > EMBER_MAX_DIM:
        return -1
    for d in range(out.ndim - 1, -1, -1):
        if v.sizes[d] != out.sizes[d] or out.sizes[d] < 0:
            return -1
        if out.sizes[d] != 1:
            contiguous = contiguous and v.strides[d] == n
            scalar = scalar and v.strides[d] == 0
        n *= out.sizes[d]
    numel[0] = n
    return 1 if contiguous else (0 if scalar else -1)


# the length of the block `v` repeats over out: out's element count when v is contiguous,
# the count of its trailing dims when it is contiguous there and broadcast (stride 0) over
# the leading ones (a bias row over a matrix), else -1
cdef inline int64_t repeated_block(const ember_view *v, const ember_view *out) noexcept nogil:
    cdef int64_t n = 1
    cdef bint inner = True
    cdef int d
    if v.ndim != out.ndim:
        return -1
    for d in range(out.ndim - 1, -1, -1):
        if v.sizes[d] != out.sizes[d]:
            return -1
        if out.sizes[d] == 1:
            continue
        if inner and v.strides[d] == n:
            n *= out.sizes[d]
        elif v.strides[d] == 0:
            inner = False
        else:
            return -1
    return n


# A small call into a contiguous out whose inputs are contiguous or repeat one contiguous
# block (x + bias): run_block block by block, without the iterator's row calls (an add of a
# [192] bias into [512, 192] floats took 2x the plain add of two matrices).  Its status, or
# -1 when the call is not one.
cdef int repeated_blocks(const EwCall *e, const ember_view **views, int64_t n) noexcept nogil:
    cdef int64_t block = n, b
    cdef int64_t bl[3]
    cdef char *ptrs[3]
    cdef int k, status
    for k in range(1, e.nin + 1):
        bl[k] = repeated_block(views[k], views[0])
        if bl[k] < 0 or (bl[k] < n and block < n and bl[k] != block):
            return -1
        if bl[k] < n:
            block = bl[k]
    if block == n or block < 16:
        return -1
    bl[0] = n
    for b in range(n // block):
        for k in range(e.nin + 1):
            ptrs[k] = views[k].data + (b * block * (e.out_itemsize if k == 0 else e.itemsize)
                                       if bl[k] == n else 0)
        status = run_block(e, ptrs[0], ptrs[1], ptrs[2] if e.nin == 2 else NULL, block)
        if status != EMBER_OK:
            return status
    return EMBER_OK


# views[0] is out (of e.out_dtype), the others the inputs, which must be of e.dtype
# The parallel cutoff counts elements of the cheapest kernel (an add); an op whose element
# costs several adds reaches it with fewer elements (measured, 1 thread, float32: exp 3x an
# add, log/tanh/sin/sigmoid 5-9x, pow and the libm functions 30-80x).
DEF COSTLY = 8

cdef inline int64_t op_cost(const EwCall *e) noexcept nogil:
    if e.nin == 1:
        if e.op == EMBER_UNARY_EXP or e.op == EMBER_UNARY_LOG or e.op == EMBER_UNARY_SIN \
                or e.op == EMBER_UNARY_COS or e.op == EMBER_UNARY_TANH \
                or e.op == EMBER_UNARY_SIGMOID or e.op == EMBER_UNARY_GELU \
                or EMBER_UNARY_EXP2 <= e.op <= EMBER_UNARY_COSH \
                or EMBER_UNARY_TAN <= e.op <= EMBER_UNARY_DIGAMMA:
            return COSTLY
        return 1
    if e.op == EMBER_BINARY_POW or e.op == EMBER_BINARY_ATAN2 \
            or e.op == EMBER_BINARY_GELU_BACKWARD:
        return COSTLY
    return 1


cdef int run_elementwise(ember_ctx *ctx, const char *name, EwCall *e,
                         const ember_view **views) noexcept nogil:
    cdef StridedIter it
    cdef char *ptrs[3]
    cdef int64_t st[3]
    cdef int k, status
    cdef int64_t n = 0, cost = op_cost(e)
    cdef bint contiguous = True
    for k in range(1, e.nin + 1):
        if views[k].dtype != e.dtype:
            return set_error(ctx, EMBER_ERR_TYPE, name, "operands must have out's dtype")
    e.ct = compute_type(e.dtype)
    e.native = is_native(e.dtype)
    e.itemsize = dtype_itemsize(e.dtype)
    e.out_itemsize = dtype_itemsize(e.out_dtype)
    e.out_native = e.native and e.out_dtype == e.dtype
    # small calls whose operands are each contiguous or a broadcast scalar are one row:
    # no iterator (the per-call cost of a 10-element add is a few tens of ns)
    cdef bint out_flat = e.itemsize != 0 and e.out_itemsize != 0 and \
        flat_stride(views[0], views[0], &n) == 1
    cdef bint serial = n * cost < parallel_cutoff()
    if out_flat and serial:
        for k in range(e.nin + 1):
            st[k] = flat_stride(views[k], views[0], &n)
            if st[k] < 0:
                break
            ptrs[k] = views[k].data
            contiguous = contiguous and st[k] == 1
        else:
            if e.out_native and contiguous:
                return run_block(e, ptrs[0], ptrs[1], ptrs[2] if e.nin == 2 else NULL, n)
            return ew_row(e, ptrs, st, n, 0)
    if out_flat and e.out_native and (serial or num_threads() <= 1):
        status = repeated_blocks(e, views, n)
        if status >= 0:
            return status
    status = iter_init(&it, ctx, name, e.nin + 1, views, True)
    if status != EMBER_OK:
        return status
    return iter_run(&it, ew_row, e, it.numel * cost)


# which dtypes an op takes (as PyTorch: the op table's); bool computes in int64 and stores
# != 0, so add is logical or and mul logical and
cdef inline bint unary_supported(int op, int dtype) noexcept nogil:
    return (ember_unary_dtypes[op] >> dtype) & 1


cdef inline bint binary_supported(int op, int dtype) noexcept nogil:
    return (ember_binary_dtypes[op] >> dtype) & 1


cdef int unary_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                      const ember_view *a) noexcept nogil:
    cdef EwCall e
    cdef const ember_view *views[2]
    if op < 0 or op >= EMBER_UNARY_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "unary", "unknown op code")
    if not unary_supported(op, out.dtype):
        return error_dtype(ctx, ember_unary_names[op], out.dtype)
    # bitwise_not on bool: logical not (of the 0/1 compute values)
    e.op = OP_LOGICAL_NOT if out.dtype == EMBER_BOOL else op
    e.nin = 1
    e.dtype = e.out_dtype = out.dtype
    views[0] = out
    views[1] = a
    return run_elementwise(ctx, ember_unary_names[op], &e, views)


cdef int binary_kernel(ember_ctx *ctx, int32_t op, const ember_view *out,
                       const ember_view *a, const ember_view *b) noexcept nogil:
    cdef EwCall e
    cdef const ember_view *views[3]
    cdef int status
    if op < 0 or op >= EMBER_BINARY_COUNT:
        return set_error(ctx, EMBER_ERR_NOT_IMPLEMENTED, "binary", "unknown op code")
    if is_predicate(op):
        # any one input dtype, bool out
        if out.dtype != EMBER_BOOL:
            return set_error(ctx, EMBER_ERR_TYPE, ember_binary_names[op],
                             "out must have dtype bool")
        if a.dtype != b.dtype:
            return set_error(ctx, EMBER_ERR_TYPE, ember_binary_names[op],
                             "operands a and b must have the same dtype")
        e.dtype = a.dtype
    elif not binary_supported(op, out.dtype):
        return error_dtype(ctx, ember_binary_names[op], out.dtype)
    else:
        e.dtype = out.dtype
    e.out_dtype = out.dtype
    e.op = op
    e.nin = 2
    views[0] = out
    views[1] = a
    views[2] = b
    status = run_elementwise(ctx, ember_binary_names[op], &e, views)
    if status == EMBER_ERR_RUNTIME and (op == EMBER_BINARY_FMOD or op == EMBER_BINARY_REMAINDER
                                        or op == EMBER_BINARY_FLOOR_DIVIDE):
        return set_error(ctx, status, ember_binary_names[op], "ZeroDivisionError")
    return status


# -- where: out = cond ? a : b ------------------------------------------------------------
# No arithmetic: a, b and out share one dtype, so the chosen element is copied as an
# unsigned integer of the dtype's itemsize (1, 2, 4 or 8 bytes); cond is read as != 0.

ctypedef fused word_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t


cdef inline void where_loop(word_t *o, const uint8_t *c, const word_t *a, const word_t *b,
                            const int64_t *s, int64_t n) noexcept nogil:
    cdef int64_t i
    cdef int64_t so = s[0], sc = s[1], sa = s[2], sb = s[3]
    cdef word_t av, bv, mk
    if so == 1 and sc == 1 and sa == 1 and sb == 1:
        # contiguous: both sides read and blended through a bit mask (a ternary compiled
        # to a branch per element), so the loop vectorizes
        for i in range(n):
            mk = <word_t>0 - <word_t>(c[i] != 0)
            o[i] = (a[i] & mk) | (b[i] & ~mk)
    elif so == 1 and sc == 1 and sa == 1 and sb == 0:
        # a tensor or a scalar (relu's backward: where(y > 0, grad, 0)): the value in a
        # local, both sides read, so this vectorizes too (a branch per element mispredicts)
        bv = b[0]
        for i in range(n):
            mk = <word_t>0 - <word_t>(c[i] != 0)
            o[i] = (a[i] & mk) | (bv & ~mk)
    elif so == 1 and sc == 1 and sa == 0 and sb == 1:
        av = a[0]
        for i in range(n):
            mk = <word_t>0 - <word_t>(c[i] != 0)
            o[i] = (av & mk) | (b[i] & ~mk)
    elif so == 1 and sc == 1 and sa == 0:
        for i in range(n):
            o[i] = a[0] if c[i] != 0 else b[i * sb]
    elif so == 1 and sc == 1 and sb == 0:
        for i in range(n):
            o[i] = a[i * sa] if c[i] != 0 else b[0]
    else:
        for i in range(n):
            o[i * so] = a[i * sa] if c[i * sc] != 0 else b[i * sb]


cdef int where_row(void *arg, char **ptrs, const int64_t *strides, int64_t n,
                   int64_t index) noexcept nogil:
    cdef int64_t itemsize = (<const int64_t *>arg)[0]
    cdef const uint8_t *c = <const uint8_t *>ptrs[1]
    if itemsize == 1:
        where_loop(<uint8_t *>ptrs[0], c, <const uint8_t *>ptrs[2],
                   <const uint8_t *>ptrs[3], strides, n)
    elif itemsize == 2:
        where_loop(<uint16_t *>ptrs[0], c, <const uint16_t *>ptrs[2],
                   <const uint16_t *>ptrs[3], strides, n)
    elif itemsize == 4:
        where_loop(<uint32_t *>ptrs[0], c, <const uint32_t *>ptrs[2],
                   <const uint32_t *>ptrs[3], strides, n)
    else:
        where_loop(<uint64_t *>ptrs[0], c, <const uint64_t *>ptrs[2],
                   <const uint64_t *>ptrs[3], strides, n)
    return EMBER_OK


cdef int where_kernel(ember_ctx *ctx, const ember_view *out, const ember_view *cond,
                      const ember_view *a, const ember_view *b) noexcept nogil:
    cdef StridedIter it
    cdef const ember_view *views[4]
    cdef char *ptrs[4]
    cdef int64_t st[4]
    cdef int64_t itemsize, n = 0
    cdef int k, status
    if out == NULL or cond == NULL or a == NULL or b == NULL:
        return set_error(ctx, EMBER_ERR_VALUE, "where", "missing operand")
    itemsize = dtype_itemsize(out.dtype)
    if itemsize == 0:
        return set_error(ctx, EMBER_ERR_TYPE, "where", "unknown dtype code")
    if cond.dtype != EMBER_BOOL:
        return set_error(ctx, EMBER_ERR_TYPE, "where", "cond must have dtype bool")
    if a.dtype != out.dtype or b.dtype != out.dtype:
        return set_error(ctx, EMBER_ERR_TYPE, "where",
                         "operands a and b must have out's dtype")
    views[0] = out
    views[1] = cond
    views[2] = a
    views[3] = b
    # small calls whose operands are each contiguous or a broadcast scalar: one row, no
    # iterator; everything else (and large calls, which may run in parallel) iterates
    if flat_stride(out, out, &n) == 1 and n < parallel_cutoff():
        for k in range(4):
            st[k] = flat_stride(views[k], out, &n)
            if st[k] < 0:
                break
            ptrs[k] = views[k].data
        else:
            if n > 0:
                where_row(&itemsize, ptrs, st, n, 0)
            return EMBER_OK
    status = iter_init(&it, ctx, "where", 4, views, True)
    if status != EMBER_OK:
        return status
    return iter_run(&it, where_row, &itemsize, it.numel)
