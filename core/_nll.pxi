# Negative log-likelihood over class-index targets as explicit ops: nll_loss_forward /
# nll_loss_backward (PyTorch's names) and _cross_entropy_forward / _cross_entropy_backward
# (log_softmax fused into nll; PyTorch composes cross_entropy from log_softmax + nll_loss,
# so its gradient is the same).  Classes are dim 1 of input (N, C, d1, ...) or dim 0 of a
# (C,) input; the core moves them last and flattens the rest into rows.  A backend's
# optional fused `nll` kernel runs the rows; otherwise the composites below (gather and
# scatter over log_softmax) do.  Reductions follow PyTorch: 'mean' divides by the summed
# weights of the non-ignored targets (NaN when there are none), 'sum' adds, 'none' keeps
# target's shape.  Reduction codes: 0 none, 1 mean, 2 sum (PyTorch's Reduction enum).

cdef Op op_nll_loss_forward = Op(
    "nll_loss_forward", "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, "
    "int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
    FAMILY_NLL, EMBER_NLL, None)
cdef Op op_nll_loss_backward = Op(
    "nll_loss_backward", "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
    "Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
    FAMILY_NLL, EMBER_NLL_BACKWARD, None)
cdef Op op_cross_entropy_forward = Op(
    "_cross_entropy_forward", "_cross_entropy_forward(Tensor self, Tensor target, Tensor? "
    "weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
    FAMILY_NLL, EMBER_CROSS_ENTROPY, None)
cdef Op op_cross_entropy_backward = Op(
    "_cross_entropy_backward", "_cross_entropy_backward(Tensor grad_output, Tensor self, "
    "Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) "
    "-> Tensor", FAMILY_NLL, EMBER_CROSS_ENTROPY_BACKWARD, None)


cdef tuple nll_rows(str op, object input, object target, object weight, object reduction):
    """(rows [R, C] of input in its compute type, target [R] int64, weight [C] or None,
    C) after PyTorch's checks."""
    cdef TensorBase x = as_tensor_arg(input, op, "self")
    cdef TensorBase t = as_tensor_arg(target, op, "target")
    if reduction not in (0, 1, 2):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got "
                         f"{reduction!r}")
    if t._dtype is not _dtypes.int64 and t._dtype is not _dtypes.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{st_name(t._dtype)}")
    if not x._dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}\" not implemented for '{st_name(x._dtype)}'")
    if x._ndim < 1:
        raise RuntimeError(f"{op}: input tensor should be 1D or more, got 0D")
    if x._ndim == 1:
        if t._ndim > 1:
            raise RuntimeError(f"{op}: 0D or 1D target tensor expected, multi-target not "
                               "supported")
    elif t._ndim == 0 or t._sizes[0] != x._sizes[0]:
        raise ValueError(f"Expected input batch_size ({x._sizes[0]}) to match target "
                         f"batch_size ({t._sizes[0] if t._ndim else 0}).")
    elif tuple(t.shape) != tuple(x.shape)[:1] + tuple(x.shape)[2:]:
        raise RuntimeError(f"Expected target size {list(x.shape)[:1] + list(x.shape)[2:]}, "
                           f"got {list(t.shape)}")
    cdef int64_t C = x._sizes[0 if x._ndim == 1 else 1]
    if weight is not None and (<TensorBase>as_tensor_arg(weight, op, "weight")).numel_c() != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    cdef dtype ct = norm_compute_type(x, op)
    # (N, C) rows and (N,) int64 targets, the usual call, are taken as they are
    rows = x if x._ndim == 2 else (x.reshape(1, C) if x._ndim == 1
                                   else x.movedim(1, -1).reshape(-1, C))
    if t._ndim != 1 or t._dtype is not _dtypes.int64:
        t = t.to(_dtypes.int64).reshape(-1)
    return to_dt(rows, ct).contiguous(), t.contiguous(), as_ct(weight, ct, (C,)), C


