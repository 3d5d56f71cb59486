# Factory functions: tensor, empty, zeros, ones, full, arange, rand, randn and *_like.

cdef TensorBase uninitialized(TensorBase t):
    """What empty() hands out: with deterministic algorithms on, its memory filled (NaN, or
    the dtype's largest value) as PyTorch's fill_uninitialized_memory does."""
    if not _state.deterministic():
        return t
    cdef dtype d = t._dtype
    if d.is_floating_point:
        fill_c(t, float("nan"))
    elif d is _dtypes.bool:
        fill_c(t, True)
    else:
        bits = 8 * d.itemsize - (0 if d is _dtypes.uint8 else 1)
        fill_c(t, (<object>2) ** bits - 1)      # a Python int: no C shift overflow
    return t


cpdef tuple out_spec(object out, object dtype, object device, str op):
    """(dtype, device) of a factory's result when it writes ``out=``: out's (a different
    ``dtype`` given is PyTorch's error); (dtype, device) unchanged without ``out``."""
    if out is None:
        return dtype, device
    cdef TensorBase o = as_tensor_arg(out, op, "out")
    if dtype is not None and as_dtype(dtype, op, "dtype") is not o._dtype:
        raise RuntimeError(f"dtype {st_name(as_dtype(dtype, op, 'dtype'))} does not match "
                           f"dtype of out parameter ({st_name(o._dtype)})")
    return o._dtype, o._device if device is None else device


cpdef object factory_out(TensorBase t, object out, object requires_grad):
    """A factory's result ``t`` (requiring grad if asked), or ``out`` resized to t's shape
    (silently, as PyTorch's factories do) holding its values."""
    if out is None:
        return with_grad(t, requires_grad)
    cdef TensorBase o = <TensorBase>out
    if tuple(o.shape) != tuple(t.shape):
        o.resize_(tuple(t.shape))
    run_copy(o, t)
    o.bump()
    return with_grad(o, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, memory_format=None,
          **kwargs):
    """An uninitialised tensor of shape ``size`` (laid out as ``memory_format``)."""
    size = factory_size(size, kwargs, "empty")
    dtype, device = out_spec(out, dtype, device, "empty")
    cdef TensorBase t = new_empty(size, dtype, device, "empty")
    if memory_format is not None:
        from ember.core import memory_format as _mf
        if memory_format is _mf.preserve_format:
            raise RuntimeError("empty: preserve memory format is unsupported")
        _mf._check(memory_format, "empty")
        t = restrided(t, _mf.format_strides(memory_format, tuple(t.shape)))
    return factory_out(uninitialized(t), out, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, **kwargs):
    """A tensor of shape ``size`` filled with 0."""
    size = factory_size(size, kwargs, "zeros")
    dtype, device = out_spec(out, dtype, device, "zeros")
    cdef TensorBase t = new_empty(size, dtype, device, "zeros")
    fill_c(t, 0)
    return factory_out(t, out, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, **kwargs):
    """A tensor of shape ``size`` filled with 1."""
    size = factory_size(size, kwargs, "ones")
    dtype, device = out_spec(out, dtype, device, "ones")
    cdef TensorBase t = new_empty(size, dtype, device, "ones")
    fill_c(t, 1)
    return factory_out(t, out, requires_grad)


