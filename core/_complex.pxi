# Complex tensors (complex64, complex128): views between complex and float, and the hooks
# the primitives' backend paths take for a complex dtype.
#
# DESIGN: kernels never see a complex dtype; the kernel ABI (abi.h) is unchanged, so every
# device plugin supports complex tensors without a line of its own.  A complex tensor is
# stored as interleaved (real, imag) pairs -- NumPy's and PyTorch's layout -- and the core
# computes on its float view (view_as_real: one more dim of size 2, strides doubled) with
# ember's float ops (ember.core.complex_ops).  The price is a few more kernel calls per op
# than a fused complex kernel would make; the hot real paths pay one test of
# `dtype.is_complex` each.  Complex tensors cannot require grad (as before): only the fft
# transforms of real inputs differentiate, through their own formulas (ember.core.fft).

cdef object _complex_ops = None


cdef object complex_ops():
    """ember.core.complex_ops, imported on the first complex op."""
    global _complex_ops
    if _complex_ops is None:
        from ember.core import complex_ops as m
        _complex_ops = m
    return _complex_ops


cdef TensorBase real_view_c(TensorBase t):
    """view_as_real: t's (real, imag) pairs as a float tensor of shape [*t.shape, 2]."""
    if t._ndim + 1 > MAX_DIM:
        raise RuntimeError(f"view_as_real: ember supports at most {MAX_DIM} dimensions")
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int i
    for i in range(t._ndim):
        sizes[i] = t._sizes[i]
        strides[i] = 2 * t._strides[i]
    sizes[t._ndim] = 2
    strides[t._ndim] = 1
    cdef TensorBase r = make_view(t, t._ndim + 1, sizes, strides, 2 * t._offset)
    r._dtype = t._dtype.to_real()
    return r


cdef TensorBase component_c(TensorBase t, int which):
    """The real (which=0) or imaginary (1) parts of the complex t: a strided float view."""
    cdef int64_t strides[MAX_DIM]
    cdef int i
    for i in range(t._ndim):
        strides[i] = 2 * t._strides[i]
    cdef TensorBase r = make_view(t, t._ndim, t._sizes, strides, 2 * t._offset + which)
    r._dtype = t._dtype.to_real()
    return r


cdef int complex_copy(TensorBase dst, TensorBase src) except -1:
    """run_copy when either side is complex: component by component on float views."""
    if dst._dtype.is_complex:
        if src._dtype.is_complex:
            run_copy(real_view_c(dst), real_view_c(src))
        else:
            run_copy(component_c(dst, 0), src)
            kernel_fill(component_c(dst, 1), 0)
        return 0
    if dst._dtype.code == EMBER_BOOL:         # nonzero: either part (no warning, as PyTorch)
        run_copy(dst, binary_op(op_ne, src, 0, 1, None))
        return 0
    import warnings
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                  stacklevel=2)
    run_copy(dst, component_c(src, 0))
    return 0


cdef int pair_view(ember_view* v, dtype dt) except -1:
    """A kernel view of complex elements as (real, imag) float pairs: a trailing dim of 2."""
    if v.ndim + 1 > MAX_DIM:
        raise RuntimeError(f"ember supports at most {MAX_DIM} dimensions")
    cdef int i
    for i in range(v.ndim):
        v.strides[i] *= 2
    v.sizes[v.ndim] = 2
    v.strides[v.ndim] = 1
    v.ndim += 1
    v.dtype = dt.to_real().code
    return 0


cdef int complex_index_views(int code, TensorBase out, TensorBase a, str op, ember_view* vo,
                             ember_view* va, ember_view* vi) except -1:
    """Gathers and scatters (plain or adding) move complex elements as float pairs: the
    index gets a stride-0 trailing dim, so both components follow one index."""
    cdef int base = code & ~EMBER_INDEX_WRAP
    if out._dtype is not a._dtype or not (base == EMBER_INDEX_GATHER or base ==
                                          EMBER_INDEX_SCATTER or base == EMBER_INDEX_SCATTER_ADD):
        d = out._dtype if out._dtype.is_complex else a._dtype
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{st_name(d)}\'')
    pair_view(vo, out._dtype)
    pair_view(va, a._dtype)
    return pair_broadcast(vi)


cdef int pair_broadcast(ember_view* v) except -1:
    """v (an index or a condition) repeated for both components: a stride-0 dim of 2."""
    if v.ndim + 1 > MAX_DIM:
        raise RuntimeError(f"ember supports at most {MAX_DIM} dimensions")
    v.sizes[v.ndim] = 2
    v.strides[v.ndim] = 0
    v.ndim += 1
    return 0


cdef int complex_where_views(dtype rt, ember_view* vo, ember_view* vc, ember_view* va,
                             ember_view* vb) except -1:
    """where over complex operands as float pairs; a scalar operand's buffer holds its
    (real, imag) pair, which its stride-0 view then reads in turn."""
    pair_view(vo, rt)
    pair_view(va, rt)
    pair_view(vb, rt)
    return pair_broadcast(vc)


cdef int complex_fill(TensorBase dst, object value) except -1:
    z = complex(value)
    kernel_fill(component_c(dst, 0), z.real)
    kernel_fill(component_c(dst, 1), z.imag)
    return 0


