# cython: language_level=3
"""ember's dtypes: singleton `dtype` objects and PyTorch's type-promotion rules.

A dtype's `code` is abi.h's EMBER_<dtype> (= PyTorch's ScalarType numbering), which is
what kernels receive.  Promotion follows PyTorch's `promote_types` table, never NumPy's
`result_type` (NumPy 2 promotes e.g. int8 + uint8 and float16 + bfloat16 differently).
"""
from cpython.ref cimport PyObject

import sys

# The promotion table, written once, in PyTorch's layout (c10/core/ScalarType.cpp) for
# ember's fifteen dtypes.  It is static C data: `promote` is two array loads, no Python.
# Rows/columns are in EMBER_IDX_* order; codes are sparse (0..29), hence the index map.
# The unsigned 16/32/64-bit types promote only with themselves and the floating types, as
# in PyTorch; -1 marks the pairs PyTorch refuses.
cdef extern from *:
    """
    #define EMBER_NDTYPES 15
    #define EMBER_NCODES 30
    #define u1 EMBER_UINT8
    #define i1 EMBER_INT8
    #define i2 EMBER_INT16
    #define i4 EMBER_INT32
    #define i8 EMBER_INT64
    #define f2 EMBER_FLOAT16
    #define f4 EMBER_FLOAT32
    #define f8 EMBER_FLOAT64
    #define b1 EMBER_BOOL
    #define bf EMBER_BFLOAT16
    #define c8 9
    #define c16 10
    #define U2 EMBER_UINT16
    #define U4 EMBER_UINT32
    #define U8 EMBER_UINT64
    #define no -1
    /* code -> row/column of the table below; -1 for codes ember does not have */
    static const signed char ember_dtype_index[EMBER_NCODES] = {
        /* 0 u1 */ 0, /* 1 i1 */ 1, /* 2 i2 */ 2, /* 3 i4 */ 3, /* 4 i8 */ 4,
        /* 5 f2 */ 5, /* 6 f4 */ 6, /* 7 f8 */ 7, -1, /* 9 c8 */ 10, /* 10 c16 */ 11,
        /* 11 b1 */ 8,
        -1, -1, -1, /* 15 bf */ 9,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        /* 27 U2 */ 12, /* 28 U4 */ 13, /* 29 U8 */ 14
    };
    static const signed char ember_promote_table[EMBER_NDTYPES][EMBER_NDTYPES] = {
        /*        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf  c8   c16  U2  U4  U8 */
        /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf, c8,  c16, no, no, no},
        /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf, c8,  c16, no, no, no},
        /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf, c8,  c16, no, no, no},
        /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf, c8,  c16, no, no, no},
        /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf, c8,  c16, no, no, no},
        /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4, c8,  c16, f2, f2, f2},
        /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4, c8,  c16, f4, f4, f4},
        /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16, f8, f8, f8},
        /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf, c8,  c16, no, no, no},
        /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf, c8,  c16, bf, bf, bf},
        /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c16, c8, c8, c8, c16, no, no, no},
        /* c16 */ {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, no, no, no},
        /* U2 */ {no, no, no, no, no, f2, f4, f8, no, bf, no,  no,  U2, no, no},
        /* U4 */ {no, no, no, no, no, f2, f4, f8, no, bf, no,  no,  no, U4, no},
        /* U8 */ {no, no, no, no, no, f2, f4, f8, no, bf, no,  no,  no, no, U8},
    };
    #undef u1
    #undef i1
    #undef i2
    #undef i4
    #undef i8
    #undef f2
    #undef f4
    #undef f8
    #undef b1
    #undef bf
    #undef c8
    #undef c16
    #undef U2
    #undef U4
    #undef U8
    #undef no
    """
    enum:
        EMBER_NDTYPES
        EMBER_NCODES
    const signed char ember_dtype_index[]
    const signed char ember_promote_table[][15]


# code -> dtype, borrowed references (the objects live in `all_dtypes` for ever)
cdef PyObject* _by_code[EMBER_NCODES]


cdef class dtype:
    """A tensor element type.  One instance per type: compare with `is` or `==`."""

    def __init__(self, *args, **kwargs):
        # like torch.dtype: the ten instances are made by this module only
        raise TypeError("cannot create 'ember.dtype' instances")

    def __repr__(self):
        return "ember." + self.name

    def __str__(self):
        return "ember." + self.name

    # Singletons: pickle stores a global name; `obj.__module__` (this module) has it,
    # so unpickling gives back the very same object (as torch.dtype does).
    def __reduce__(self):
        return self.name

    def __copy__(self):
        return self

    @property
    def np_dtype(self):
        """The numpy.dtype of this dtype, or None (bfloat16 has none)."""
        if self._np_dtype is None and self._np_name is not None:
            import numpy
            self._np_dtype = numpy.dtype(self._np_name)
        return self._np_dtype

    def __deepcopy__(self, memo):
        return self

    def to_real(self):
        """The real dtype of this one's components (complex64 -> float32); itself if real."""
        if self.code == EMBER_COMPLEX64:
            return float32
        if self.code == EMBER_COMPLEX128:
            return float64
        return self

    def to_complex(self):
        """The complex dtype with this dtype's precision (float32 -> complex64)."""
        if self.category == CAT_COMPLEX:
            return self
        if self.code == EMBER_FLOAT64:
            return complex128
        if self.code == EMBER_FLOAT32 or self.code == EMBER_BFLOAT16:
            return complex64                # bfloat16 has float32's range, as c10 maps it
        if self.code == EMBER_FLOAT16:      # PyTorch's ComplexHalf ember does not have
            raise NotImplementedError(f"ember has no ComplexHalf dtype (complex of "
                                      f"{self.name})")
        raise RuntimeError(f"Unknown Complex ScalarType for {_TORCH_NAMES[self.name]}")


