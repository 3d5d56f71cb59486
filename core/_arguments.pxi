# The argument vocabulary every op shares: a tensor argument, a dim, a shape, one device,
# NumPy's keyword names.

def _numpy_names(str op, object dim, object keepdim, object axis, object keepdims,
                 object dim_default=None):
    """PyTorch's parser takes NumPy's names for two arguments: ``axis`` for ``dim`` and
    ``keepdims`` for ``keepdim``.  Returns (dim, keepdim)."""
    if axis is not None:
        if dim is not dim_default:
            raise TypeError(f"{op}() got multiple values for argument 'dim'")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, keepdim


cdef tuple sized(tuple args, dict kw, str op, str name, str alt=None):
    """A method's ``*args`` sizes (dims), or PyTorch's keyword form of them: ``shape=`` /
    ``size=`` / ``dims=`` (``alt``: view's ``dtype=``), a sequence or one value."""
    if not kw:
        return args
    for key in kw:
        if key != name and key != alt:
            raise TypeError(f"{op}() got an unexpected keyword argument '{key}'")
    if args or len(kw) > 1:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    v = kw[name] if name in kw else kw[alt]
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


cdef object dim_of(str op, object dim, object axis, object default):
    """``dim``, or NumPy's ``axis`` in its place (a required dim when ``default`` is None):
    the methods' form of _numpy_names/_dim_or_axis, one C call when no axis is given."""
    if axis is None and dim is not None:
        return dim
    if default is None:
        return _dim_or_axis(op, dim, axis)
    return _numpy_names(op, dim, None, axis, None, default)[0]


def _dim_or_axis(str op, object dim, object axis):
    """A required ``dim`` given as ``dim`` or as NumPy's ``axis`` (PyTorch's parser takes
    either)."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}() got multiple values for argument 'dim'")
        return axis
    if dim is None:
        raise TypeError(f"{op}() missing 1 required positional argument: 'dim'")
    return dim


cdef int wrap_dim(object dim, int ndim, str op) except -100:
    """Normalise a possibly negative dim; IndexError like PyTorch's when out of range."""
    cdef int64_t d
    try:
        d = dim.__index__()
    except AttributeError:
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    cdef int n = ndim if ndim > 0 else 1
    if d < -n or d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {d})")
    return <int>(d + n if d < 0 else d)


def _wrap_dim(dim, int ndim, str op=""):
    """wrap_dim for Python-level ops: a dim in [-ndim, ndim) (a 0-d tensor counts as 1-d)
    made non-negative; IndexError like PyTorch's otherwise."""
    return wrap_dim(dim, ndim, op)


cdef int parse_shape(tuple args, int64_t* out, str op) except -1:
    """Sizes given as varargs or as one sequence; returns the number of dims."""
    cdef object seq = args
    if len(args) == 1 and type(args[0]) is not int and (
            isinstance(args[0], (tuple, list)) or not hasattr(args[0], "__index__")):
        seq = args[0]
    cdef Py_ssize_t n = len(seq)
    if n > MAX_DIM:
        raise RuntimeError(f"{op}(): ember supports at most {MAX_DIM} dimensions, got {n}")
    cdef Py_ssize_t i
    for i in range(n):
        s = seq[i]
        if type(s) is int:                  # the common case, without a method call
            out[i] = s
        elif isinstance(s, float) or not hasattr(s, "__index__"):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {i}")
        else:
            out[i] = s.__index__()
    return <int>n


cdef TensorBase not_a_tensor(object x, str op, str arg):
    """as_tensor_arg's refusal (_tensor.pxd): the message is built only on failure."""
    from ember.core._errors import _arg_type_message
    raise TypeError(_arg_type_message(x, op, arg))


cdef int same_device(str op, TensorBase a, TensorBase b) except -1:
    if a._device != b._device:
        raise RuntimeError(f"{op}(): Expected all tensors to be on the same device, but found "
                           f"at least two devices, {a._device} and {b._device}!")
    return 0
