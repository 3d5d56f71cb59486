# Normalisation layers as explicit ("hot composite") ops: native_layer_norm,
# native_batch_norm and their backward ops (PyTorch's names and argument order).  A
# backend's optional fused `norm` kernel runs them on C-contiguous [M, N] (layer) or
# [B, C, L] (batch) views; a backend that leaves the entry NULL gets the composites below,
# written in primitives.  float16/bfloat16 compute in float32; mean/rstd come back in the
# compute type.  The derivative formulas call the backward ops in plain backward and the
# composite (recomputing the statistics from the input) when the backward is itself
# recorded, so double backward works.

cdef Op op_native_layer_norm = Op(
    "native_layer_norm", "native_layer_norm(Tensor input, SymInt[] normalized_shape, "
    "Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)", FAMILY_NORM,
    EMBER_LAYER_NORM, None)
cdef Op op_native_layer_norm_backward = Op(
    "native_layer_norm_backward", "native_layer_norm_backward(Tensor grad_out, Tensor input, "
    "SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, "
    "bool[3] output_mask) -> (Tensor, Tensor, Tensor)", FAMILY_NORM,
    EMBER_LAYER_NORM_BACKWARD, None)
cdef Op op_native_batch_norm = Op(
    "native_batch_norm", "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, "
    "Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) "
    "-> (Tensor, Tensor, Tensor)", FAMILY_NORM, EMBER_BATCH_NORM_STATS, None)
cdef Op op_native_batch_norm_backward = Op(
    "native_batch_norm_backward", "native_batch_norm_backward(Tensor grad_out, Tensor input, "
    "Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, "
    "Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)", FAMILY_NORM, EMBER_BATCH_NORM_BACKWARD, None)


cdef bint has_fused(TensorBase t, bint nll):
    """Whether t's backend fills the optional `norm` (or `nll`) entry."""
    if t._backend.is_meta:
        return False
    cdef ember_kernel_table* tab = t._backend.kernels()
    return (tab.nll if nll else tab.norm) is not NULL


cdef bint call_fused(bint nll, int code, list tensors, double eps,
                     int64_t ignore_index) except -1:
    """Run the `norm` (or `nll`) entry on `tensors` (None: a NULL slot); False when the
    kernel answers "not implemented" for this op or dtype (the caller runs its composite)."""
    cdef ember_view views[8]
    cdef const ember_view* ptrs[8]
    cdef TensorBase t = None
    cdef int k, rc
    cdef int64_t work = 0
    cdef ember_ctx ctx
    cdef str op = "nll_loss" if nll else ("layer_norm" if code <= EMBER_LAYER_NORM_BACKWARD
                                         else "batch_norm")
    for k in range(8):
        ptrs[k] = NULL
        if k < len(tensors) and tensors[k] is not None:
            if t is not None:               # the kernel reads every operand on one device
                same_device(op, t, <TensorBase>tensors[k])
            t = <TensorBase>tensors[k]
            t.view_c(&views[k])
            ptrs[k] = &views[k]
            work = max(work, t.numel_c())
    cdef ember_kernel_table* tab = t._backend.kernels()
    init_ctx(&ctx, t)
    if work > GIL_CUTOFF:
        with nogil:
            rc = (tab.nll(&ctx, code, ptrs, ignore_index) if nll else
                  tab.norm(&ctx, code, ptrs, eps))
    else:
        rc = tab.nll(&ctx, code, ptrs, ignore_index) if nll else tab.norm(&ctx, code, ptrs, eps)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return False
    if rc:
        raise_kernel_error(rc, &ctx)
    return True


cdef dtype norm_compute_type(TensorBase x, str op):
    if not x._dtype.is_floating_point:
        raise RuntimeError(f'"{op}" not implemented for \'{st_name(x._dtype)}\'')
    return _dtypes.float32 if x._dtype.itemsize == 2 else x._dtype


cdef object to_dt(object t, dtype dt):
    """t as dtype dt through the differentiable `to` (itself when it already is)."""
    return t if (<TensorBase>t)._dtype is dt else t.to(dt)


cdef object as_ct(object t, dtype ct, object shape):
    """t (or None) as a contiguous tensor of `ct` with `shape`."""
    if t is None:
        return None
    return to_dt(t, ct).contiguous().reshape(shape)


cdef object new_like_shape(object shape, dtype ct, TensorBase like):
    return empty(shape, dtype=ct, device=like._device)


cdef tuple norm_stats(object x, tuple red, double eps):
    """(mean, rstd) over dims `red`, kept: the composite statistics (biased variance)."""
    mean = x.mean(red, keepdim=True)
    d = x - mean
    return mean, ((d * d).mean(red, keepdim=True) + eps).rsqrt()