cdef dtype fill_value_dtype(object fill_value):
    if isinstance(fill_value, TensorBase):
        return (<TensorBase>fill_value)._dtype
    return scalar_dtype(fill_value, "full")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None,
         layout=None, pin_memory=False):
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it)."""
    dtype, device = out_spec(out, dtype, device, "full")
    cdef TensorBase t = new_empty((size,), fill_value_dtype(fill_value) if dtype is None
                                  else dtype, device, "full")
    fill_c(t, fill_value)
    return factory_out(t, out, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None, pin_memory=False):
    """An uninitialised tensor shaped like ``input``."""
    return with_grad(uninitialized(new_like(input, dtype, device, "empty_like", memory_format)),
                     requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None, pin_memory=False):
    """Zeros shaped like ``input``."""
    cdef TensorBase t = new_like(input, dtype, device, "zeros_like", memory_format)
    fill_c(t, 0)
    return with_grad(t, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
              layout=None, pin_memory=False):
    """Ones shaped like ``input``."""
    cdef TensorBase t = new_like(input, dtype, device, "ones_like", memory_format)
    fill_c(t, 1)
    return with_grad(t, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None, pin_memory=False):
    """``fill_value`` everywhere, shaped like ``input``."""
    cdef TensorBase t = new_like(input, dtype, device, "full_like", memory_format)
    fill_c(t, fill_value)
    return with_grad(t, requires_grad)


cdef object arange_bound(object v, str name):
    """A bound of arange as a Python number (a 0-d tensor gives its value)."""
    if isinstance(v, TensorBase):
        v = item_c(<TensorBase>v)
    if not is_scalar(v):
        raise TypeError(f"arange(): argument '{name}' must be Number, not {type(v).__name__}")
    return v


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           out=None, layout=None, pin_memory=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``."""
    if end is None:
        start, end = 0, start
    start, end, step = [arange_bound(v, name) for v, name in
                        ((start, "start"), (end, "end"), (step, "step"))]
    dtype, device = out_spec(out, dtype, device, "arange")
    cdef DType d
    if dtype is not None:
        d = as_dtype(dtype, "arange", "dtype")
    elif any(isinstance(v, float) for v in (start, end, step)):
        d = <DType>_state.default_dtype()
    else:
        d = _dtypes.int64
    refuse_limited_named("arange", d)
    if d.code == EMBER_INT64:
        # PyTorch's int64 kernel casts the bounds and step first (0.5 -> 0: refused)
        if step != 0 and int(step) == 0:
            raise ValueError("step must be nonzero")
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    import math
    # the length from the bounds as given (in double when any is a float), as PyTorch's
    n = math.ceil((end - start) / step) if d.is_floating_point or isinstance(start, float) \
        or isinstance(end, float) or isinstance(step, float) else -((start - end) // step)
    if not d.is_floating_point and not d.is_complex:
        # the narrower integer kernels cast start and step for the values only (0.5 -> 0:
        # arange(-1., 1., .5, dtype=int32) repeats -1)
        start, step = int(start), int(step)
    return factory_out(sequence(n, start, step, None, n, d, as_device(device)), out,
                       requires_grad)


cdef TensorBase sequence(int64_t n, object start, object step, object end, int64_t half,
                         dtype d, device dev):
    """arange's and linspace's values: start + step * i for i < half, end - step * (n - 1
    - i) from there (linspace's second half, counted from its end), i in [0, n); computed
    in double for a floating ``d`` (int64 otherwise, start and step ints) and rounded to d
    once.  On the CPU device they are written in place; elsewhere (or while a capture
    records factories) they are made on the host and copied over."""
    cdef DType wide = _dtypes.float64 if d.is_floating_point else _dtypes.int64
    cdef TensorBase t
    if dev.type == "cpu" and not capture_live():
        t = empty_c(1, &n, wide, dev)
        if n:
            if wide is _dtypes.float64:
                sequence_f64(<double*>t._storage.data, n, start, step,
                             start if end is None else end, half)
            else:
                sequence_i64(<int64_t*>t._storage.data, n, start, step)
        return t if d is wide else cast_to(t, d)
    np = numpy()
    i = np.arange(n, dtype=wide.np_dtype)
    host = start + i * step
    if half < n:
        host[half:] = end - step * (n - 1 - i[half:])
    return from_host_array(host, d, dev)


cdef extern from *:
    """
    /* v[i] = base + step * (first + i * delta): four independent counters held as doubles
     * (exact below 2^53), so no int-to-double conversion and no serial chain per element */
    static void ember_sequence_run(double *v, int64_t n, double base, double step,
                                   double first, double delta) {
        double k0 = first, k1 = first + delta, k2 = first + 2 * delta, k3 = first + 3 * delta;
        const double d4 = 4 * delta;
        int64_t i = 0;
        for (; i + 4 <= n; i += 4, k0 += d4, k1 += d4, k2 += d4, k3 += d4) {
            v[i] = base + step * k0;
            v[i + 1] = base + step * k1;
            v[i + 2] = base + step * k2;
            v[i + 3] = base + step * k3;
        }
        for (; i < n; i++, k0 += delta) v[i] = base + step * k0;
    }
    static void ember_sequence_f64(double *out, int64_t n, double start, double step,
                                   double end, int64_t half) {
        /* start + step * i below half; end - step * (n - 1 - i) from there */
        ember_sequence_run(out, half, start, step, 0.0, 1.0);
        ember_sequence_run(out + half, n - half, end, -step, (double)(n - 1 - half), -1.0);
    }
    /* wrapping as NumPy's int64 arithmetic does; -O3 vectorises it (the core builds at
     * -O2, which left it scalar) */
    __attribute__((optimize("O3")))
    static void ember_sequence_i64(int64_t *out, int64_t n, int64_t start, int64_t step) {
        for (int64_t i = 0; i < n; i++)
            out[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step);
    }
    """
    void sequence_f64 "ember_sequence_f64"(double* out, int64_t n, double start, double step,
                                           double end, int64_t half) noexcept nogil
    void sequence_i64 "ember_sequence_i64"(int64_t* out, int64_t n, int64_t start,
                                           int64_t step) noexcept nogil


def _sequence(int64_t n, start, step, end, int64_t half, dtype, device):
    """sequence() for core/factories.py's linspace (real endpoints)."""
    return sequence(n, start, step, end, half, <DType>dtype, as_device(device))


cdef TensorBase from_host_array(object arr, dtype dt, device dev):
    """A new tensor on `dev` with dtype `dt` holding the NumPy array `arr` (copied)."""
    r = captured_factory("from_host", (arr, dt, dev))
    if r is not None:
        return r
    np = numpy()
    host_dt = dt if dt.np_dtype is not None else _dtypes.float32   # bfloat16: via float32
    a = np.asarray(arr, dtype=host_dt.np_dtype, order="C")      # keeps 0-d arrays 0-d
    cdef int64_t sizes[MAX_DIM]
    cdef int nd = a.ndim
    if nd > MAX_DIM:
        raise RuntimeError(f"ember supports at most {MAX_DIM} dimensions, got {nd}")
    cdef int i
    for i in range(nd):
        sizes[i] = a.shape[i]
    cdef TensorBase t = empty_c(nd, sizes, host_dt, dev)
    cdef int64_t nbytes = a.nbytes
    cdef ember_ctx ctx
    cdef int rc
    cdef char* src
    if nbytes and not t._backend.is_meta:
        src = <char*><size_t>a.ctypes.data
        init_ctx(&ctx, t)
        rc = t._backend.kernels().from_host(&ctx, t._storage.data, src, nbytes)
        if rc:
            raise_kernel_error(rc, &ctx)
    return cast_to(t, dt)


cdef dtype infer_host_dtype(object data, object arr):
    """PyTorch's dtype inference: Python floats -> default dtype, ints -> int64."""
    np = numpy()
    kind = arr.dtype.kind
    if kind not in "biufc":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (np.ndarray, np.generic)):
        return dtype_from_numpy_cached(arr.dtype)
    if kind == "f":
        return <dtype>_state.default_dtype()
    if kind == "c":
        return default_complex_dtype()
    if kind in "iu":
        return _dtypes.int64
    return _dtypes.bool


