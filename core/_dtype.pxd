# dtypes as objects, and PyTorch's type promotion.  Codes are abi.h's EMBER_<dtype>.

from ember_abi cimport (
    EMBER_BFLOAT16, EMBER_BOOL, EMBER_FLOAT16, EMBER_FLOAT32, EMBER_FLOAT64, EMBER_INT8,
    EMBER_INT16, EMBER_INT32, EMBER_INT64, EMBER_UINT8, EMBER_UINT16, EMBER_UINT32,
    EMBER_UINT64)

# categories, ordered: a higher category wins in combine_categories
cdef enum:
    CAT_BOOL = 0
    CAT_INTEGRAL = 1
    CAT_FLOATING = 2
    CAT_COMPLEX = 3

# PyTorch's ScalarType numbers for ComplexFloat/ComplexDouble.  Not in abi.h: kernels never
# receive them (the core computes complex ops over float views, see _complex.pxi).
cdef enum:
    EMBER_COMPLEX64 = 9
    EMBER_COMPLEX128 = 10


cdef class dtype:
    cdef readonly int code              # EMBER_<dtype>
    cdef readonly int itemsize
    cdef readonly bint is_floating_point
    cdef readonly bint is_signed
    cdef readonly bint is_complex
    cdef readonly int category          # CAT_*
    cdef readonly str name              # "float32"
    cdef object _np_dtype               # numpy.dtype, made on first use (NumPy loads lazily)
    cdef str _np_name                   # its name, or None (bfloat16: NumPy has none)


cdef dtype dtype_from_code(int code)                 # every code of abi.h; None otherwise
cdef dtype promote(dtype a, dtype b)                 # PyTorch's promote_types table
# PyTorch's combine_categories(higher, lower) for result_type's tiers; None = undefined
cdef dtype combine_categories(dtype higher, dtype lower)
cpdef dtype as_dtype(object obj, str op=*, str arg=*)  # ember/NumPy dtype or float/int/bool
cpdef dtype dtype_from_numpy(object np_dtype)        # TypeError naming unsupported ones