cdef tuple nll_weights(object tgt, object w, int64_t ignore_index, int64_t C, dtype ct):
    """(the targets with ignored ones replaced by 0, [R, 1]; each row's weight, 0 when
    ignored): the composites' view; IndexError for a target outside [0, C)."""
    keep = tgt != ignore_index
    safe = where(keep, tgt, 0)
    if bool(((safe < 0) | (safe >= C)).any()):
        bad = int(safe[(safe < 0) | (safe >= C)][0])
        raise IndexError(f"Target {bad} is out of bounds.")
    wt = keep.to(ct) if w is None else w.gather(0, safe) * keep.to(ct)
    return safe.unsqueeze(1), wt


cdef tuple nll_forward_impl(bint ce, object input, object target, object weight,
                            object reduction, int64_t ignore_index):
    cdef str op = "cross_entropy" if ce else "nll_loss"
    a, tgt, w, C = nll_rows(op, input, target, weight, reduction)
    cdef TensorBase rows = <TensorBase>a
    cdef int64_t R = rows._sizes[0]
    cdef bint done = False
    if has_fused(rows, True):
        loss, wt = new_like_shape((R,), rows._dtype, rows), new_like_shape((R,), rows._dtype, rows)
        done = call_fused(True, EMBER_CROSS_ENTROPY if ce else EMBER_NLL, [loss, wt, a, tgt, w],
                          0, ignore_index)
    if not done:
        safe, wt = nll_weights(tgt, w, ignore_index, C, rows._dtype)
        lp = softmax_forward(op_log_softmax, a, 1, None) if ce else a
        loss = -(lp.gather(1, safe).reshape(R) * wt)
    total = wt.sum()
    cdef dtype dt = (<TensorBase>input)._dtype
    if reduction == 0:
        out = loss.reshape(target.shape)
    elif reduction == 2:
        out = loss.sum()
    else:
        out = loss.sum() / total
    return to_dt(out, dt), to_dt(total, dt)


cdef object nll_backward_impl(bint ce, object grad_output, object input, object target,
                              object weight, object reduction, int64_t ignore_index,
                              object total_weight, bint composite):
    cdef str op = "cross_entropy_backward" if ce else "nll_loss_backward"
    a, tgt, w, C = nll_rows(op, input, target, weight, reduction)
    cdef TensorBase x = <TensorBase>input
    cdef TensorBase rows = <TensorBase>a
    cdef int64_t R = rows._sizes[0]
    g = to_dt(as_tensor_arg(grad_output, op, "grad_output"), rows._dtype)
    if reduction == 0:
        scale = g.reshape(R)
    else:
        if reduction == 1:
            g = g / to_dt(total_weight, rows._dtype)
        scale = g.reshape(1).expand(R)
    cdef bint done = False
    if not composite and has_fused(rows, True):
        gx = new_like_shape((R, C), rows._dtype, rows)
        done = call_fused(True, EMBER_CROSS_ENTROPY_BACKWARD if ce else EMBER_NLL_BACKWARD,
                          [gx, scale.contiguous(), a if ce else None, tgt, w], 0, ignore_index)
    if not done:
        safe, wt = nll_weights(tgt, w, ignore_index, C, rows._dtype)
        sw = (scale * wt).unsqueeze(1)
        picked = zeros((R, C), dtype=rows._dtype, device=rows._device).scatter(1, safe, 1.0)
        if ce:
            gx = a.softmax(1) * sw - picked * sw
        else:
            gx = -(picked * sw)
    if x._ndim == 1:
        gx = gx.reshape(C)
    else:
        gx = gx.reshape(tuple(x.shape)[:1] + tuple(x.shape)[2:] + (C,)).movedim(-1, 1)
    return to_dt(gx, x._dtype)


cdef object nll_call(Op op, bint ce, tuple args):
    kernel = routed_n(op, args[:3])
    if kernel is not None:
        return kernel(*args)
    return nll_forward_impl(ce, args[0], args[1], args[2], args[3], args[4])