cdef dtype dtype_from_numpy_cached(object npd):
    from ember.core._dtype import dtype_from_numpy
    return dtype_from_numpy(npd)


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object, int*) except? -1


cdef struct Leaves:
    # what tensor()'s nested sequences hold: Python scalars by kind, and whether a tensor
    # or a Python int outside int64's range is among them
    bint py_bool, py_int, py_float, py_complex, tensors, int_overflow


cdef int scan_leaves(object data, Leaves* k, set dtypes) except -1:
    """Walk tensor()'s nested lists and tuples: Python scalars set their flags in ``k``,
    NumPy scalars, arrays and tensors add their dtype to ``dtypes``."""
    cdef int overflow
    cdef object x
    for x in data:
        t = type(x)
        if t is float:
            k.py_float = True
        elif t is int:
            k.py_int = True
            PyLong_AsLongLongAndOverflow(x, &overflow)
            k.int_overflow |= overflow != 0
        elif t is list or t is tuple:
            scan_leaves(x, k, dtypes)
        elif t is bool:
            k.py_bool = True
        elif isinstance(x, TensorBase):
            k.tensors = True
            dtypes.add((<TensorBase>x)._dtype)
        elif t is complex:
            k.py_complex = True
        elif hasattr(x, "dtype") and hasattr(x, "shape"):      # a NumPy scalar or array
            dtypes.add(dtype_from_numpy_cached(x.dtype))
        elif t is str or t is bytes:
            raise TypeError(f"new(): invalid data type '{t.__name__}'")
    return 0


