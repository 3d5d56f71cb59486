# The softmax family as explicit ("hot composite") ops: softmax, log_softmax and their
# backward ops.  A backend's optional fused `softmax` kernel runs them along the last dim
# (the core swaps `dim` there in the kernel's view); a backend that leaves the entry NULL
# gets the composite below, written in primitives and max-subtracted so exp never
# overflows.  The backward ops are PyTorch's _softmax_backward_data and
# _log_softmax_backward_data, which the autograd layer uses as the derivatives.

cdef Op op_softmax = Op("softmax", "softmax(Tensor self, int dim, ScalarType? dtype=None) "
                        "-> Tensor", FAMILY_SOFTMAX, EMBER_SOFTMAX, _rules.elementwise)
cdef Op op_log_softmax = Op("log_softmax", "log_softmax(Tensor self, int dim, ScalarType? "
                            "dtype=None) -> Tensor", FAMILY_SOFTMAX, EMBER_LOG_SOFTMAX,
                            _rules.elementwise)
cdef Op op_softmax_backward = Op(
    "_softmax_backward_data", "_softmax_backward_data(Tensor grad_output, Tensor output, "
    "int dim, ScalarType input_dtype) -> Tensor", FAMILY_SOFTMAX, EMBER_SOFTMAX_BACKWARD,
    _rules.elementwise)
cdef Op op_log_softmax_backward = Op(
    "_log_softmax_backward_data", "_log_softmax_backward_data(Tensor grad_output, Tensor "
    "output, int dim, ScalarType input_dtype) -> Tensor", FAMILY_SOFTMAX,
    EMBER_LOG_SOFTMAX_BACKWARD, _rules.elementwise)

# PyTorch's kernel names, which its dtype errors quote (by op code)
cdef tuple _SOFTMAX_KERNELS = ("softmax", "log_softmax", "softmax_backward",
                               "log_softmax_backward")


cdef object softmax_composite(int code, TensorBase a, TensorBase b, int d):
    """The default implementation, in primitives; float16/bfloat16 compute in float32."""
    cdef dtype dt = a._dtype
    if dt.itemsize == 2:
        a = cast_to(a, _dtypes.float32)
        b = None if b is None else cast_to(b, _dtypes.float32)
    if code == EMBER_SOFTMAX or code == EMBER_LOG_SOFTMAX:
        shifted = a - reduce_op(op_amax, a, d, True, None, None)
        e = unary_op(op_exp, shifted, None)
        total = reduce_op(op_sum, e, d, True, None, None)
        r = e / total if code == EMBER_SOFTMAX else shifted - unary_op(op_log, total, None)
    elif code == EMBER_SOFTMAX_BACKWARD:
        r = b * (a - reduce_op(op_sum, a * b, d, True, None, None))
    else:
        r = a - unary_op(op_exp, b, None) * reduce_op(op_sum, a, d, True, None, None)
    return cast_to(r, dt)


cdef int last_dim_view(TensorBase t, int d, ember_view* v) except -1:
    """t as the kernel sees it: dim d swapped with the last (a 0-d tensor: one 1-long row)."""
    t.view_c(v)
    cdef int last = t._ndim - 1
    if t._ndim == 0:
        v.ndim = 1
        v.sizes[0] = 1
        v.strides[0] = 1
        return 0
    v.sizes[d], v.sizes[last] = v.sizes[last], v.sizes[d]
    v.strides[d], v.strides[last] = v.strides[last], v.strides[d]
    return 0


cdef object softmax_op(Op op, TensorBase a, TensorBase b, int d, dtype ct, dtype rt):
    """a: the input (grad_output), b: None (output); computes in ct, returns rt."""
    if not ct.is_floating_point:
        lastdim = "_lastdim" if d == a._ndim - 1 or a._ndim == 0 else ""
        raise NotImplementedError(f'"{_SOFTMAX_KERNELS[op.code]}{lastdim}_kernel_impl" not '
                                  f"implemented for '{st_name(ct)}'")
    cdef TensorBase x = cast_to(a, ct)
    cdef TensorBase y = None if b is None else cast_to(b, ct)
    cdef TensorBase o = empty_c(a._ndim, a._sizes, ct, a._device)
    if o.numel_c() == 0 or o._backend.is_meta:
        return cast_to(o, rt)
    cdef ember_kernel_table* t = o._backend.kernels()
    if t.softmax is NULL:
        return cast_to(softmax_composite(op.code, x, y, d), rt)
    cdef ember_view vo, va, vb
    last_dim_view(o, d, &vo)
    last_dim_view(x, d, &va)
    if y is not None:
        last_dim_view(y, d, &vb)
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    cdef const ember_view* pb = &vb if y is not None else NULL
    if o.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.softmax(&ctx, op.code, &vo, &va, pb)
    else:
        rc = t.softmax(&ctx, op.code, &vo, &va, pb)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:       # this op or dtype: the composite
        return cast_to(softmax_composite(op.code, x, y, d), rt)
    if rc:
        raise_kernel_error(rc, &ctx)
    return cast_to(o, rt)


