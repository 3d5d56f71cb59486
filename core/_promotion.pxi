# Type promotion (PyTorch's result_type tiers) and Python scalars as kernel operands.

cdef bint other_scalar(object x):
    """Numbers that are not Python's: NumPy scalars (PyTorch reads them as the Python
    number of their kind) and symbolic sizes (ember.SymInt/SymFloat, which act as scalars
    where ops meet them: only fake tensors of dynamic-shape captures get that far)."""
    name = type(x).__name__
    if name in ("SymInt", "SymFloat"):
        return True
    return type(x).__module__ == "numpy" and isinstance(x, numpy().generic) and \
        x.dtype.kind in "biufc"


cdef dtype scalar_dtype(object x, str op):
    """The dtype a Python scalar takes part in promotion as (its 'wrapped' tier); a NumPy
    scalar as the Python number of its kind."""
    if isinstance(x, bool):
        return _dtypes.bool
    if isinstance(x, int):
        return _dtypes.int64
    if isinstance(x, float):
        return <dtype>_state.default_dtype()
    if isinstance(x, complex):
        return default_complex_dtype()
    if other_scalar(x) and type(x).__module__ == "numpy":
        return scalar_dtype(x.item(), op)
    raise TypeError(f"{op}(): unsupported operand type {type(x).__name__}")


cdef dtype default_complex_dtype():
    """PyTorch's: complex128 when the default dtype is float64, else complex64."""
    return _dtypes.complex128 if (<dtype>_state.default_dtype()).code == EMBER_FLOAT64 \
        else _dtypes.complex64