cdef dtype leaves_dtype(Leaves* k, set dtypes):
    """PyTorch's inferred dtype of nested data: the promotion of its leaves' dtypes, a Python
    float counting as the default dtype, an int as int64, a bool as bool."""
    cdef dtype d = None
    if k.py_bool:
        dtypes.add(_dtypes.bool)
    if k.py_int:
        dtypes.add(_dtypes.int64)
    if k.py_float:
        dtypes.add(<dtype>_state.default_dtype())
    if k.py_complex:
        dtypes.add(default_complex_dtype())
    for x in dtypes:
        d = <dtype>x if d is None else promote(d, <dtype>x)
    return d


cdef object scalars_for_tensors(object data):
    """``data`` with each tensor leaf replaced by its value (PyTorch reads a one-element
    tensor inside a sequence as a number)."""
    if isinstance(data, TensorBase):
        if (<TensorBase>data).numel_c() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return item_c(<TensorBase>data)
    if isinstance(data, (list, tuple)):
        return [scalars_for_tensors(x) for x in data]
    return data


cdef int check_convertible(object arr, dtype d) except -1:
    """PyTorch's overflow check of tensor(data, dtype=<integer type>): NaN, infinities and
    values outside the type's range are errors (an unsigned type also takes negative values
    down to -max, which wrap)."""
    np = numpy()
    from ember.core.typeinfo import checked_range
    lo, hi = checked_range(d)
    if arr.dtype.kind in "fc":
        bad = not bool(np.isfinite(arr).all()) or bool((arr.real < lo).any()) or \
            bool((arr.real > hi).any())
    else:
        bad = int(arr.min()) < lo or int(arr.max()) > hi
    if bad:
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
    return 0


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (a number, nested sequences, an array)."""
    return with_grad(tensor_data(data, dtype, device), requires_grad)


cdef TensorBase tensor_data(object data, object dtype, object device):
    cdef DType d
    if isinstance(data, TensorBase):
        return detach_c(to_c(<TensorBase>data, device, dtype, True), False)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    cdef Leaves leaves
    cdef set leaf_dtypes = set()
    cdef DType inferred = None
    if isinstance(data, (list, tuple)) or type(data) is int:
        memset(&leaves, 0, sizeof(Leaves))
        scan_leaves(data if type(data) is not int else (data,), &leaves, leaf_dtypes)
        if leaves.int_overflow and dtype is None:
            raise ValueError("Overflow when unpacking long long")
        inferred = leaves_dtype(&leaves, leaf_dtypes)
        if leaves.tensors:
            data = scalars_for_tensors(data)
    np = numpy()
    try:
        arr = np.asarray(data)
    except ValueError as e:
        raise ValueError(f"tensor(): could not build a tensor from ragged nested sequences "
                         f"({e})") from None
    if arr.dtype == object:
        raise TypeError(f"tensor(): could not infer dtype of {type(data).__name__} "
                        f"(nested sequences must hold numbers or tensors)")
    if dtype is not None:
        d = as_dtype(dtype, "tensor", "dtype")
    elif inferred is not None:
        d = inferred
    else:
        d = infer_host_dtype(data, arr)
    if dtype is not None and d.category == CAT_INTEGRAL and arr.size and \
            not isinstance(data, np.ndarray) and arr.dtype.kind in "fciu" and \
            d.code != EMBER_UINT64:
        check_convertible(arr, d)
    if d.code == EMBER_UINT64 and arr.dtype.kind == "f" and not isinstance(data, np.ndarray):
        # Python ints past int64 (2**64 - 1 beside a 0) make NumPy fall back to float64
        try:
            arr = np.asarray(data, dtype=np.uint64)
        except (OverflowError, TypeError, ValueError):
            pass
    return from_host_array(arr, d, as_device(device))