cdef object softmax_forward(Op op, object input, object dim, object dtype_arg):
    cdef TensorBase a = as_tensor_arg(input, op.name, "input")
    cdef object kernel = routed(op, a)
    if kernel is not None:
        return kernel(a, dim, dtype_arg)
    if dim is None:
        raise TypeError(f"{op.name}() missing required argument 'dim'")
    cdef dtype ct = a._dtype if dtype_arg is None else as_dtype(dtype_arg, op.name, "dtype")
    return softmax_op(op, a, None, wrap_dim(dim, a._ndim, op.name), ct, ct)


cdef object softmax_backward(Op op, object grad_output, object output, object dim,
                             object input_dtype):
    cdef TensorBase g = as_tensor_arg(grad_output, op.name, "grad_output")
    cdef TensorBase o = as_tensor_arg(output, op.name, "output")
    cdef int k = op.resolve(effective_keys(g._keys | o._keys))
    if (op._kernel_mask >> k) & 1:
        return op._table[k](g, o, dim, input_dtype)
    cdef dtype rt = as_dtype(input_dtype, op.name, "input_dtype")
    if g.shape != o.shape:
        raise RuntimeError(f"Expected tensor for argument #1 'grad_output' to have same size "
                           f"as tensor for argument #2 'output'; but {list(g.shape)} does not "
                           f"equal {list(o.shape)} (while checking arguments for {op.name})")
    if g._device != o._device:
        raise RuntimeError(f"{op.name}: expected grad_output and output on the same device, "
                           f"but got {g._device} and {o._device}")
    if g._dtype is not o._dtype:
        raise RuntimeError(f"{op.name}: expected grad_output and output to have the same "
                           f"dtype, but got {st_name(g._dtype)} and {st_name(o._dtype)}")
    return softmax_op(op, g, o, wrap_dim(dim, g._ndim, op.name), g._dtype, rt)


def softmax(input, dim=None, dtype=None, *, out=None, axis=None):
    """exp(input) / sum(exp(input)) along ``dim`` (``axis``), computed stably (the row
    maximum is subtracted first); ``dtype`` casts ``input`` before the op."""
    if dim is None or axis is not None:
        dim = _dim_or_axis("softmax", dim, axis)
    r = softmax_forward(op_softmax, input, dim, dtype)
    return r if out is None else _result_out(r, out, "softmax")


def log_softmax(input, dim=None, dtype=None, *, out=None, axis=None):
    """log(softmax(input)) along ``dim`` (``axis``), computed stably; ``dtype`` casts
    ``input`` first."""
    if dim is None or axis is not None:
        dim = _dim_or_axis("log_softmax", dim, axis)
    r = softmax_forward(op_log_softmax, input, dim, dtype)
    return r if out is None else _result_out(r, out, "log_softmax")


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of softmax: output * (grad_output - sum(grad_output * output, dim)),
    as ``input_dtype``."""
    return softmax_backward(op_softmax_backward, grad_output, output, dim, input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of log_softmax: grad_output - exp(output) * sum(grad_output, dim), as
    ``input_dtype``."""
    return softmax_backward(op_log_softmax_backward, grad_output, output, dim, input_dtype)


def _softmax_composite(str name, a, b, dim):
    """The default (composite) implementation of softmax-family op ``name``, whatever the
    backend provides: lets tests compare a fused kernel with it."""
    cdef Op op = get_op(name)
    cdef TensorBase x = as_tensor_arg(a, name, "a")
    return softmax_composite(op.code, x, None if b is None else as_tensor_arg(b, name, "b"),
                             wrap_dim(dim, x._ndim, name))


# --- derivatives (see _autograd_support.pxi): the fused backward kernels in plain
# backward; the same formulas in primitives when the backward itself is recorded
# (create_graph), so they can be differentiated again ---

def _d_softmax(ctx, g):
    r, dim = ctx.result, ctx.args[1]
    if is_grad_enabled_c():
        return (r * (g - (g * r).sum(dim, keepdim=True)),)
    return (softmax_backward(op_softmax_backward, g, r, dim, r.dtype),)


def _d_log_softmax(ctx, g):
    r, dim = ctx.result, ctx.args[1]
    if is_grad_enabled_c():
        return (g - r.exp() * g.sum(dim, keepdim=True),)
    return (softmax_backward(op_log_softmax_backward, g, r, dim, r.dtype),)


derive(op_softmax, _d_softmax,
       lambda a, dim, dtype=None: softmax_forward(op_softmax, a, dim, dtype), SAVE_RESULT)
derive(op_log_softmax, _d_log_softmax,
       lambda a, dim, dtype=None: softmax_forward(op_log_softmax, a, dim, dtype), SAVE_RESULT)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_softmax_backward.entry = _softmax_backward_data
op_log_softmax_backward.entry = _log_softmax_backward_data