cdef extern from "Python.h":
    ctypedef struct PyTypeObject:
        const char* tp_name
    void PyType_Modified(PyTypeObject*)

# pickles, reprs and safe-globals lists name the type where the user meets it (as torch.dtype)
(<PyTypeObject*>dtype).tp_name = b"ember.dtype"
PyType_Modified(<PyTypeObject*>dtype)


cdef dtype _make(int code, int itemsize, int category, bint is_signed, str name, np_type):
    cdef dtype d = dtype.__new__(dtype)     # skips __init__, which refuses
    d.code = code
    d.itemsize = itemsize
    d.category = category
    d.is_floating_point = category == CAT_FLOATING
    d.is_signed = is_signed
    d.is_complex = category == CAT_COMPLEX
    d.name = name
    d._np_name = np_type       # NumPy's name for it; the numpy.dtype is made on first use
    _by_code[code] = <PyObject*>d
    return d


# PyTorch: bool and uint8 are unsigned; every float is signed.
float32 = _make(EMBER_FLOAT32, 4, CAT_FLOATING, True, "float32", "float32")
float64 = _make(EMBER_FLOAT64, 8, CAT_FLOATING, True, "float64", "float64")
float16 = _make(EMBER_FLOAT16, 2, CAT_FLOATING, True, "float16", "float16")
bfloat16 = _make(EMBER_BFLOAT16, 2, CAT_FLOATING, True, "bfloat16", None)  # NumPy has none
int8 = _make(EMBER_INT8, 1, CAT_INTEGRAL, True, "int8", "int8")
int16 = _make(EMBER_INT16, 2, CAT_INTEGRAL, True, "int16", "int16")
int32 = _make(EMBER_INT32, 4, CAT_INTEGRAL, True, "int32", "int32")
int64 = _make(EMBER_INT64, 8, CAT_INTEGRAL, True, "int64", "int64")
uint8 = _make(EMBER_UINT8, 1, CAT_INTEGRAL, False, "uint8", "uint8")
cdef dtype _bool = _make(EMBER_BOOL, 1, CAT_BOOL, False, "bool", "bool")
complex64 = _make(EMBER_COMPLEX64, 8, CAT_COMPLEX, True, "complex64", "complex64")
complex128 = _make(EMBER_COMPLEX128, 16, CAT_COMPLEX, True, "complex128", "complex128")
cdef dtype _float64 = float64, _int64 = int64   # typed handles for as_dtype's fast paths
# PyTorch's "barebones" unsigned types: few ops (see abi.h), so not in the op sweeps
uint16 = _make(EMBER_UINT16, 2, CAT_INTEGRAL, False, "uint16", "uint16")
uint32 = _make(EMBER_UINT32, 4, CAT_INTEGRAL, False, "uint32", "uint32")
uint64 = _make(EMBER_UINT64, 8, CAT_INTEGRAL, False, "uint64", "uint64")
limited_dtypes = (uint16, uint32, uint64)

# the real dtypes (what op sweeps iterate over); the complex ones separately
all_dtypes = (float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, _bool)
complex_dtypes = (complex64, complex128)

# Every public name, aliases included (PyTorch's: float, double, half, long, int, short),
# for the façade to re-export.  `bool`, `int`, `float`, ... would shadow builtins (and some
# are C keywords in Cython), so they enter the module namespace through globals() only;
# code in this module still sees the builtins.
_dtype_by_name = {d.name: d for d in all_dtypes + complex_dtypes + limited_dtypes}
_dtype_by_name.update(float=float32, double=float64, half=float16, long=int64, int=int32,
                      short=int16, cfloat=complex64, cdouble=complex128)
globals().update(_dtype_by_name)

# Canonical names only, for as_dtype("float32"): aliases are ambiguous as strings
# (NumPy's "float"/"int" mean float64/int64, ember's float/int mean float32/int32).
cdef dict _dtype_by_canonical_name = {d.name: d for d in all_dtypes + complex_dtypes
                                      + limited_dtypes}

# NumPy (kind, itemsize) -> dtype.  Keyed by kind and size, not by scalar type, so that
# C-named duplicates (np.longlong, np.intc, ...) and non-native byte orders map too;
# byte order is the caller's business (from_numpy rejects it, tensor() converts).
cdef dict _dtype_by_np_kind = {
    ("f", 8): float64, ("f", 4): float32, ("f", 2): float16,
    ("i", 8): int64, ("i", 4): int32, ("i", 2): int16, ("i", 1): int8,
    ("u", 1): uint8, ("b", 1): _bool, ("c", 8): complex64, ("c", 16): complex128,
    ("u", 2): uint16, ("u", 4): uint32, ("u", 8): uint64,
}

