# The C-level vocabulary shared by the Tensor module (core/_tensor.pyx) and the op modules
# split from it (core/_conv_pool.pyx, ...): the kernel ABI, dtypes, devices, dispatch, and
# the compile-time constants.  Each includes this file first.
cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_DECREF, PyObject
from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t)

from ember_abi cimport *
from libc.string cimport memcmp, memcpy, memset

from ember.core cimport _state
from ember.core cimport _fallback
from ember.core._device cimport (
    Backend, as_device, backend_for, cpu_device, device, ember_kernel_table, resolve_index)
from ember.core._dispatch cimport (
    BACKEND_MASK, DEFAULT_TENSOR_KEYS, DispatchKey, Op, highest_key, SAVE_INPUTS, SAVE_RESULT,
    SAVE_FIRST, WRITES_SELF, SELF_FOR_OTHERS, OTHER_FOR_SELF,
)
from ember.core._dtype cimport (
    CAT_COMPLEX, CAT_FLOATING, CAT_INTEGRAL, EMBER_BFLOAT16, EMBER_COMPLEX64, EMBER_COMPLEX128, EMBER_BOOL, EMBER_FLOAT16, EMBER_FLOAT32,
    EMBER_FLOAT64, EMBER_INT8, EMBER_INT16, EMBER_INT32, EMBER_INT64, EMBER_UINT8,
    EMBER_UINT16, EMBER_UINT32, EMBER_UINT64, as_dtype, combine_categories, dtype, promote)
from ember.core._dtype cimport dtype as DType

from ember.core import _dtype as _dtypes
from ember.core import determinism as _determinism
from ember.core import optable as _optable
from ember.core import shape_rules as _rules
from ember.core._dispatch import all_ops, get_op
from ember.core._size import Size

# overflow-checked size arithmetic (GCC/Clang builtins)
cdef extern from *:
    bint mul_overflow "__builtin_mul_overflow"(int64_t a, int64_t b, int64_t* out) nogil
    bint __builtin_add_overflow(int64_t a, int64_t b, int64_t* out) nogil

DEF MAX_DIM = 16
DEF GIL_CUTOFF = 32768      # below this many elements, keep the GIL (releasing costs more)

# a tensor's requires-grad bit and vmap-wrapper bit (constants: each module its own copy)
cdef uint64_t AUTOGRAD_BIT = <uint64_t>1 << DispatchKey.Autograd
cdef uint64_t BATCHED_BIT = <uint64_t>1 << DispatchKey.Batched

# op families: which primitive of the kernel ABI an op runs on
cdef enum:
    FAMILY_VIEW = 0
    FAMILY_UNARY = 1
    FAMILY_BINARY = 2
    FAMILY_REDUCE = 3
    FAMILY_MATMUL = 4
    FAMILY_COPY = 5
    FAMILY_FILL = 6
    FAMILY_RANDOM = 7
    FAMILY_WHERE = 8
    FAMILY_SCAN = 9
    FAMILY_INDEX = 10
    FAMILY_SEARCH = 11
    FAMILY_SOFTMAX = 12
    # ABI 5, norms and losses: the optional `norm` and `nll` entries
    FAMILY_NORM = 13
    FAMILY_NLL = 14
    FAMILY_CONV = 15        # conv and pooling (optional `conv`/`pool` entries)
    FAMILY_POOL = 16
    FAMILY_ACTIVATION = 17  # pointwise activations (optional `activation` entry)
