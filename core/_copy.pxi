# Copies and casts: the backend's `copy` (strided, any dtype to any dtype), `fill`, and
# host staging for copies between devices.

from cpython.bytearray cimport PyByteArray_AS_STRING

cdef Op op_copy = Op("copy_", "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)",
                     FAMILY_COPY, 0, _rules.elementwise)
cdef Op op_fill = Op("fill_", "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)",
                     FAMILY_FILL, 0, None)
cdef Op op_to_copy = Op("_to_copy", "_to_copy(Tensor self, *, ScalarType? dtype=None, "
                        "Device? device=None) -> Tensor", FAMILY_COPY, 0, _rules.elementwise)
cdef Op op_clone = Op("clone", "clone(Tensor self, *, MemoryFormat? memory_format=None) -> "
                      "Tensor", FAMILY_COPY, 0, _rules.elementwise)


cdef int run_copy(TensorBase dst, TensorBase src) except -1:
    """dst[...] = src on one device; src broadcasts to dst's shape; casts dtypes."""
    if dst._backend.is_meta or dst.numel_c() == 0:
        return 0
    if dst._dtype.is_complex or src._dtype.is_complex:
        return complex_copy(dst, src)       # kernels see no complex dtype (_complex.pxi)
    cdef int64_t sizes[MAX_DIM]
    memcpy(sizes, dst._sizes, dst._ndim * sizeof(int64_t))
    cdef ember_view vd, vs
    dst.view_c(&vd)
    expanded_view(src, dst._ndim, sizes, &vs)
    cdef ember_kernel_table* t = dst._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, dst)
    cdef int rc
    if dst.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.copy(&ctx, &vd, &vs)
    else:
        rc = t.copy(&ctx, &vd, &vs)
    if rc:
        raise_kernel_error(rc, &ctx)
    return 0


cdef TensorBase contiguous_copy(TensorBase t):
    cdef TensorBase r = empty_c(t._ndim, t._sizes, t._dtype, t._device)
    run_copy(r, t)
    return r


cdef TensorBase to_device(TensorBase src, device dev, dtype dt):
    """A contiguous copy of src on `dev` with dtype `dt`, staged through host memory."""
    cdef TensorBase s = cast_to(src, dt) if src._dtype is not dt else src
    if not s.contiguous_c() or s._offset:
        s = contiguous_copy(s)
    cdef TensorBase r = empty_c(s._ndim, s._sizes, dt, dev)
    cdef int64_t nbytes = s.numel_c() * dt.itemsize
    if nbytes == 0 or r._backend.is_meta:
        return r
    if s._backend.is_meta:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    cdef ember_kernel_table* ts = s._backend.kernels()
    cdef ember_kernel_table* td = r._backend.kernels()
    cdef ember_ctx cs, cd
    init_ctx(&cs, s)
    init_ctx(&cd, r)
    cdef int rc
    cdef object host = None
    cdef char* h
    # CPU storage is host memory: the other device copies straight from or into it
    if s._device.type == "cpu":
        with nogil:
            rc = td.from_host(&cd, r._storage.data, s._storage.data, nbytes)
        if rc:
            raise_kernel_error(rc, &cd)
        return r
    if r._device.type == "cpu":
        with nogil:
            rc = ts.to_host(&cs, r._storage.data, s._storage.data, nbytes)
        if rc:
            raise_sync_error(rc, &cs)
        return r
    host = bytearray(nbytes)
    h = PyByteArray_AS_STRING(host)
    with nogil:
        rc = ts.to_host(&cs, h, s._storage.data, nbytes)
    if rc:
        raise_sync_error(rc, &cs)
    with nogil:
        rc = td.from_host(&cd, r._storage.data, h, nbytes)
    if rc:
        raise_kernel_error(rc, &cd)
    return r


cdef int copy_into(TensorBase dst, TensorBase src, str op) except -1:
    """dst.copy_(src): broadcasting, casting, across devices."""
    check_write(dst)
    cdef int k = op_copy.resolve(effective_keys(dst._keys | src._keys))
    if (op_copy._kernel_mask >> k) & 1:
        op_copy._table[k](dst, src)
        return 0
    cdef int64_t sizes[MAX_DIM]
    memcpy(sizes, dst._sizes, dst._ndim * sizeof(int64_t))
    if src._ndim > dst._ndim:
        raise RuntimeError(f"{op}: source of shape {list(src.shape)} cannot be broadcast to "
                           f"destination of shape {list(dst.shape)}")
    broadcast_into(dst._ndim, sizes, src)
    for i in range(dst._ndim):
        if sizes[i] != dst._sizes[i]:
            raise RuntimeError(f"{op}: source of shape {list(src.shape)} cannot be broadcast "
                               f"to destination of shape {list(dst.shape)}")
    src = staged(dst, src)
    check_writable(dst, src, None)
    if src._device != dst._device:
        src = to_device(src, dst._device, src._dtype)
    run_copy(dst, src)
    dst.bump()
    return 0