_NUMPY_SUPPORTED = ("The only supported types are: float64, float32, float16, complex64, "
                    "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                    "and bool.")


_TORCH_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
                "uint64": "UInt64"}


cdef dtype dtype_from_code(int code):
    if code < 0 or code >= EMBER_NCODES or _by_code[code] == NULL:
        return None
    return <dtype>_by_code[code]


cdef dtype promote(dtype a, dtype b):
    # None plays PyTorch's ScalarType::Undefined: promoteTypes(ud, x) is ud
    if a is None or b is None:
        return None
    if a is b:
        return a
    cdef int code = ember_promote_table[ember_dtype_index[a.code]][ember_dtype_index[b.code]]
    if code < 0:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {_TORCH_NAMES[a.name]} and "
                           f"{_TORCH_NAMES[b.name]}")
    return <dtype>_by_code[code]


cdef inline dtype _promote_skip_undefined(dtype a, dtype b):
    if a is None:
        return b
    if b is None:
        return a
    return promote(a, b)


cdef dtype combine_categories(dtype higher, dtype lower):
    # c10's ResultType.cpp: result_type ranks operands in tiers (dim tensors > zero-dim
    # tensors > wrapped Python scalars); a lower tier only matters if it is of a higher
    # category: int32 tensor + 2.5 -> float, uint8 tensor + 300 -> uint8,
    # bool tensor + 1 -> int64.  None is Undefined (no operand in that tier).
    if higher is None:
        return lower
    if higher.category >= CAT_FLOATING:
        if lower is not None and lower.category == CAT_COMPLEX and higher.category != CAT_COMPLEX:
            return higher.to_complex()      # float32 tensor * 1j -> complex64
        return higher
    if lower is not None and lower.category == CAT_COMPLEX:
        return lower                        # int tensor * 1j -> the scalar's complex dtype
    if higher.category == CAT_BOOL or (lower is not None and lower.category == CAT_FLOATING):
        return _promote_skip_undefined(higher, lower)
    return higher


cdef str _type_error(str op, str arg, str what):
    prefix = f"{op}(): " if op else ""
    return f"{prefix}argument '{arg}' must be ember.dtype, not {what}"


cpdef dtype as_dtype(object obj, str op="", str arg="dtype"):
    """An ember dtype from an ember dtype, a NumPy dtype / scalar type, a canonical name
    ("float32"), or Python's float/int/bool/complex (float64/int64/bool/complex128, as
    `Tensor.to(float)`)."""
    if type(obj) is dtype:
        return <dtype>obj
    # Python's types: PyTorch maps them to double, long and bool
    if obj is float:
        return _float64
    if obj is int:
        return _int64
    if obj is bool:
        return _bool
    if obj is complex:
        return <dtype>_by_code[EMBER_COMPLEX128]
    if isinstance(obj, str):
        d = _dtype_by_canonical_name.get(obj)
        if d is None:
            raise TypeError(_type_error(op, arg, f"str {obj!r}"))
        return <dtype>d
    np = sys.modules.get("numpy")     # a NumPy dtype implies NumPy is already loaded
    if np is not None and (isinstance(obj, np.dtype)
                           or (isinstance(obj, type) and issubclass(obj, np.generic))):
        try:
            np_dt = np.dtype(obj)
        except TypeError:               # abstract scalar types: np.floating, np.number
            raise TypeError(_type_error(op, arg, f"numpy.{obj.__name__}")) from None
        d = _dtype_by_np_kind.get((np_dt.kind, np_dt.itemsize))
        if d is None:
            raise TypeError(_type_error(op, arg, f"numpy.{np_dt.type.__name__}") +
                            " (ember has no such dtype)")
        return <dtype>d
    raise TypeError(_type_error(op, arg, type(obj).__name__))


cpdef dtype dtype_from_numpy(object np_dtype):
    """The ember dtype of a NumPy dtype (or of anything np.dtype() accepts)."""
    import numpy as np
    if not isinstance(np_dtype, np.dtype):
        np_dtype = np.dtype(np_dtype)
    d = _dtype_by_np_kind.get((np_dtype.kind, np_dtype.itemsize))
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. "
                        + _NUMPY_SUPPORTED)
    return <dtype>d


cpdef dtype promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both `type1` and `type2` convert to."""
    if type(type1) is not dtype:
        raise TypeError("promote_types(): argument 'type1' (position 1) must be ember.dtype, "
                        f"not {type(type1).__name__}")
    if type(type2) is not dtype:
        raise TypeError("promote_types(): argument 'type2' (position 2) must be ember.dtype, "
                        f"not {type(type2).__name__}")
    return promote(<dtype>type1, <dtype>type2)


# Python-visible handles on the cdef functions, for tests only
def _dtype_from_code(int code):
    return dtype_from_code(code)


def _combine_categories(higher, lower):
    return combine_categories(higher, lower)