cdef tuple norm_backward_composite(object g, object x, object mean, object rstd, object w,
                                   tuple red, tuple pred, bint batch_stats, tuple mask):
    """(gx, gw, gb) of y = (x - mean) * rstd * w + b in primitives: statistics over `red`
    (batch_stats: they depend on x), parameter gradients summed over `pred`."""
    xhat = (x - mean) * rstd
    h = g if w is None else g * w
    gx = gw = gb = None
    if mask[0]:
        if batch_stats:
            gx = rstd * (h - h.mean(red, keepdim=True)
                         - xhat * (h * xhat).mean(red, keepdim=True))
        else:
            gx = h * rstd
    if mask[1]:
        gw = (g * xhat).sum(pred)
    if mask[2]:
        gb = g.sum(pred)
    return gx, gw, gb


# --- layer norm ---------------------------------------------------------------------------

cdef tuple ln_shapes(TensorBase x, object normalized_shape, object weight, object bias):
    """(M, N, leading shape) after PyTorch's checks of normalized_shape/weight/bias."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = tuple(int(s) for s in normalized_shape)
    cdef int k = len(ns)
    shape = tuple(x.shape)
    for p, name in ((weight, "weight"), (bias, "bias")):
        if p is not None and tuple(p.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(ns)}")
    if k == 0 or len(shape) < k or shape[len(shape) - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size"
                           f"{list(shape)}")
    lead = shape[:len(shape) - k]
    cdef int64_t M = 1, N = 1
    for s in lead:
        M *= s
    for s in ns:
        N *= s
    return M, N, lead, ns


cdef tuple layer_norm_impl(object input, object normalized_shape, object weight, object bias,
                           double eps):
    cdef TensorBase x = as_tensor_arg(input, "native_layer_norm", "input")
    M, N, lead, ns = ln_shapes(x, normalized_shape, weight, bias)
    cdef dtype ct = norm_compute_type(x, "LayerNormKernelImpl")
    x2 = as_ct(x, ct, (M, N))
    w = as_ct(weight, ct, (N,))
    b = as_ct(bias, ct, (N,))
    cdef bint done = False
    if has_fused(x, False):
        y = new_like_shape((M, N), ct, x)
        mean = new_like_shape((M,), ct, x)
        rstd = new_like_shape((M,), ct, x)
        done = call_fused(False, EMBER_LAYER_NORM, [y, mean, rstd, x2, w, b], eps, 0)
    if not done:
        mean, rstd = norm_stats(x2, (1,), eps)
        y = (x2 - mean) * rstd
        y = y if w is None else y * w
        y = y if b is None else y + b
    stat_shape = lead + (1,) * len(ns)
    return (to_dt(y.reshape(x.shape), x._dtype), mean.reshape(stat_shape),
            rstd.reshape(stat_shape))


cdef tuple layer_norm_backward_impl(object grad_out, object input, object normalized_shape,
                                    object mean, object rstd, object weight, object bias,
                                    object output_mask, bint composite):
    cdef TensorBase x = as_tensor_arg(input, "native_layer_norm_backward", "input")
    cdef TensorBase g = as_tensor_arg(grad_out, "native_layer_norm_backward", "grad_out")
    M, N, lead, ns = ln_shapes(x, normalized_shape, weight, bias)
    if tuple(g.shape) != tuple(x.shape):
        raise RuntimeError(f"native_layer_norm_backward: grad_out of shape {list(g.shape)} "
                           f"does not match input of shape {list(x.shape)}")
    mask = tuple(bool(m) for m in output_mask)
    cdef dtype ct = norm_compute_type(x, "LayerNormBackwardKernelImpl")
    g2, x2 = as_ct(g, ct, (M, N)), as_ct(x, ct, (M, N))
    w = as_ct(weight, ct, (N,))
    mask = (mask[0], mask[1] and weight is not None, mask[2] and bias is not None)
    cdef bint done = False
    if not composite and has_fused(x, False):
        gx = new_like_shape((M, N), ct, x) if mask[0] else None
        gw = new_like_shape((N,), ct, x) if mask[1] else None
        gb = new_like_shape((N,), ct, x) if mask[2] else None
        done = call_fused(False, EMBER_LAYER_NORM_BACKWARD,
                          [gx, gw, gb, g2, x2, as_ct(mean, ct, (M,)), as_ct(rstd, ct, (M,)), w],
                          0, 0)
    if not done:
        gx, gw, gb = norm_backward_composite(g2, x2, as_ct(mean, ct, (M, 1)),
                                             as_ct(rstd, ct, (M, 1)), w, (1,), (0,), True, mask)
    return (None if gx is None else to_dt(gx.reshape(x.shape), x._dtype),
            None if gw is None else to_dt(gw.reshape(ns), (<TensorBase>weight)._dtype),
            None if gb is None else to_dt(gb.reshape(ns), (<TensorBase>bias)._dtype))


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd) of layer normalisation over the trailing ``normalized_shape``
    dims: output = (input - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + eps)."""
    kernel = routed_n(op_native_layer_norm, (input, weight, bias))
    if kernel is not None:
        return kernel(input, normalized_shape, weight, bias, eps)
    return layer_norm_impl(input, normalized_shape, weight, bias, eps)


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """(grad_input, grad_weight, grad_bias) of native_layer_norm; None where output_mask
    is False (or the parameter is None)."""
    kernel = routed_n(op_native_layer_norm_backward, (grad_out, input, mean, rstd, weight))
    if kernel is not None:
        return kernel(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
    return layer_norm_backward_impl(grad_out, input, normalized_shape, mean, rstd, weight,
                                    bias, output_mask, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Layer normalisation over the last ``len(normalized_shape)`` dims of ``input``, then
    the elementwise affine ``weight`` and ``bias`` (each of shape ``normalized_shape``)."""
    cdef TensorBase x = as_tensor_arg(input, "layer_norm", "input")
    if not (same_dtype_or_none(x, weight) and same_dtype_or_none(x, bias)):
        refuse_param_dtypes(x, weight, bias)
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


cdef inline bint same_dtype_or_none(TensorBase x, object p):
    return p is None or not isinstance(p, TensorBase) or (<TensorBase>p)._dtype is x._dtype


cdef int refuse_param_dtypes(TensorBase x, object weight, object bias) except -1:
    """PyTorch's CPU rule for a norm's parameters of another dtype than the input: allowed
    only as float32 ones for a float16/bfloat16 input (its "mixed dtype" mode)."""
    if x._device.type != "cpu":
        return 0
    given = [p for p in (weight, bias) if p is not None]
    if given[0].dtype is not x._dtype:
        if any(p.dtype is not _dtypes.float32 for p in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               "Float")
        if x._dtype.name not in ("float16", "bfloat16"):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return 0
    raise RuntimeError(f"expected scalar type {st_name(x._dtype)} but found "
                       f"{st_name(given[1].dtype)}")


# --- batch norm ---------------------------------------------------------------------------

cdef tuple bn_shape(TensorBase x, tuple params, str op):
    """(B, C, L): input as [batch, channels, the rest]; checks every per-channel tensor."""
    if x._ndim < 2:
        raise ValueError(f"{op}: expected input with at least 2 dims (N, C, ...), got "
                         f"{x._ndim}D input")
    cdef int64_t B = x._sizes[0], C = x._sizes[1], L = 1
    cdef int i
    for i in range(2, x._ndim):
        L *= x._sizes[i]
    for p, name in zip(params, ("weight", "bias", "running_mean", "running_var")):
        if p is not None and (<TensorBase>as_tensor_arg(p, op, name)).numel_c() != C:
            raise RuntimeError(f"{name} should contain {C} elements not "
                               f"{(<TensorBase>p).numel_c()}")
    return B, C, L


cdef tuple batch_norm_impl(object input, object weight, object bias, object running_mean,
                           object running_var, bint training, double momentum, double eps):
    cdef TensorBase x = as_tensor_arg(input, "native_batch_norm", "input")
    B, C, L = bn_shape(x, (weight, bias, running_mean, running_var), "native_batch_norm")
    cdef dtype ct = norm_compute_type(x, "batch_norm")
    cdef bint fused = has_fused(x, False)
    cdef bint done = False
    x3 = as_ct(x, ct, (B, C, L))
    w, b = as_ct(weight, ct, (C,)), as_ct(bias, ct, (C,))
    if training:
        if B * L == 0:
            raise RuntimeError(f"native_batch_norm: the input of shape {list(x.shape)} has no "
                               "values per channel to compute batch statistics from")
        done = False
        if fused:
            mean, invstd = new_like_shape((C,), ct, x), new_like_shape((C,), ct, x)
            done = call_fused(False, EMBER_BATCH_NORM_STATS, [mean, invstd, x3], eps, 0)
        if not done:
            mean, invstd = norm_stats(x3, (0, 2), eps)
            mean, invstd = mean.reshape(C), invstd.reshape(C)
        n = B * L
        new_mean = None if running_mean is None else \
            running_mean * (1 - momentum) + mean * momentum
        new_var = None if running_var is None else \
            running_var * (1 - momentum) + ((invstd * invstd).reciprocal() - eps) * (
                momentum * n / max(n - 1, 1))
        # the running stats are the op's own outputs (PyTorch's native op writes them in its
        # kernel): a function transform lets it write them even when they were captured
        level = set_func_level_c(0)
        try:
            if running_mean is not None:
                running_mean.copy_(new_mean)
            if running_var is not None:
                running_var.copy_(new_var)
        finally:
            set_func_level_c(level)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("native_batch_norm: running_mean and running_var must be "
                               "defined in evaluation mode")
        mean = as_ct(running_mean, ct, (C,)).clone()
        invstd = (as_ct(running_var, ct, (C,)) + eps).rsqrt()
    done = False
    if fused:
        y = new_like_shape((B, C, L), ct, x)
        done = call_fused(False, EMBER_BATCH_NORM_APPLY, [y, x3, mean, invstd, w, b], eps, 0)
    if not done:
        y = (x3 - mean.reshape(1, C, 1)) * invstd.reshape(1, C, 1)
        y = y if w is None else y * w.reshape(1, C, 1)
        y = y if b is None else y + b.reshape(1, C, 1)
    return to_dt(y.reshape(x.shape), x._dtype), mean, invstd


cdef tuple batch_norm_backward_impl(object grad_out, object input, object weight,
                                    object running_mean, object running_var, object save_mean,
                                    object save_invstd, bint train, double eps,
                                    object output_mask, bint composite):
    cdef TensorBase x = as_tensor_arg(input, "native_batch_norm_backward", "input")
    cdef TensorBase g = as_tensor_arg(grad_out, "native_batch_norm_backward", "grad_out")
    B, C, L = bn_shape(x, (weight, None, running_mean, running_var),
                       "native_batch_norm_backward")
    if tuple(g.shape) != tuple(x.shape):
        raise RuntimeError(f"native_batch_norm_backward: grad_out of shape {list(g.shape)} "
                           f"does not match input of shape {list(x.shape)}")
    cdef dtype ct = norm_compute_type(x, "batch_norm_backward")
    mask = tuple(bool(m) for m in output_mask)
    mask = (mask[0], mask[1] and weight is not None, mask[2])
    if save_mean is None or save_invstd is None:
        if train or running_mean is None or running_var is None:
            raise RuntimeError("native_batch_norm_backward: needs save_mean and save_invstd "
                               "(or, in evaluation mode, running_mean and running_var)")
        save_mean, save_invstd = running_mean, (as_ct(running_var, ct, (C,)) + eps).rsqrt()
    g3, x3 = as_ct(g, ct, (B, C, L)), as_ct(x, ct, (B, C, L))
    w = as_ct(weight, ct, (C,))
    mean, invstd = as_ct(save_mean, ct, (C,)), as_ct(save_invstd, ct, (C,))
    cdef bint done = False
    if not composite and has_fused(x, False):
        gx = new_like_shape((B, C, L), ct, x) if mask[0] else None
        gw = new_like_shape((C,), ct, x) if mask[1] else None
        gb = new_like_shape((C,), ct, x) if mask[2] else None
        done = call_fused(False, EMBER_BATCH_NORM_BACKWARD if train else
                          EMBER_BATCH_NORM_BACKWARD_EVAL, [gx, gw, gb, g3, x3, mean, invstd, w],
                          eps, 0)
    if not done:
        gx, gw, gb = norm_backward_composite(
            g3, x3, mean.reshape(1, C, 1), invstd.reshape(1, C, 1),
            None if w is None else w.reshape(1, C, 1), (0, 2), (0, 2), train, mask)
    pdt = x._dtype if weight is None else (<TensorBase>weight)._dtype
    return (None if gx is None else to_dt(gx.reshape(x.shape), x._dtype),
            None if gw is None else to_dt(gw.reshape(weight.shape), pdt),
            None if gb is None else to_dt(gb.reshape(C), pdt))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """(output, save_mean, save_invstd) of batch normalisation over every dim but the
    channel dim 1.  training: batch statistics, and running_mean/running_var (when given)
    are updated in place with ``momentum`` (the variance unbiased); otherwise the running
    statistics are used (and returned as save_mean and 1 / sqrt(running_var + eps))."""
    kernel = routed_n(op_native_batch_norm, (input, weight, bias))
    if kernel is not None:
        # the running statistics travel as keywords: autograd does not save them (they
        # change in place at every training step and never get a gradient)
        return kernel(input, weight, bias, training=training, momentum=momentum, eps=eps,
                      running_mean=running_mean, running_var=running_var)
    return batch_norm_impl(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    """(grad_input, grad_weight, grad_bias) of native_batch_norm; None where output_mask
    is False (or weight is None, for grad_weight)."""
    kernel = routed_n(op_native_batch_norm_backward,
                      (grad_out, input, weight, save_mean, save_invstd))
    if kernel is not None:
        return kernel(grad_out, input, weight, running_mean, running_var, save_mean,
                      save_invstd, train, eps, output_mask)
    return batch_norm_backward_impl(grad_out, input, weight, running_mean, running_var,
                                    save_mean, save_invstd, train, eps, output_mask, False)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Batch normalisation of ``input`` (N, C, ...) per channel; see native_batch_norm."""
    cdef TensorBase x = as_tensor_arg(input, "batch_norm", "input")
    cdef int64_t others = 1
    cdef int i
    for i in range(x._ndim):
        if i != 1:
            others *= x._sizes[i]
    if training and x._ndim >= 2 and others == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {x.shape}")
    if x.numel_c() == 0 and x._ndim >= 2:
        # an empty batch: no statistics to take or update; a new tensor, on the autograd
        # path through the affine parameters, as PyTorch's
        r = x.clone()
        if weight is not None:
            r = r * weight[0]
        if bias is not None:
            r = r + bias[0]
        return r
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


def _norm_composite(str name, *args):
    """The default (composite) implementation of norm op ``name`` whatever the backend
    provides: lets tests compare a fused kernel with it."""
    if name == "native_layer_norm_backward":
        return layer_norm_backward_impl(args[0], args[1], args[2], args[3], args[4], args[5],
                                        args[6], args[7], True)
    if name == "native_batch_norm_backward":
        return batch_norm_backward_impl(args[0], args[1], args[2], args[3], args[4], args[5],
                                        args[6], args[7], args[8], args[9], True)
    raise ValueError(f"_norm_composite: no composite named {name!r}")


# --- derivatives --------------------------------------------------------------------------

def _d_native_layer_norm(ctx, g):
    x, normalized_shape, w, b, eps = ctx.args
    mean, rstd = ctx.saved_result(1), ctx.saved_result(2)    # not the output (in place)
    need = tuple(ctx.needs_input_grad) + (False,) * 4
    mask = (need[0], need[2], need[3])
    if is_grad_enabled_c():
        # recompute the statistics from x (recorded), so double backward sees them move
        M, N, lead, ns = ln_shapes(x, normalized_shape, w, b)
        mean, rstd = norm_stats(x.reshape(M, N), (1,), eps)
        gx, gw, gb = layer_norm_backward_impl(g[0], x, normalized_shape, mean, rstd, w, b,
                                              mask, True)
    else:
        gx, gw, gb = native_layer_norm_backward(g[0], x, normalized_shape, mean, rstd, w, b,
                                                mask)
    return gx, None, gw, gb


def _d_native_batch_norm(ctx, g):
    x, w, b = ctx.args[:3]
    training, eps = ctx.kwargs["training"], ctx.kwargs["eps"]
    mean, invstd = ctx.saved_result(1), ctx.saved_result(2)
    mask = (tuple(ctx.needs_input_grad) + (False,) * 3)[:3]
    if is_grad_enabled_c():
        if training:
            B, C, L = bn_shape(x, (), "native_batch_norm")
            mean, invstd = norm_stats(x.reshape(B, C, L), (0, 2), eps)
        else:
            mean, invstd = mean.detach(), invstd.detach()
        return batch_norm_backward_impl(g[0], x, w, None, None, mean.reshape(-1),
                                        invstd.reshape(-1), training, eps, mask, True)
    return native_batch_norm_backward(g[0], x, w, None, None, mean, invstd, training, eps,
                                      mask)


# the entries route again (Autograd excluded): a weight that requires grad beside a vmap
# wrapper reaches the batching rule (the raw implementations read one sample's view of the
# batch's storage)
derive(op_native_layer_norm, _d_native_layer_norm,
       lambda x, ns, w, b, eps: native_layer_norm(x, ns, w, b, eps), SAVE_INPUTS | SAVE_RESULT)
derive(op_native_batch_norm, _d_native_batch_norm,
       lambda input, weight, bias, **kw: native_batch_norm(
           input, weight, bias, kw["running_mean"], kw["running_var"], kw["training"],
           kw["momentum"], kw["eps"]),
       SAVE_INPUTS | SAVE_RESULT)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_native_layer_norm_backward.entry = native_layer_norm_backward
op_native_batch_norm_backward.entry = native_batch_norm_backward