cdef int fill_c(TensorBase dst, object value) except -1:
    """dst[...] = value (a Python number or a one-element tensor)."""
    check_write(dst)
    cdef int k = op_fill.resolve(effective_keys(dst._keys))
    if (op_fill._kernel_mask >> k) & 1:
        op_fill._table[k](dst, value)
        return 0
    if isinstance(value, TensorBase):
        if (<TensorBase>value)._ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {(<TensorBase>value)._ndim} dimensions.")
        value = item_c(<TensorBase>value)
    elif not is_scalar(value):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    # check_writable but for its internal-overlap refusal: one value written to elements
    # that share memory is well defined, so PyTorch fills expanded tensors
    if dst._no_grad_view and is_grad_enabled_c():
        raise RuntimeError(_NO_GRAD_VIEW_WRITE)
    dst.bump()
    if dst._backend.is_meta or dst.numel_c() == 0:
        return 0
    if dst._dtype.is_complex:
        return complex_fill(dst, value)
    return kernel_fill(dst, value)


cdef int kernel_fill(TensorBase dst, object value) except -1:
    """The backend's fill of every element of dst with the Python number value."""
    cdef scalar_buf buf
    check_scalar_range(value, dst._dtype, "fill_")
    write_scalar(value, dst._dtype, &buf, "fill_")
    cdef ember_view v
    dst.view_c(&v)
    cdef ember_kernel_table* t = dst._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, dst)
    cdef int rc
    if dst.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.fill(&ctx, &v, &buf)
    else:
        rc = t.fill(&ctx, &v, &buf)
    if rc:
        raise_kernel_error(rc, &ctx)
    return 0


cdef object to_c(TensorBase t, object dev, object dt, bint copy):
    """Tensor.to: t itself when nothing changes (unless copy), else a converted copy."""
    cdef device d = t._device if dev is None else as_device(dev)
    cdef dtype target = t._dtype if dt is None else as_dtype(dt, "to", "dtype")
    if d == t._device and target is t._dtype:
        return clone_c(t) if copy else t
    return to_copy(t, None if dev is None else d, target)


cdef TensorBase to_copy(TensorBase t, device d, dtype dt):
    """A converted copy of t (dtype and/or device): the differentiable op behind to().  d
    None: t's own device (so a recorded graph's cast stays on its inputs' device, not on
    the meta device that a fake tensor's data lives on)."""
    cdef int k = op_to_copy.resolve(effective_keys(t._keys))
    if (op_to_copy._kernel_mask >> k) & 1:
        return op_to_copy._table[k](t, d, dt)
    if d is None or d == t._device:
        return cast_to(t, dt) if dt is not t._dtype else contiguous_copy(t)
    return to_device(t, d, dt)


cdef TensorBase clone_c(TensorBase t):
    """A contiguous copy (PyTorch's preserve_format keeps a dense tensor's strides; ember
    makes it contiguous for now)."""
    cdef int k = op_clone.resolve(effective_keys(t._keys))
    if (op_clone._kernel_mask >> k) & 1:
        return op_clone._table[k](t)
    return contiguous_copy(t)


def _parse_to(args, kwargs):
    """Tensor.to's overloads: to(dtype), to(device, dtype=None), to(other), keywords."""
    dev, dt = kwargs.get("device"), kwargs.get("dtype")
    for a in args:
        if isinstance(a, TensorBase):
            # .device: a fake tensor's is the device it stands for
            dev, dt = a.device, (<TensorBase>a)._dtype
        elif isinstance(a, dtype):
            dt = a
        elif isinstance(a, (str, device, int)) and not isinstance(a, bool):
            dev = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    return dev, dt


def _cast_methods():
    """{name: method} for Tensor's dtype shorthands: t.float(), t.long(), t.bool(), ..."""
    def caster(dtype dt):
        def method(self, memory_format=None):
            if (<TensorBase>self)._dtype is dt:     # as PyTorch: self, whatever the format
                return self
            r = to_copy(self, None, dt)
            if memory_format is None:
                return r
            from ember.core import memory_format as _mf
            return r if memory_format is _mf.preserve_format else \
                r.contiguous(memory_format=memory_format)
        method.__name__ = method.__qualname__ = name
        method.__doc__ = f"self.to({dt}); a copy is laid out as ``memory_format`` if given"
        return method
    out = {}
    for name, dt in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                     ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                     ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool"),
                     ("cfloat", "complex64"), ("cdouble", "complex128")):
        out[name] = caster(_dtypes._dtype_by_name[dt])
    return out


# --- derivatives (see _autograd_support.pxi): a copy hands the gradient back (the
# engine casts it to the source's dtype and device); the overwritten values get none ---

def _d_fill(ctx, g):
    return zeros_like(g), (g.sum() if isinstance(ctx.args[1], TensorBase) else None)


derive(op_to_copy, lambda ctx, g: (g,), lambda t, d, dt: to_copy(t, d, dt), 0)
derive(op_clone, lambda ctx, g: (g,), lambda t: clone_c(t), 0)
derive(op_copy, lambda ctx, g: (None, g),
       lambda dst, src: copy_into(dst, src, "copy_"), WRITES_SELF)
derive(op_fill, _d_fill, lambda dst, value: fill_c(dst, value), WRITES_SELF)