cdef object nll_backward_call(Op op, bint ce, tuple args):
    kernel = routed_n(op, args[:4] + args[6:])
    if kernel is not None:
        return kernel(*args)
    return nll_backward_impl(ce, args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                             False)


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    """(output, total_weight) of the negative log-likelihood of log-probabilities ``self``
    at class indices ``target``; see nll_loss for the reductions."""
    return nll_call(op_nll_loss_forward, False, (self, target, weight, reduction, ignore_index))


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
                      total_weight):
    """The gradient of nll_loss_forward with respect to ``self``."""
    return nll_backward_call(op_nll_loss_backward, False, (grad_output, self, target, weight,
                                                           reduction, ignore_index,
                                                           total_weight))


def _cross_entropy_forward(self, target, weight, reduction, ignore_index):
    """(output, total_weight) of nll_loss_forward(log_softmax(self, class dim), ...), with
    the log_softmax fused in."""
    return nll_call(op_cross_entropy_forward, True, (self, target, weight, reduction,
                                                     ignore_index))


def _cross_entropy_backward(grad_output, self, target, weight, reduction, ignore_index,
                            total_weight):
    """The gradient of _cross_entropy_forward with respect to ``self``:
    scale * weight[target] * (softmax(self) - onehot(target))."""
    return nll_backward_call(op_cross_entropy_backward, True, (grad_output, self, target,
                                                               weight, reduction,
                                                               ignore_index, total_weight))


def _nll_composite(str name, *args):
    """The default (composite) implementation of nll op ``name`` whatever the backend
    provides: lets tests compare a fused kernel with it."""
    if name in ("nll_loss_forward", "_cross_entropy_forward"):
        a, tgt, w, C = nll_rows(name, args[0], args[1], args[2], args[3])
        safe, wt = nll_weights(tgt, w, args[4], C, (<TensorBase>a)._dtype)
        lp = a.log_softmax(1) if name[1] == "c" else a
        return -(lp.gather(1, safe).reshape(-1) * wt), wt
    if name in ("nll_loss_backward", "_cross_entropy_backward"):
        return nll_backward_impl(name[1] == "c", args[0], args[1], args[2], args[3], args[4],
                                 args[5], args[6], True)
    raise ValueError(f"_nll_composite: no composite named {name!r}")


# --- derivatives: only the input gets a gradient (targets are indices; PyTorch gives none
# to weight either) ---

cdef tuple nll_formula(bint ce, object ctx, object g):
    """The backward op through the dispatcher (vmap's and forward AD's keys see it), or its
    composite when the backward is itself recorded."""
    x, target, weight, reduction, ignore_index = ctx.args
    total = ctx.saved_result(1)
    if is_grad_enabled_c():
        return (nll_backward_impl(ce, g[0], x, target, weight, reduction, ignore_index, total,
                                  True),)
    # the backward op, dispatched (a plugin's kernel, the profiler, ember.compile see it)
    return (nll_backward_call(op_cross_entropy_backward if ce else op_nll_loss_backward, ce,
                              (g[0], x, target, weight, reduction, ignore_index, total)),)


def _d_nll_loss_forward(ctx, g):
    return nll_formula(False, ctx, g)


def _d_cross_entropy_forward(ctx, g):
    return nll_formula(True, ctx, g)


# the entries route again (Autograd excluded), as the norms' do (a weight that requires
# grad beside a vmap wrapper reaches the batching rule)
derive(op_nll_loss_forward, _d_nll_loss_forward,
       lambda x, t, w, r, ii: nll_loss_forward(x, t, w, r, ii), SAVE_INPUTS | SAVE_RESULT)
derive(op_cross_entropy_forward, _d_cross_entropy_forward,
       lambda x, t, w, r, ii: _cross_entropy_forward(x, t, w, r, ii), SAVE_INPUTS | SAVE_RESULT)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_nll_loss_backward.entry = nll_loss_backward
op_cross_entropy_backward.entry = _cross_entropy_backward
