# Reductions over dims (sum, mean, prod, amax, amin): the kept dims lead, the reduced dims trail, and the
# backend's `reduce` primitive folds the trailing ones.

# (their Ops, from the op table's REDUCE and SCAN rows, are made in _elementwise.pxi)
cdef Op op_argmax = get_op("argmax")
cdef Op op_argmin = get_op("argmin")


cdef int reduce_mask(TensorBase a, object dim, bint* mask, str op) except -1:
    """Mark the reduced dims; returns how many.  None or () reduces every dim."""
    cdef int i, d, n = 0
    memset(mask, 0, MAX_DIM * sizeof(bint))
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        for i in range(a._ndim):
            mask[i] = True
        return a._ndim
    for x in (dim if isinstance(dim, (tuple, list)) else (dim,)):
        d = wrap_dim(x, a._ndim, op)
        if a._ndim == 0:
            continue
        if mask[d]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        mask[d] = True
        n += 1
    return n


cdef object reduce_op(Op op, TensorBase a, object dim, bint keepdim, object dtype_arg,
                      object out):
    cdef int k = op.resolve(effective_keys(a._keys))
    if (op._kernel_mask >> k) & 1:
        return op._table[k](a, dim, keepdim, dtype=dtype_arg, out=out)
    if a._dtype.is_complex:
        return complex_ops().reduce(op.name, a, dim, keepdim, dtype_arg, out)
    cdef dtype ct
    if dtype_arg is not None:
        ct = as_dtype(dtype_arg, op.name, "dtype")
        if ct.is_complex:
            # a real input summed (averaged, multiplied) into a complex dtype: cast it first
            return reduce_op(op, cast_to(a, ct), dim, keepdim, dtype_arg, out)
    refuse_limited(op, a._dtype)
    if dtype_arg is None:
        ct = _dtypes.int64 if (op.code == EMBER_REDUCE_SUM or op.code == EMBER_REDUCE_PROD) \
            and not a._dtype.is_floating_point else a._dtype   # integer sums/products widen
    if op.code == EMBER_REDUCE_MEAN and not ct.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. "
                           f"{'Optional' if dtype_arg is not None else 'Input'} dtype must be "
                           f"either a floating point or complex dtype. Got: {st_name(ct)}")
    cdef bint mask[MAX_DIM]
    cdef int i, nred = reduce_mask(a, dim, mask, op.name)
    if op.code in (EMBER_REDUCE_MAX, EMBER_REDUCE_MIN, EMBER_REDUCE_ARGMAX, EMBER_REDUCE_ARGMIN):
        if dim is None and a.numel_c() == 0 and op.code >= EMBER_REDUCE_ARGMAX:
            raise IndexError(f"{op.name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        for i in range(a._ndim):      # no identity element: an empty reduction is an error
            if mask[i] and a._sizes[i] == 0:
                raise IndexError(f"{op.name}(): Expected reduction dim {i} to have non-zero "
                                 f"size.")
    # result shape, and the kernel's view of it (reduced dims dropped even with keepdim)
    cdef int64_t osizes[MAX_DIM]
    cdef ember_view va, vo
    cdef int n = 0, nk = 0
    for i in range(a._ndim):
        if not mask[i]:
            osizes[n] = a._sizes[i]
            n += 1
        elif keepdim:
            osizes[n] = 1
            n += 1
    cdef bint positions = op.code == EMBER_REDUCE_ARGMAX or op.code == EMBER_REDUCE_ARGMIN
    cdef dtype rt = _dtypes.int64 if positions else ct      # arg-reductions write int64
    grant_out_write(out, a, None)
    cdef TensorBase o = prepare_out(out, n, osizes, rt, a._device, op.name)
    if o._backend.is_meta:
        return o
    cdef TensorBase dst = o if o._dtype is rt else empty_c(n, osizes, rt, o._device)
    cdef TensorBase src = cast_to(a, ct)
    src.view_c(&va)
    dst.view_c(&vo)
    for i in range(a._ndim):          # permute: kept dims first, reduced dims last
        if not mask[i]:
            va.sizes[nk] = src._sizes[i]
            va.strides[nk] = src._strides[i]
            nk += 1
    for i in range(a._ndim):
        if mask[i]:
            va.sizes[nk] = src._sizes[i]
            va.strides[nk] = src._strides[i]
            nk += 1
    vo.ndim = 0
    n = 0
    for i in range(a._ndim):          # the output as the kernel sees it: kept dims only
        if not mask[i]:
            vo.sizes[vo.ndim] = dst._sizes[n]
            vo.strides[vo.ndim] = dst._strides[n]
            vo.ndim += 1
        if not mask[i] or keepdim:
            n += 1
    cdef ember_kernel_table* t = o._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    if src.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.reduce(&ctx, op.code, &vo, &va, nred)
    else:
        rc = t.reduce(&ctx, op.code, &vo, &va, nred)
    if rc:
        raise_kernel_error(rc, &ctx)
    if dst is not o:
        run_copy(o, dst)
    if out is not None:
        o.bump()
    return o


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Sum of ``input`` over ``dim`` (an int, a tuple of ints, or None for all dims);
    NumPy's ``axis``/``keepdims`` are accepted too, as PyTorch does."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("sum", dim, keepdim, axis, keepdims)
    return reduce_op(op_sum, as_tensor_arg(input, "sum", "input"), dim, keepdim, dtype, out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Mean of ``input`` over ``dim``; floating dtypes only (or pass ``dtype``)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("mean", dim, keepdim, axis, keepdims)
    return reduce_op(op_mean, as_tensor_arg(input, "mean", "input"), dim, keepdim, dtype, out)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Product of ``input`` over ``dim`` (integer inputs give int64)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("prod", dim, keepdim, axis, keepdims)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return reduce_op(op_prod, as_tensor_arg(input, "prod", "input"), dim, keepdim, dtype, out)


def amax(input, dim=(), keepdim=False, *, out=None, axis=None, keepdims=None):
    """Maximum of ``input`` over ``dim`` (all dims by default); NaN propagates."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("amax", dim, keepdim, axis, keepdims, ())
    cdef TensorBase a = as_tensor_arg(input, "amax", "input")
    if a.numel_c() == 0 and (dim is None or dim == () or dim == []):
        raise RuntimeError("amax(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return reduce_op(op_amax, a, dim, keepdim, None, out)


def amin(input, dim=(), keepdim=False, *, out=None, axis=None, keepdims=None):
    """Minimum of ``input`` over ``dim`` (all dims by default); NaN propagates."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("amin", dim, keepdim, axis, keepdims, ())
    cdef TensorBase a = as_tensor_arg(input, "amin", "input")
    if a.numel_c() == 0 and (dim is None or dim == () or dim == []):
        raise RuntimeError("amin(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return reduce_op(op_amin, a, dim, keepdim, None, out)


cdef object index_out(object out):
    """argmax/argmin's ``out``, which PyTorch takes only as int64 (not any dtype the indices
    could be cast to)."""
    if isinstance(out, TensorBase):
        from ember.core._results import check_out_dtype     # (imports this module)
        check_out_dtype(out, _dtypes.int64)
    return out


def argmax(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Index of the first maximum over ``dim`` (of the flattened input when None)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("argmax", dim, keepdim, axis, keepdims)
    cdef TensorBase a = as_tensor_arg(input, "argmax", "input")
    if a._dtype.code == EMBER_BOOL:       # max(dim)/min(dim) take bools; argmax does not
        raise RuntimeError("argmax(): does not support bool input")
    r = arg_reduce(op_argmax, a, dim, keepdim)
    return r if out is None else _result_out(r, index_out(out), "argmax")


def argmin(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Index of the first minimum over ``dim`` (of the flattened input when None)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("argmin", dim, keepdim, axis, keepdims)
    cdef TensorBase a = as_tensor_arg(input, "argmin", "input")
    if a._dtype.code == EMBER_BOOL:       # max(dim)/min(dim) take bools; argmax does not
        raise RuntimeError("argmin(): does not support bool input")
    r = arg_reduce(op_argmin, a, dim, keepdim)
    return r if out is None else _result_out(r, index_out(out), "argmin")


cdef object arg_reduce(Op op, TensorBase a, object dim, bint keepdim):
    if dim is None:                    # positions in the flattened tensor (keepdim: all 1s)
        r = reduce_op(op, a, None, keepdim, None, None)
        return r
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op.name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return reduce_op(op, a, dim, keepdim, None, None)


# --- scans: the scanned dim is moved last (a view), the backend's `scan` runs along it -------

cdef Op op_cumsum = get_op("cumsum")
cdef Op op_cumprod = get_op("cumprod")
cdef Op op_cummax = get_op("cummax")
cdef Op op_cummin = get_op("cummin")


cdef object scan_op(Op op, TensorBase a, object dim, object dtype_arg):
    cdef int k = op.resolve(effective_keys(a._keys))
    if (op._kernel_mask >> k) & 1:
        return op._table[k](a, dim, dtype=dtype_arg)
    if a._dtype.is_complex:
        return complex_ops().scan(op.name, a, dim, dtype_arg)
    cdef dtype ct = a._dtype if dtype_arg is None else as_dtype(dtype_arg, op.name, "dtype")
    if ct.is_complex:                   # a real input scanned into a complex dtype
        return scan_op(op, cast_to(a, ct), dim, dtype_arg)
    refuse_limited(op, a._dtype)
    cdef bint extreme = op.code == EMBER_SCAN_CUMMAX or op.code == EMBER_SCAN_CUMMIN
    if not extreme and dtype_arg is None and not ct.is_floating_point:
        ct = _dtypes.int64                       # integer and bool sums/products widen
    cdef int d = wrap_dim(dim, a._ndim, op.name)
    cdef TensorBase src = a if a._ndim else reshape_c(a, ((1,),))
    # the results are contiguous in the input's order of dims (as PyTorch's: a cumsum
    # along dim 0 can be view()ed); the kernel scans the last dim of views moving `d` there
    cdef TensorBase values = empty_c(src._ndim, src._sizes, ct, a._device)
    cdef TensorBase indices = empty_c(src._ndim, src._sizes, _dtypes.int64, a._device) \
        if extreme else None
    cdef TensorBase vs = values, ix = indices
    if src._ndim > 1:
        src, vs = movedim(src, d, -1), movedim(values, d, -1)
        ix = movedim(indices, d, -1) if extreme else None
    src = cast_to(src, ct)
    cdef ember_view vo, vi, va
    cdef ember_ctx ctx
    cdef int rc
    cdef ember_kernel_table* t
    if values.numel_c() and not values._backend.is_meta:
        vs.view_c(&vo)
        src.view_c(&va)
        if extreme:
            ix.view_c(&vi)
        t = values._backend.kernels()
        init_ctx(&ctx, values)
        with nogil:
            rc = t.scan(&ctx, op.code, &vo, &vi if extreme else NULL, &va)
        if rc:
            raise_kernel_error(rc, &ctx)
    if a._ndim == 0:
        values = reshape_c(values, (a.shape,))
        indices = reshape_c(indices, (a.shape,)) if extreme else None
    return values if not extreme else _ValuesIndices(op.name, values, indices)


def _device_sort(TensorBase a, int d, bint descending):
    """(values, indices) of ``a`` sorted along dim ``d`` (>= 0) by its device's `sort`
    kernel (ABI 6.1), or None when the device has none or it answers "not implemented": the
    caller then sorts on the host."""
    if a._bt is not None:               # the kernel would read sample 0 of a vmap wrapper
        refuse_batched(a, False)
    if a._backend.is_meta or a.numel_c() == 0 or a._dtype.is_complex:
        return None
    cdef ember_kernel_table* t = a._backend.kernels()
    if t.sort is NULL:
        return None
    cdef TensorBase src = a if a._ndim else reshape_c(a, ((1,),))
    cdef TensorBase values = empty_c(src._ndim, src._sizes, a._dtype, a._device)
    cdef TensorBase indices = empty_c(src._ndim, src._sizes, _dtypes.int64, a._device)
    cdef TensorBase vs = values, ix = indices      # the sorted dim last, as the kernel sorts
    if src._ndim > 1:
        src, vs, ix = movedim(src, d, -1), movedim(values, d, -1), movedim(indices, d, -1)
    cdef ember_view vv, vi, va
    vs.view_c(&vv)
    ix.view_c(&vi)
    src.view_c(&va)
    cdef ember_ctx ctx
    init_ctx(&ctx, values)
    t = values._backend.kernels()
    cdef int rc
    with nogil:
        rc = t.sort(&ctx, &vv, &vi, &va, descending)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return None
    if rc:
        raise_kernel_error(rc, &ctx)
    if a._ndim == 0:
        return reshape_c(values, ((),)), reshape_c(indices, ((),))
    return values, indices


def _ValuesIndices(name, values, indices):
    """PyTorch's torch.return_types.<name>(values, indices) named tuple (one class per op
    name, core/_results.py's: the classes ember.return_types holds, printed as torch's)."""
    from ember.core._results import values_indices
    return values_indices(name, values, indices)


def cumsum(input, dim=None, *, dtype=None, out=None, axis=None):
    """Running sums along ``dim`` (``axis``; integer inputs give int64)."""
    if dim is None or axis is not None:
        dim = _dim_or_axis("cumsum", dim, axis)
    r = scan_op(op_cumsum, as_tensor_arg(input, "cumsum", "input"), dim, dtype)
    return r if out is None else _result_out(r, out, "cumsum")


def cumprod(input, dim=None, *, dtype=None, out=None, axis=None):
    """Running products along ``dim`` (``axis``; integer inputs give int64)."""
    if dim is None or axis is not None:
        dim = _dim_or_axis("cumprod", dim, axis)
    r = scan_op(op_cumprod, as_tensor_arg(input, "cumprod", "input"), dim, dtype)
    return r if out is None else _result_out(r, out, "cumprod")


def cummax(input, dim=None, *, axis=None, out=None):
    """(values, indices) of the running maximum along ``dim`` (``axis``; into the pair
    ``out`` if given)."""
    return running_extreme(op_cummax, input, dim, axis, out)


def cummin(input, dim=None, *, axis=None, out=None):
    """(values, indices) of the running minimum along ``dim`` (``axis``; into the pair
    ``out`` if given)."""
    return running_extreme(op_cummin, input, dim, axis, out)


cdef object running_extreme(Op op, object input, object dim, object axis, object out):
    if dim is None or axis is not None:
        dim = _dim_or_axis(op.name, dim, axis)
    cdef TensorBase t = as_tensor_arg(input, op.name, "input")
    r = scan_op(op, t, dim, None)
    if out is None:
        return r
    from ember.core._results import values_indices_out    # (imports this module)
    return values_indices_out(op.name, t, r, out)


# --- derivatives (see _autograd_support.pxi) -------------------------------------------

cdef object reduce_entry(Op op):
    def entry(a, dim, keepdim, dtype=None, out=None):
        return reduce_op(op, a, dim, keepdim, dtype, out)
    return entry


cdef object scan_entry(Op op):
    def entry(a, dim, dtype=None):
        return scan_op(op, a, dim, dtype)
    return entry


cdef tuple kept_shape(object shape, object dim):
    """`shape` with the reduced dims (None or () = all) set to 1."""
    cdef int n = len(shape)
    if dim is None or dim == () or dim == []:
        return (1,) * n
    dims = (dim,) if not isinstance(dim, (tuple, list)) else dim
    red = {wrap_dim(d, n, "sum") for d in dims}
    return tuple(1 if i in red else shape[i] for i in range(n))


cdef object unreduce(object g, object shape, object dim):
    """A reduction's gradient (keepdim or not) broadcast back over the input's shape."""
    return reshape_c(g, (kept_shape(shape, dim),)).expand(shape)


def _d_sum(ctx, g):
    a_shape = ctx.shapes[0]
    return (unreduce(g, a_shape, ctx.args[1]),)


def _d_mean(ctx, g):
    a_shape, dim = ctx.shapes[0], ctx.args[1]
    n = 1
    for s, k in zip(a_shape, kept_shape(a_shape, dim)):
        n *= s if k == 1 else 1
    return (unreduce(g, a_shape, dim) / max(n, 1),)     # n == 0: the gradient is empty


def _d_prod(ctx, g):
    """d prod / d a_i = prod of the others; exact with zeros (one zero: the product of the
    rest; two or more: 0)."""
    a = ctx.args[0]
    dim = ctx.args[1]
    kept = kept_shape(a.shape, dim)
    red = () if dim is None else dim
    r = reshape_c(ctx.result, (kept,))
    gk = reshape_c(g, (kept,))
    zero = a == 0
    nonzero_prod = reduce_op(op_prod, where(zero, 1.0, a), red, True, None, None)
    nzeros = reduce_op(op_sum, zero, red, True, None, None)
    others = where(zero, where(nzeros == 1, nonzero_prod, 0.0), r / where(zero, 1.0, a))
    return (gk * others,)


def _d_amax(ctx, g):
    """amax/amin: the gradient is split evenly between the elements equal to the result."""
    a, dim = ctx.args[0], ctx.args[1]
    kept = kept_shape(a.shape, dim)
    hit = a == reshape_c(ctx.result, (kept,))
    count = reduce_op(op_sum, hit, () if dim is None else dim, True, None, None)
    return (reshape_c(g, (kept,)) * hit / count,)


def _d_cumsum(ctx, g):
    """Reverse cumulative sum of g along dim: total - running + own."""
    if g.dim() == 0:
        return (g,)
    return (_reverse_cumsum(g, ctx.args[1]),)


def _d_cumprod(ctx, g):
    """Exact with zeros (PyTorch's rule).  Along the dim, with z the first zero: at nonzero
    inputs, reverse-cumsum(g * result) / input (0 past z, with the right derivative in
    input[z]); at z, the reverse cumsum from z of g times the running product with input[z]
    read as 1; at later zeros, 0."""
    a, dim = ctx.args[0], ctx.args[1]
    if a.dim() == 0:
        return (g,)
    zero = a == 0
    ga = _reverse_cumsum(g * ctx.result, dim) / where(zero, 1.0, a)
    if (<TensorBase>zero)._bt is None and not bool(zero.any()):    # (vmap: the general one)
        return (ga,)
    first = zero & (scan_op(op_cumsum, zero, dim, None) == 1)
    at_first = _reverse_cumsum(g * scan_op(op_cumprod, where(first, 1.0, a), dim, None), dim)
    return (where(zero, where(first, at_first, 0.0), ga),)


cdef object _reverse_cumsum(object x, object dim):
    return x.sum(dim, keepdim=True) - scan_op(op_cumsum, x, dim, None) + x


def _d_cummax(ctx, g):
    """cummax/cummin: each output's gradient goes to the position its value came from."""
    dim, indices, g = ctx.args[1], ctx.saved_result(1), g[0]
    if g.dim() == 0:
        return (g,)
    return (scatter_add(zeros(ctx.shapes[0], dtype=g.dtype, device=g.device), dim, indices,
                        g),)


derive(op_sum, _d_sum, reduce_entry(op_sum), 0)
derive(op_mean, _d_mean, reduce_entry(op_mean), 0)
derive(op_prod, _d_prod, reduce_entry(op_prod), SAVE_INPUTS | SAVE_RESULT)
derive(op_amax, _d_amax, reduce_entry(op_amax), SAVE_INPUTS | SAVE_RESULT)
derive(op_amin, _d_amax, reduce_entry(op_amin), SAVE_INPUTS | SAVE_RESULT)
derive(op_cumsum, _d_cumsum, scan_entry(op_cumsum), 0)
derive(op_cumprod, _d_cumprod, scan_entry(op_cumprod), SAVE_INPUTS | SAVE_RESULT)
derive(op_cummax, _d_cummax, scan_entry(op_cummax), SAVE_RESULT)
derive(op_cummin, _d_cummax, scan_entry(op_cummin), SAVE_RESULT)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_argmax.entry = reduce_entry(op_argmax)
op_argmin.entry = reduce_entry(op_argmin)