cdef dtype result_type2(object a, object b, str op):
    """PyTorch's result_type over two operands (tensors or Python scalars)."""
    cdef dtype dim_r = None, zero_r = None, wrapped = None, d
    if isinstance(a, TensorBase) and isinstance(b, TensorBase) and \
            (<TensorBase>a)._dtype is (<TensorBase>b)._dtype:
        return (<TensorBase>a)._dtype      # the common case: nothing to promote
    for x in (a, b):
        if isinstance(x, TensorBase):
            d = (<TensorBase>x)._dtype
            if (<TensorBase>x)._ndim:
                dim_r = d if dim_r is None else promote(dim_r, d)
            else:
                zero_r = d if zero_r is None else promote(zero_r, d)
        else:
            d = scalar_dtype(x, op)
            wrapped = d if wrapped is None else promote(wrapped, d)
    return combine_categories(dim_r, combine_categories(zero_r, wrapped))


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` produces."""
    for x, name in ((tensor1, "tensor1"), (tensor2, "tensor2")):
        if not isinstance(x, TensorBase) and not is_scalar(x):
            from ember.core._errors import _arg_type_message
            raise TypeError(_arg_type_message(x, "result_type", name,
                                              expected="Tensor or Number"))
    return result_type2(tensor1, tensor2, "result_type")


cdef bint can_cast(dtype src, dtype dst) noexcept:
    """PyTorch's canCast: no float -> integral, no non-bool -> bool."""
    if src.category == CAT_FLOATING and dst.category == CAT_INTEGRAL:
        return False
    if dst.code == EMBER_BOOL and src.code != EMBER_BOOL:
        return False
    if src.is_complex and not dst.is_complex:
        return False
    return True


# PyTorch's names of the C types in "value cannot be converted to type ... without overflow"
_C_TYPE_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
                 "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t",
                 "uint64": "uint64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "float32": "float"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38}


cdef int check_scalar_range(object value, dtype dt, str op) except -1:
    """PyTorch's checked conversion of a fill value (fill_, full, masked_fill, where): an
    integer type takes [min, max] (an unsigned one also -max .. -1, which wraps), a float
    type any finite value up to its largest, and inf and NaN; bool and the 64-bit floats
    take anything.  (`where` does not check the half types.)"""
    cdef type kind = type(value)
    cdef double f
    if kind is float:                   # the common fills (0, 1, -inf, a learning rate)
        f = value
        if -128.0 <= f <= 127.0 or f != f:
            return 0
    elif kind is int and -128 <= value <= 127:
        return 0
    if dt.code == EMBER_BOOL or dt.is_complex or isinstance(value, (bool, complex)):
        return 0
    name = dt.name
    if dt.category == CAT_FLOATING:
        if op == "where" and name in ("float16", "bfloat16"):
            return 0                    # PyTorch's where checks no half type: inf
        top = _FLOAT_MAX.get(name)
        if top is None:
            return 0
        f = float(value)
        if f != f or f == float("inf") or f == float("-inf") or -top <= f <= top:
            return 0
    else:
        if isinstance(value, float) and (value != value or value in (float("inf"),
                                                                     float("-inf"))):
            pass                                # raised below, as write_scalar does
        else:
            v = int(value)
            bits = 8 * dt.itemsize
            if name.startswith("uint"):
                if -(2 ** bits - 1) <= v < 2 ** bits:
                    return 0
            elif -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
                return 0
    raise RuntimeError(f"{op}: value cannot be converted to type "
                       f"{_C_TYPE_NAMES.get(name, name)} without overflow")


cdef int write_scalar(object value, dtype dt, scalar_buf* buf, str op) except -1:
    """Store a Python number as one element of ``dt`` (what kernels read for scalars)."""
    cdef int code = dt.code
    cdef type kind = type(value)
    if kind is not float and kind is not int and kind is not bool and \
            kind.__module__ == "numpy":
        value = value.item()                    # a NumPy scalar: its Python number
    cdef double f
    cdef int64_t i
    if code == EMBER_BOOL:
        buf.u8 = 1 if value else 0
    elif dt.is_complex:
        z = complex(value)
        if code == EMBER_COMPLEX64:
            buf.c64[0] = <float>z.real
            buf.c64[1] = <float>z.imag
        else:
            buf.c128[0] = z.real
            buf.c128[1] = z.imag
    elif dt.category == CAT_FLOATING:
        f = <double>value
        if code == EMBER_FLOAT64:
            buf.f64 = f
        elif code == EMBER_FLOAT32:
            buf.f32 = <float>f
        elif code == EMBER_FLOAT16:
            buf.u16 = ember_float_to_half(<float>f)
        else:
            buf.u16 = ember_float_to_bf16(<float>f)
    else:
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise RuntimeError(f"{op}: value cannot be converted to type {dt.name} "
                                   f"without overflow")
            value = int(value)
        if code == EMBER_UINT64 and value >= 2 ** 63:
            if value >= 2 ** 64:
                raise RuntimeError(f"{op}: value cannot be converted to type {dt.name} "
                                   f"without overflow")
            buf.u64 = <uint64_t>value
            return 0
        try:
            i = value
        except OverflowError:
            raise RuntimeError(f"{op}: value cannot be converted to type {dt.name} without "
                               "overflow") from None
        if code == EMBER_INT64:
            buf.i64 = i
        elif code == EMBER_INT32:
            buf.i32 = <int32_t>i
        elif code == EMBER_INT16:
            buf.i16 = <int16_t>i
        elif code == EMBER_INT8:
            buf.i8 = <int8_t>i
        elif code == EMBER_UINT16:
            buf.u16 = <uint16_t>i
        elif code == EMBER_UINT32:
            buf.u32 = <uint32_t>i
        elif code == EMBER_UINT64:
            buf.u64 = <uint64_t>i
        else:
            buf.u8 = <uint8_t>i
    return 0


cdef object real_number(object v, str ctype):
    """int()/float() of a complex element: its real part when the imaginary one is 0, else
    PyTorch's RuntimeError."""
    if type(v) is complex:
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return v.real
    return v


cdef object read_scalar(const char* p, int code):
    """One element at ``p`` as a Python number."""
    if code == EMBER_COMPLEX64:
        return complex((<float*>p)[0], (<float*>p)[1])
    if code == EMBER_COMPLEX128:
        return complex((<double*>p)[0], (<double*>p)[1])
    if code == EMBER_FLOAT32:
        return (<float*>p)[0]
    if code == EMBER_FLOAT64:
        return (<double*>p)[0]
    if code == EMBER_FLOAT16:
        return ember_half_to_float((<uint16_t*>p)[0])
    if code == EMBER_BFLOAT16:
        return ember_bf16_to_float((<uint16_t*>p)[0])
    if code == EMBER_INT64:
        return (<int64_t*>p)[0]
    if code == EMBER_INT32:
        return (<int32_t*>p)[0]
    if code == EMBER_INT16:
        return (<int16_t*>p)[0]
    if code == EMBER_INT8:
        return (<int8_t*>p)[0]
    if code == EMBER_UINT8:
        return (<uint8_t*>p)[0]
    if code == EMBER_UINT16:
        return (<uint16_t*>p)[0]
    if code == EMBER_UINT32:
        return (<uint32_t*>p)[0]
    if code == EMBER_UINT64:
        return (<uint64_t*>p)[0]
    return (<uint8_t*>p)[0] != 0


cdef void scalar_view(ember_view* v, int ndim, const int64_t* sizes, scalar_buf* buf,
                      int code) noexcept:
    """A broadcast view of one element in host memory: every stride 0."""
    v.data = <char*>buf
    v.ndim = ndim
    v.dtype = code
    v.flags = EMBER_VIEW_HOST_SCALAR     # host memory: a device reads the value on the host
    v.reserved = 0
    cdef int i
    for i in range(ndim):
        v.sizes[i] = sizes[i]
        v.strides[i] = 0


cdef dict _SCALAR_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


cdef str st_name(dtype d):
    """PyTorch's ScalarType name of d, as its error messages spell it ("Float")."""
    return _SCALAR_TYPE_NAMES[d.name]


def _st_name(dtype d):
    """st_name for the Python modules (their error messages)."""
    return st_name(d)