cdef bint live_tangent(TensorBase t):
    """t carries a forward-mode tangent this thread sees (not one a Function's forward
    hides while it runs)."""
    if t._fw is None:
        return False
    from ember.core._autograd import _tracked
    return _tracked(t)


def view_as_real(input):
    """A float view of the complex ``input``: shape [*input.shape, 2], (real, imag) last."""
    cdef TensorBase t = as_tensor_arg(input, "view_as_real", "input")
    if not t._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if ((t._keys & AUTOGRAD_BIT) and is_grad_enabled_c()) or live_tangent(t):
        from ember.core.complex_functions import _ViewAsReal
        return _ViewAsReal.apply(t)
    if t._bt is not None:
        return batched_view(t, view_as_real)
    return real_view_c(t)


def view_as_complex(input):
    """A complex view of the float ``input`` whose last dim (size 2, stride 1) holds
    (real, imag) pairs."""
    cdef TensorBase t = as_tensor_arg(input, "view_as_complex", "input")
    if t._dtype.code != EMBER_FLOAT32 and t._dtype.code != EMBER_FLOAT64:
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {st_name(t._dtype)}")
    if t._ndim == 0 or t._sizes[t._ndim - 1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if t._strides[t._ndim - 1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    cdef int64_t strides[MAX_DIM]
    cdef int i
    for i in range(t._ndim - 1):
        if t._strides[i] % 2:
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                               "dimension")
        strides[i] = t._strides[i] // 2
    if t._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if ((t._keys & AUTOGRAD_BIT) and is_grad_enabled_c()) or live_tangent(t):
        from ember.core.complex_functions import _ViewAsComplex
        return _ViewAsComplex.apply(t)
    if t._bt is not None:
        return batched_view(t, view_as_complex)
    cdef TensorBase r = make_view(t, t._ndim - 1, t._sizes, strides, t._offset // 2)
    r._dtype = t._dtype.to_complex()
    return r


def _real(TensorBase t):
    """Tensor.real: a float view of the real parts (t itself when t is real)."""
    if not t._dtype.is_complex:
        return t
    return component_of(t, 0)


def _imag(TensorBase t):
    """Tensor.imag: a float view of the imaginary parts (complex tensors only)."""
    if not t._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return component_of(t, 1)


cdef TensorBase component_of(TensorBase t, int which):
    """A component view; on the autograd path (or with a tangent) through view_as_real,
    which carries the gradient (the bare view would drop it)."""
    if ((t._keys & AUTOGRAD_BIT) and is_grad_enabled_c()) or live_tangent(t):
        return view_as_real(t).select(-1, which)
    if t._bt is not None:
        return batched_view(t, _real if which == 0 else _imag)
    return component_c(t, which)


cdef TensorBase batched_view(TensorBase t, object view):
    """``view`` (a view across the complex and real layouts, which these functions make
    without the dispatcher) of a vmap wrapper: taken of its physical tensor (the batch dim
    first is untouched), wrapped again as a view of ``t``."""
    from ember.core._tensor import _make_batched
    return _make_batched(view(t._bt.value), t._bt.level, t)


def _result_out(TensorBase result, out, str op):
    """``out`` (checked, resized as PyTorch's out= does) holding ``result``'s values."""
    grant_out_write(out, result, None)
    cdef TensorBase o = prepare_out(out, result._ndim, result._sizes, result._dtype,
                                    result._device, op)
    check_writable(o, result, None)
    run_copy(o, result)
    o.bump()
    return o


cdef int refuse_complex_grad(object a, object b, str op) except -1:
    """A complex result made from real tensors that autograd records would drop their
    history (complex tensors cannot carry gradients yet): refused, never a silently
    detached result."""
    for x in (a, b):
        if isinstance(x, TensorBase) and ((<TensorBase>x)._keys & AUTOGRAD_BIT) and \
                is_grad_enabled_c():
            raise NotImplementedError(f"{op}: its result is complex, and ember's complex "
                                      f"tensors cannot carry gradients yet (the input "
                                      f"requires grad)")
    return 0


def _complex_out(re, im, dtype ct, out, str op):
    """A complex result (or ``out``, checked and resized) holding re + i*im; re and im are
    float tensors broadcast to the result's shape (im may also be a Python number, or None
    for zero)."""
    if im is not None and not isinstance(im, TensorBase):
        im = float(im) if im else None
    refuse_complex_grad(re, im, op)
    cdef TensorBase r = re
    cdef int64_t sizes[MAX_DIM]
    cdef int i, nd = r._ndim
    if im is not None and isinstance(im, TensorBase):
        nd = max(nd, (<TensorBase>im)._ndim)
    for i in range(nd):
        sizes[i] = 1
    broadcast_into(nd, sizes, r)
    if isinstance(im, TensorBase):
        broadcast_into(nd, sizes, <TensorBase>im)
    grant_out_write(out, re, im)
    cdef TensorBase o = prepare_out(out, nd, sizes, ct, r._device, op)
    if out is not None:
        check_writable(o, None, None)
    if o._backend.is_meta:
        return o
    if o.numel_c() == 0:
        return o
    run_copy(component_c(o, 0), r)
    if isinstance(im, TensorBase):
        run_copy(component_c(o, 1), <TensorBase>im)
    else:
        kernel_fill(component_c(o, 1), 0.0 if im is None else im)
    if out is not None:
        o.bump()
    return o
