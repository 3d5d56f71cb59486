# 2-d convolution as explicit ("hot composite") ops: convolution and convolution_backward
# over [N, C, H, W] tensors with normalised arguments (pairs of ints); conv1d/conv2d
# (core/conv.py) parse PyTorch's arguments and reshape 1-d and unbatched inputs to this.
# A backend's optional fused `conv` kernel runs them on contiguous float32/float64 operands
# (float16/bfloat16 compute in float32); a backend that leaves the entry NULL gets the
# composite below: unfold (a gather of every kernel tap) + batched matmul, and fold (an
# index_add) for the input gradient.

cdef Op op_convolution = Op(
    "convolution", "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[2] stride, "
    "SymInt[2] padding, SymInt[2] dilation, SymInt groups) -> Tensor", FAMILY_CONV,
    EMBER_CONV_FORWARD, None)
cdef Op op_convolution_backward = Op(
    "convolution_backward", "convolution_backward(Tensor grad_output, Tensor input, Tensor "
    "weight, SymInt[2] stride, SymInt[2] padding, SymInt[2] dilation, SymInt groups, "
    "bool[3] output_mask) -> (Tensor, Tensor, Tensor)", FAMILY_CONV,
    EMBER_CONV_BACKWARD_INPUT, None)


cdef int64_t window_count(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d,
                          bint ceil_mode):
    """How many windows of k taps (dilation d, stride s) fit in size + 2p; with ceil_mode a
    last partial window counts if it starts inside the input or the left padding, even
    when the window is longer than the input (PyTorch's pooling_output_shape).  0 stands
    for any size PyTorch computes as <= 0 (too small)."""
    cdef int64_t num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    if num < 0:
        return 0
    cdef int64_t n = num // s + 1
    if ceil_mode and (n - 1) * s >= size + p:
        n -= 1
    return n


def _window_count(size, kernel_size, stride, padding, dilation, ceil_mode):
    """window_count for Python callers (the 3-d pooling composites)."""
    return window_count(size, kernel_size, stride, padding, dilation, ceil_mode)


def _plane_index(taps, size, device):
    """int64 [kH * kW * Ho * Wo] from per-dim taps (pos, valid), each [k, out]: for each
    kernel tap (row-major over kH, kW) and output position (over Ho, Wo), the flat position
    h * W + w it reads in an H x W plane, or H * W where it falls outside (the composites
    append one pad element per plane)."""
    import numpy as np
    (h, vh), (w, vw) = taps
    flat = h[:, None, :, None] * size[1] + w[None, :, None, :]
    flat = np.where(vh[:, None, :, None] & vw[None, :, None, :], flat, size[0] * size[1])
    return tensor(flat.reshape(-1), dtype=_dtypes.int64, device=device)


def _window_index(size, kernel, stride, padding, dilation, out_size, device):
    """_plane_index of regular windows (strided, padded, dilated)."""
    import numpy as np
    taps = []
    for i in range(2):
        pos = (np.arange(kernel[i])[:, None] * dilation[i]
               + np.arange(out_size[i])[None, :] * stride[i] - padding[i])
        taps.append((pos, (pos >= 0) & (pos < size[i])))
    return _plane_index(taps, size, device)


cdef object unfold_c(object x, object idx, double pad_value, int64_t K, int64_t L):
    """x [N, C, H, W] -> [N, C, K, L]: every kernel tap of every window (pad_value in the
    padding), through one gather."""
    n, c, h, w = x.shape
    flat = x.reshape(n, c, h * w)
    pad = full((n, c, 1), pad_value, dtype=x.dtype, device=x.device)
    from ember.core.shapes import cat
    return cat([flat, pad], 2).index_select(2, idx).reshape(n, c, K, L)


cdef object fold_c(object cols, object idx, tuple shape):
    """The adjoint of unfold_c: cols [N, C, K, L] summed into [N, C, H, W]."""
    n, c, h, w = shape
    z = zeros(n, c, h * w + 1, dtype=cols.dtype, device=cols.device)
    r = z.index_add(2, idx, cols.reshape(n, c, cols.shape[2] * cols.shape[3]))
    return r.narrow(2, 0, h * w).reshape(n, c, h, w)


cdef tuple conv_geometry(xs, ws, tuple stride, tuple padding, tuple dilation):
    ho = window_count(xs[2], ws[2], stride[0], padding[0], dilation[0], False)
    wo = window_count(xs[3], ws[3], stride[1], padding[1], dilation[1], False)
    return ho, wo


cdef object conv_forward_composite(x, w, b, tuple stride, tuple padding, tuple dilation,
                                   int64_t groups):
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    ho, wo = conv_geometry(tuple(x.shape), tuple(w.shape), stride, padding, dilation)
    idx = _window_index((h, wd), (kh, kw), stride, padding, dilation, (ho, wo), x.device)
    cols = unfold_c(x, idx, 0.0, kh * kw, ho * wo).reshape(n, groups, cg * kh * kw, ho * wo)
    out = (w.reshape(groups, cout // groups, cg * kh * kw) @ cols).reshape(n, cout, ho, wo)
    return out if b is None else out + b.reshape(1, cout, 1, 1)


cdef tuple conv_backward_composite(g, x, w, tuple stride, tuple padding, tuple dilation,
                                   int64_t groups, tuple mask):
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    ho, wo = g.shape[2], g.shape[3]
    K, L = kh * kw, ho * wo
    gm = g.reshape(n, groups, cout // groups, L)
    idx = _window_index((h, wd), (kh, kw), stride, padding, dilation, (ho, wo), x.device)
    gi = gw = gb = None
    if mask[0]:
        wm = w.reshape(groups, cout // groups, cg * K).transpose(1, 2)
        gi = fold_c((wm @ gm).reshape(n, c, K, L), idx, (n, c, h, wd))
    if mask[1]:
        cols = unfold_c(x, idx, 0.0, K, L).reshape(n, groups, cg * K, L)
        gw = (gm @ cols.transpose(2, 3)).sum(0).reshape(cout, cg, kh, kw)
    if mask[2]:
        gb = g.sum((0, 2, 3))
    return gi, gw, gb


cdef void conv_params(ember_conv_params* p, tuple stride, tuple padding, tuple dilation,
                      int64_t groups):
    cdef int i
    for i in range(2):
        p.stride[i] = stride[i]
        p.padding[i] = padding[i]
        p.dilation[i] = dilation[i]
    p.groups = groups


cdef bint run_conv(ember_kernel_table* t, int code, ember_conv_params* p, TensorBase o,
                   TensorBase a, TensorBase b, TensorBase c) except -1:
    """The fused `conv` entry; False when it answers "not implemented" (run the composite)."""
    same_device("conv", o, a)
    same_device("conv", o, b)
    if c is not None:
        same_device("conv", o, c)
    cdef ember_view vo, va, vb, vc
    o.view_c(&vo)
    a.view_c(&va)
    b.view_c(&vb)
    if c is not None:
        c.view_c(&vc)
    cdef const ember_view* pc = &vc if c is not None else NULL
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    with nogil:
        rc = t.conv(&ctx, code, p, &vo, &va, &vb, pc)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return False
    if rc:
        raise_kernel_error(rc, &ctx)
    return True


cdef dtype compute_dtype(TensorBase a, str name):
    if not a._dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{st_name(a._dtype)}\'')
    return _dtypes.float32 if a._dtype.itemsize == 2 else a._dtype


cdef tuple int_pair(object v):
    return (int(v[0]), int(v[1]))


cdef object convolution_impl(TensorBase x, TensorBase w, object bias, tuple stride,
                             tuple padding, tuple dilation, int64_t groups):
    cdef dtype ct = compute_dtype(x, "conv2d")
    cdef int64_t ho, wo
    ho, wo = conv_geometry(x.shape, w.shape, stride, padding, dilation)
    cdef int64_t sizes[4]
    sizes[0], sizes[1], sizes[2], sizes[3] = x._sizes[0], w._sizes[0], ho, wo
    cdef TensorBase o = empty_c(4, sizes, ct, x._device)
    cdef ember_kernel_table* t = o._backend.kernels()
    cdef ember_conv_params p
    if o.numel_c() == 0 or o._backend.is_meta:
        return cast_to(o, x._dtype)
    if t.conv is not NULL:
        conv_params(&p, stride, padding, dilation, groups)
        if run_conv(t, EMBER_CONV_FORWARD, &p, o, operand(x, ct), operand(w, ct),
                    None if bias is None else operand(bias, ct)):
            return cast_to(o, x._dtype)
    b = None if bias is None else cast_to(<TensorBase>bias, ct)
    r = conv_forward_composite(cast_to(x, ct), cast_to(w, ct), b, stride, padding,
                               dilation, groups)
    return cast_to(<TensorBase>r, x._dtype)


cdef tuple convolution_backward_impl(TensorBase g, TensorBase x, TensorBase w, tuple stride,
                                     tuple padding, tuple dilation, int64_t groups,
                                     tuple mask):
    cdef dtype ct = compute_dtype(x, "conv2d_backward")
    cdef ember_kernel_table* t = x._backend.kernels()
    cdef ember_conv_params p
    cdef TensorBase gi = None, gw = None, gb = None
    cdef int64_t cout = w._sizes[0]
    # an empty batch or output goes to the composite, which gives the zero gradients
    if g.numel_c() and not x._backend.is_meta and t.conv is not NULL:
        conv_params(&p, stride, padding, dilation, groups)
        gc = operand(g, ct)
        if mask[0]:
            gi = empty_c(4, x._sizes, ct, x._device)
        if mask[1] or mask[2]:
            gw = empty_c(4, w._sizes, ct, x._device)
            gb = empty_c(1, &cout, ct, x._device) if mask[2] else None
        if ((not mask[0] or run_conv(t, EMBER_CONV_BACKWARD_INPUT, &p, gi, gc, operand(w, ct),
                                     None))
                and (gw is None or run_conv(t, EMBER_CONV_BACKWARD_WEIGHT, &p, gw, gc,
                                            operand(x, ct), gb))):
            return (None if gi is None else cast_to(gi, x._dtype),
                    cast_to(gw, x._dtype) if mask[1] else None,
                    None if gb is None else cast_to(gb, x._dtype))
    r = conv_backward_composite(cast_to(g, ct), cast_to(x, ct), cast_to(w, ct), stride,
                                padding, dilation, groups, mask)
    return tuple(None if v is None else cast_to(<TensorBase>v, x._dtype) for v in r)


def convolution(input, weight, bias, stride, padding, dilation, groups):
    """2-d cross-correlation of ``input`` [N, C, H, W] with ``weight`` [Cout, C / groups,
    kH, kW] plus ``bias`` [Cout] (or None); ``stride``, ``padding`` (symmetric) and
    ``dilation`` are pairs of ints.  The op behind conv1d/conv2d (which check arguments)."""
    cdef TensorBase x = as_tensor_arg(input, "convolution", "input")
    cdef TensorBase w = as_tensor_arg(weight, "convolution", "weight")
    cdef uint64_t keys = x._keys | w._keys
    if bias is not None:
        keys |= (<TensorBase>as_tensor_arg(bias, "convolution", "bias"))._keys
    cdef int k = op_convolution.resolve(effective_keys(keys))
    if (op_convolution._kernel_mask >> k) & 1:
        return op_convolution._table[k](x, w, bias, stride, padding, dilation, groups)
    return convolution_impl(x, w, bias, int_pair(stride), int_pair(padding),
                            int_pair(dilation), groups)


def convolution_backward(grad_output, input, weight, stride, padding, dilation, groups,
                         output_mask):
    """(grad_input, grad_weight, grad_bias) of ``convolution`` for ``grad_output``; an entry
    whose ``output_mask`` flag is False is None."""
    cdef TensorBase g = as_tensor_arg(grad_output, "convolution_backward", "grad_output")
    cdef TensorBase x = as_tensor_arg(input, "convolution_backward", "input")
    cdef TensorBase w = as_tensor_arg(weight, "convolution_backward", "weight")
    cdef int k = op_convolution_backward.resolve(effective_keys(g._keys | x._keys | w._keys))
    if (op_convolution_backward._kernel_mask >> k) & 1:
        return op_convolution_backward._table[k](g, x, w, stride, padding, dilation, groups,
                                                 output_mask)
    return convolution_backward_impl(g, x, w, int_pair(stride), int_pair(padding),
                                     int_pair(dilation), groups,
                                     tuple(bool(m) for m in output_mask))


def _conv_composite(input, weight, bias, stride, padding, dilation, groups, grad_output=None,
                    output_mask=(True, True, True)):
    """The default (composite) convolution, or its backward when ``grad_output`` is given,
    whatever the backend provides: lets tests compare a fused kernel with it."""
    s, p, d = int_pair(stride), int_pair(padding), int_pair(dilation)
    if grad_output is None:
        return conv_forward_composite(input, weight, bias, s, p, d, groups)
    return conv_backward_composite(grad_output, input, weight, s, p, d, groups,
                                   tuple(output_mask))


# --- derivative: the fused backward in plain backward; the composite (differentiable)
# when the backward itself is recorded (create_graph) ---

def _d_convolution(ctx, g):
    x, w, b, stride, padding, dilation, groups = ctx.args
    need = ctx.needs_input_grad
    mask = (need[0], need[1], len(need) > 2 and need[2])
    if is_grad_enabled_c():
        return conv_backward_composite(g, x, w, int_pair(stride), int_pair(padding),
                                       int_pair(dilation), groups, mask)
    return convolution_backward(g, x, w, stride, padding, dilation, groups, mask)


derive(op_convolution, _d_convolution,
       lambda x, w, b, s, p, d, g: convolution(x, w, b, s, p, d, g), SAVE_INPUTS)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_convolution_backward.entry = convolution_backward
