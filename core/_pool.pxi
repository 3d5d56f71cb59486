# 2-d pooling as explicit ("hot composite") ops over [N, C, H, W] with normalised
# arguments: max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d, adaptive_max_pool2d
# and their backward ops (PyTorch's names).  core/pooling.py parses PyTorch's arguments and
# reshapes 1-d and unbatched inputs.  A backend's optional fused `pool` kernel runs them on
# contiguous float32/float64 operands; without one, the composites below gather every
# window tap (unfold_c, _conv.pxi) and reduce it, and the backward ops scatter back.

cdef Op op_max_pool2d = Op(
    "max_pool2d_with_indices", "max_pool2d_with_indices(Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode) -> (Tensor, Tensor)",
    FAMILY_POOL, EMBER_POOL_MAX, None)
cdef Op op_max_pool2d_backward = Op(
    "max_pool2d_with_indices_backward", "max_pool2d_with_indices_backward(Tensor grad_output, "
    "Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool "
    "ceil_mode, Tensor indices) -> Tensor", FAMILY_POOL, EMBER_POOL_MAX_BACKWARD, None)
cdef Op op_avg_pool2d = Op(
    "avg_pool2d", "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, "
    "bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor", FAMILY_POOL,
    EMBER_POOL_AVG, None)
cdef Op op_avg_pool2d_backward = Op(
    "avg_pool2d_backward", "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] "
    "kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
    "int? divisor_override) -> Tensor", FAMILY_POOL, EMBER_POOL_AVG_BACKWARD, None)
cdef Op op_adaptive_avg_pool2d = Op(
    "_adaptive_avg_pool2d", "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> "
    "Tensor", FAMILY_POOL, EMBER_POOL_ADAPTIVE_AVG, None)
cdef Op op_adaptive_avg_pool2d_backward = Op(
    "_adaptive_avg_pool2d_backward", "_adaptive_avg_pool2d_backward(Tensor grad_output, "
    "Tensor self) -> Tensor", FAMILY_POOL, EMBER_POOL_ADAPTIVE_AVG_BACKWARD, None)
cdef Op op_adaptive_max_pool2d = Op(
    "adaptive_max_pool2d", "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, "
    "Tensor)", FAMILY_POOL, EMBER_POOL_ADAPTIVE_MAX, None)
cdef Op op_adaptive_max_pool2d_backward = Op(
    "adaptive_max_pool2d_backward", "adaptive_max_pool2d_backward(Tensor grad_output, Tensor "
    "self, Tensor indices) -> Tensor", FAMILY_POOL, EMBER_POOL_MAX_BACKWARD, None)

# what each op's dtype error names (by op code)
cdef tuple _POOL_NAMES = ("max_pool2d", "max_pool2d_with_indices_backward", "avg_pool2d",
                          "avg_pool2d_backward", "adaptive_avg_pool2d",
                          "adaptive_avg_pool2d_backward", "adaptive_max_pool2d")


cdef class PoolArgs:
    """One pooling call's geometry: window (kernel, stride, padding, dilation), averaging
    rule, and the input and output plane sizes."""
    cdef int code
    cdef tuple kernel, stride, padding, dilation
    cdef bint count_include_pad
    cdef int64_t divisor
    cdef tuple size, out_size

    cdef void fill(self, ember_pool_params* p):
        cdef int i
        for i in range(2):
            p.kernel[i] = self.kernel[i]
            p.stride[i] = self.stride[i]
            p.padding[i] = self.padding[i]
            p.dilation[i] = self.dilation[i]
        p.count_include_pad = self.count_include_pad
        p.reserved = 0
        p.divisor_override = self.divisor


cdef PoolArgs window_args(int code, TensorBase x, kernel_size, stride, padding, dilation,
                          bint ceil_mode, bint count_include_pad, divisor_override):
    cdef PoolArgs a = PoolArgs.__new__(PoolArgs)
    a.code = code
    a.kernel = int_pair(kernel_size)
    a.stride = int_pair(stride) if len(stride) else a.kernel
    a.padding = int_pair(padding)
    a.dilation = int_pair(dilation)
    a.count_include_pad = count_include_pad
    a.divisor = 0 if divisor_override is None else int(divisor_override)
    a.size = (x._sizes[2], x._sizes[3])
    a.out_size = tuple(window_count(a.size[i], a.kernel[i], a.stride[i], a.padding[i],
                                    a.dilation[i], ceil_mode) for i in range(2))
    return a


cdef PoolArgs adaptive_args(int code, TensorBase x, output_size):
    cdef PoolArgs a = PoolArgs.__new__(PoolArgs)
    a.code = code
    a.kernel = a.stride = a.padding = a.dilation = (0, 0)
    a.count_include_pad = False
    a.divisor = 0
    a.size = (x._sizes[2], x._sizes[3])
    a.out_size = int_pair(output_size)
    return a


def _adaptive_bounds(int64_t size, int64_t out):
    """PyTorch's adaptive windows: [floor(i * size / out), ceil((i + 1) * size / out))."""
    return [(i * size // out, ((i + 1) * size + out - 1) // out) for i in range(out)]


cdef object adaptive_taps(PoolArgs a):
    import numpy as np
    taps = []
    for i in range(2):
        bounds = np.array(_adaptive_bounds(a.size[i], a.out_size[i]), dtype=np.int64)
        k = int((bounds[:, 1] - bounds[:, 0]).max())
        pos = np.arange(k)[:, None] + bounds[None, :, 0]
        taps.append((pos, pos < bounds[None, :, 1]))
    return taps


cdef object tap_index(PoolArgs a, device):
    if a.code == EMBER_POOL_ADAPTIVE_MAX:
        return _plane_index(adaptive_taps(a), a.size, device)
    return _window_index(a.size, a.kernel, a.stride, a.padding, a.dilation, a.out_size,
                         device)


cdef object first_tap(PoolArgs a, device):
    """Each window's first tap at or past the padding, h * W + w, [Ho * Wo] (PyTorch's
    max-pool index where no tap beats -inf)."""
    import numpy as np
    first = []
    for i in range(2):
        start = np.arange(a.out_size[i]) * a.stride[i] - a.padding[i]
        skip = np.maximum(-start + a.dilation[i] - 1, 0) // a.dilation[i]
        first.append(start + skip * a.dilation[i])
    flat = first[0][:, None] * a.size[1] + first[1][None, :]
    return tensor(flat.reshape(-1), device=device)


cdef object avg_divisor(PoolArgs a, x):
    """The divisor of every output position, [Ho * Wo]."""
    import numpy as np
    if a.divisor:
        return float(a.divisor)
    counts = []
    for i in range(2):
        start = np.arange(a.out_size[i]) * a.stride[i] - a.padding[i]
        end = np.minimum(start + a.kernel[i], a.size[i] + a.padding[i])
        if not a.count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, a.size[i])
        counts.append(end - start)
    d = (counts[0][:, None] * counts[1][None, :]).reshape(-1)
    return tensor(d, dtype=x.dtype, device=x.device)


cdef object adaptive_matrix(int64_t size, int64_t out, x):
    """[out, size]: row i averages adaptive window i."""
    import numpy as np
    m = np.zeros((out, size))
    for i, (s, e) in enumerate(_adaptive_bounds(size, out)):
        m[i, s:e] = 1.0 / (e - s)
    return tensor(m, dtype=x.dtype, device=x.device)


cdef object pool_composite(PoolArgs a, x):
    """The default forward: out, or (out, indices) for the max ops."""
    n, c, h, w = x.shape
    if a.code == EMBER_POOL_ADAPTIVE_AVG:
        mh = adaptive_matrix(h, a.out_size[0], x)
        mw = adaptive_matrix(w, a.out_size[1], x)
        return mh @ x @ mw.transpose(0, 1)
    idx = tap_index(a, x.device)
    L = a.out_size[0] * a.out_size[1]
    K = idx.shape[0] // L
    is_max = a.code != EMBER_POOL_AVG
    cols = unfold_c(x, idx, float("-inf") if is_max else 0.0, K, L)
    shape = (n, c) + a.out_size
    if not is_max:
        return (cols.sum(2) / avg_divisor(a, x)).reshape(shape)
    pos = cols.argmax(2, keepdim=True)
    # a NaN wins, the last one as in PyTorch's kernels (argmax gives the first)
    nan = cols.isnan()
    last = (K - 1) - nan.flip(2).to(_dtypes.uint8).argmax(2, keepdim=True)
    pos = where(nan.any(2, keepdim=True), last, pos)
    where_ = idx.reshape(1, 1, K, L).expand(n, c, K, L).gather(2, pos)
    if a.code != EMBER_POOL_ADAPTIVE_MAX:
        # a window whose maximum is padding (no tap inside the input, or only -inf ones):
        # PyTorch's index, the first tap past the padding
        where_ = where(where_ == h * w, first_tap(a, x.device).reshape(1, 1, 1, L), where_)
    return cols.amax(2).reshape(shape), where_.reshape(shape)


cdef object pool_backward_composite(PoolArgs a, g, x, indices):
    """The default backward: the gradient of x for grad_output g."""
    n, c, h, w = x.shape
    if a.code == EMBER_POOL_ADAPTIVE_AVG:
        mh = adaptive_matrix(h, a.out_size[0], x)
        mw = adaptive_matrix(w, a.out_size[1], x)
        return mh.transpose(0, 1) @ g @ mw
    if a.code != EMBER_POOL_AVG:
        z = zeros(n, c, h * w, dtype=g.dtype, device=g.device)
        L = a.out_size[0] * a.out_size[1]
        return z.scatter_add(2, indices.reshape(n, c, L), g.reshape(n, c, L)).reshape(
            n, c, h, w)
    idx = tap_index(a, x.device)
    L = a.out_size[0] * a.out_size[1]
    K = idx.shape[0] // L
    share = (g.reshape(n, c, 1, L) / avg_divisor(a, g)).expand(n, c, K, L)
    return fold_c(share, idx, (n, c, h, w))


cdef TensorBase check_pool_input(object input, str name):
    cdef TensorBase x = as_tensor_arg(input, name, "input")
    if x._ndim != 4:
        raise RuntimeError(f"{name}: expected a 4-d input [N, C, H, W], got "
                           f"{list(x.shape)}")
    return x


cdef object pool_forward(PoolArgs a, TensorBase x):
    """Runs a forward pooling op: the fused `pool` kernel, else the composite."""
    cdef str name = _POOL_NAMES[a.code]
    cdef dtype ct = compute_dtype(x, name)
    cdef bint is_max = a.code != EMBER_POOL_AVG and a.code != EMBER_POOL_ADAPTIVE_AVG
    cdef int64_t sizes[4]
    sizes[0], sizes[1], sizes[2], sizes[3] = x._sizes[0], x._sizes[1], a.out_size[0], \
        a.out_size[1]
    cdef TensorBase o = empty_c(4, sizes, ct, x._device)
    cdef TensorBase ix = empty_c(4, sizes, _dtypes.int64, x._device) if is_max else None
    cdef ember_kernel_table* t = o._backend.kernels()
    if o.numel_c() == 0 or o._backend.is_meta:
        r = cast_to(o, x._dtype)
    elif t.pool is not NULL and run_pool(t, a.code, a, o, ix, operand(x, ct)):
        r = cast_to(o, x._dtype)
    else:
        r = pool_composite(a, cast_to(x, ct))
        if is_max:
            r, ix = r
        r = cast_to(<TensorBase>r, x._dtype)
    return (r, ix) if is_max else r


cdef object pool_backward(PoolArgs a, TensorBase g, TensorBase x, object indices):
    """Runs a backward pooling op (a.code: the forward op's code)."""
    cdef int code = EMBER_POOL_MAX_BACKWARD if a.code == EMBER_POOL_ADAPTIVE_MAX else a.code + 1
    cdef str name = _POOL_NAMES[code]
    cdef dtype ct = compute_dtype(x, name)
    if tuple(g.shape) != (x._sizes[0], x._sizes[1]) + a.out_size:
        raise RuntimeError(f"{name}: expected grad_output of size "
                           f"{[x._sizes[0], x._sizes[1], *a.out_size]}, but got "
                           f"{list(g.shape)}")
    cdef TensorBase o = empty_c(4, x._sizes, ct, x._device)
    cdef ember_kernel_table* t = o._backend.kernels()
    if o.numel_c() == 0 or o._backend.is_meta:
        return cast_to(o, x._dtype)
    if g.numel_c() == 0:
        return zeros(x.shape, dtype=x._dtype, device=x._device)
    if t.pool is not NULL and run_pool(
            t, code, a, o, None if indices is None
            else operand(as_tensor_arg(indices, name, "indices"), _dtypes.int64),
            operand(g, ct)):
        return cast_to(o, x._dtype)
    r = pool_backward_composite(a, cast_to(g, ct), cast_to(x, ct), indices)
    return cast_to(<TensorBase>r, x._dtype)


cdef bint run_pool(ember_kernel_table* t, int code, PoolArgs a, TensorBase o, TensorBase ix,
                   TensorBase x) except -1:
    """The fused `pool` entry; False when it answers "not implemented" (run the composite)."""
    cdef ember_pool_params p
    a.fill(&p)
    same_device("pool", o, x)
    if ix is not None:
        same_device("pool", o, ix)
    cdef ember_view vo, vi, vx
    o.view_c(&vo)
    x.view_c(&vx)
    if ix is not None:
        ix.view_c(&vi)
    cdef const ember_view* pi = &vi if ix is not None else NULL
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    with nogil:
        rc = t.pool(&ctx, code, &p, &vo, pi, &vx)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return False
    if rc:
        raise_kernel_error(rc, &ctx)
    return True


cdef object routed_pool(Op op, tuple tensors):
    """The kernel above the backend (Autograd, modes) for this call, or None."""
    cdef uint64_t keys = 0
    for t in tensors:
        if t is not None:
            keys |= (<TensorBase>t)._keys
    cdef int k = op.resolve(effective_keys(keys))
    return op._table[k] if (op._kernel_mask >> k) & 1 else None


def max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode):
    """(max over each window of ``input`` [N, C, H, W], the flat position h * W + w of each
    maximum in its input plane); pairs of ints; an empty ``stride`` means kernel_size."""
    cdef TensorBase x = check_pool_input(input, "max_pool2d_with_indices")
    k = routed_pool(op_max_pool2d, (x,))
    if k is not None:
        return k(x, kernel_size, stride, padding, dilation, ceil_mode)
    return pool_forward(window_args(EMBER_POOL_MAX, x, kernel_size, stride, padding, dilation,
                                    ceil_mode, False, None), x)


def max_pool2d_with_indices_backward(grad_output, input, kernel_size, stride, padding,
                                     dilation, ceil_mode, indices):
    """The gradient of max_pool2d_with_indices: grad_output added at ``indices``."""
    cdef TensorBase g = as_tensor_arg(grad_output, "max_pool2d_with_indices_backward",
                                      "grad_output")
    cdef TensorBase x = check_pool_input(input, "max_pool2d_with_indices_backward")
    k = routed_pool(op_max_pool2d_backward, (g, x))
    if k is not None:
        return k(g, x, kernel_size, stride, padding, dilation, ceil_mode, indices)
    return pool_backward(window_args(EMBER_POOL_MAX, x, kernel_size, stride, padding,
                                     dilation, ceil_mode, False, None), g, x, indices)


def avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    """The mean over each window of ``input`` [N, C, H, W] (see avg_pool2d in
    core/pooling.py for the divisor rules); pairs of ints."""
    cdef TensorBase x = check_pool_input(input, "avg_pool2d")
    k = routed_pool(op_avg_pool2d, (x,))
    if k is not None:
        return k(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override)
    return pool_forward(window_args(EMBER_POOL_AVG, x, kernel_size, stride, padding, (1, 1),
                                    ceil_mode, count_include_pad, divisor_override), x)


def avg_pool2d_backward(grad_output, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """The gradient of avg_pool2d: each output's gradient shared over its window."""
    cdef TensorBase g = as_tensor_arg(grad_output, "avg_pool2d_backward", "grad_output")
    cdef TensorBase x = check_pool_input(input, "avg_pool2d_backward")
    k = routed_pool(op_avg_pool2d_backward, (g, x))
    if k is not None:
        return k(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override)
    return pool_backward(window_args(EMBER_POOL_AVG, x, kernel_size, stride, padding, (1, 1),
                                     ceil_mode, count_include_pad, divisor_override), g, x,
                         None)


def _adaptive_avg_pool2d(input, output_size):
    """The mean over PyTorch's adaptive windows of ``input`` [N, C, H, W]."""
    cdef TensorBase x = check_pool_input(input, "_adaptive_avg_pool2d")
    k = routed_pool(op_adaptive_avg_pool2d, (x,))
    if k is not None:
        return k(x, output_size)
    return pool_forward(adaptive_args(EMBER_POOL_ADAPTIVE_AVG, x, output_size), x)


def _adaptive_avg_pool2d_backward(grad_output, input):
    """The gradient of _adaptive_avg_pool2d."""
    cdef TensorBase g = as_tensor_arg(grad_output, "_adaptive_avg_pool2d_backward",
                                      "grad_output")
    cdef TensorBase x = check_pool_input(input, "_adaptive_avg_pool2d_backward")
    k = routed_pool(op_adaptive_avg_pool2d_backward, (g, x))
    if k is not None:
        return k(g, x)
    return pool_backward(adaptive_args(EMBER_POOL_ADAPTIVE_AVG, x, g.shape[2:]), g, x, None)


def adaptive_max_pool2d(input, output_size):
    """(max over PyTorch's adaptive windows of ``input`` [N, C, H, W], flat positions)."""
    cdef TensorBase x = check_pool_input(input, "adaptive_max_pool2d")
    k = routed_pool(op_adaptive_max_pool2d, (x,))
    if k is not None:
        return k(x, output_size)
    return pool_forward(adaptive_args(EMBER_POOL_ADAPTIVE_MAX, x, output_size), x)


def adaptive_max_pool2d_backward(grad_output, input, indices):
    """The gradient of adaptive_max_pool2d: grad_output added at ``indices``."""
    cdef TensorBase g = as_tensor_arg(grad_output, "adaptive_max_pool2d_backward",
                                      "grad_output")
    cdef TensorBase x = check_pool_input(input, "adaptive_max_pool2d_backward")
    k = routed_pool(op_adaptive_max_pool2d_backward, (g, x))
    if k is not None:
        return k(g, x, indices)
    return pool_backward(adaptive_args(EMBER_POOL_ADAPTIVE_MAX, x, g.shape[2:]), g, x,
                         indices)


def _pool_composite(str name, input, *args, grad_output=None, indices=None):
    """The default (composite) forward of pooling op ``name`` (the forward's arguments), or
    its backward when ``grad_output`` is given: lets tests compare a fused kernel with it."""
    cdef TensorBase x = check_pool_input(input, name)
    cdef PoolArgs a
    if name == "max_pool2d_with_indices":
        a = window_args(EMBER_POOL_MAX, x, args[0], args[1], args[2], args[3], args[4],
                        False, None)
    elif name == "avg_pool2d":
        a = window_args(EMBER_POOL_AVG, x, args[0], args[1], args[2], (1, 1), args[3],
                        args[4], args[5])
    elif name == "_adaptive_avg_pool2d":
        a = adaptive_args(EMBER_POOL_ADAPTIVE_AVG, x, args[0])
    else:
        a = adaptive_args(EMBER_POOL_ADAPTIVE_MAX, x, args[0])
    if grad_output is None:
        return pool_composite(a, x)
    return pool_backward_composite(a, grad_output, x, indices)


# --- derivatives: the backward ops in plain backward (dispatched, so a plugin's kernel, the
# profiler and ember.compile's capture see them); the composites (differentiable) when the
# backward itself is recorded (create_graph) ---

def _d_max_pool2d(ctx, g):
    x, kernel_size, stride, padding, dilation, ceil_mode = ctx.args
    if not is_grad_enabled_c():
        return (max_pool2d_with_indices_backward(g[0], x, kernel_size, stride, padding,
                                                 dilation, ceil_mode, ctx.saved_result(1)),)
    a = window_args(EMBER_POOL_MAX, x, kernel_size, stride, padding, dilation, ceil_mode,
                    False, None)
    return (pool_backward_composite(a, g[0], x, ctx.saved_result(1)),)


def _d_avg_pool2d(ctx, g):
    x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor = ctx.args
    if not is_grad_enabled_c():
        return (avg_pool2d_backward(g, x, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor),)
    a = window_args(EMBER_POOL_AVG, x, kernel_size, stride, padding, (1, 1), ceil_mode,
                    count_include_pad, divisor)
    return (pool_backward_composite(a, g, x, None),)


def _d_adaptive_avg_pool2d(ctx, g):
    x = ctx.args[0]
    if not is_grad_enabled_c():
        return (_adaptive_avg_pool2d_backward(g, x),)
    a = adaptive_args(EMBER_POOL_ADAPTIVE_AVG, x, ctx.args[1])
    return (pool_backward_composite(a, g, x, None),)


def _d_adaptive_max_pool2d(ctx, g):
    x = ctx.args[0]
    if not is_grad_enabled_c():
        return (adaptive_max_pool2d_backward(g[0], x, ctx.saved_result(1)),)
    a = adaptive_args(EMBER_POOL_ADAPTIVE_MAX, x, ctx.args[1])
    return (pool_backward_composite(a, g[0], x, ctx.saved_result(1)),)


derive(op_max_pool2d, _d_max_pool2d,
       lambda x, k, s, p, d, c: max_pool2d_with_indices(x, k, s, p, d, c),
       SAVE_INPUTS | SAVE_RESULT)
derive(op_avg_pool2d, _d_avg_pool2d,
       lambda x, k, s, p, c, i, d: avg_pool2d(x, k, s, p, c, i, d), SAVE_INPUTS)
derive(op_adaptive_avg_pool2d, _d_adaptive_avg_pool2d,
       lambda x, o: _adaptive_avg_pool2d(x, o), SAVE_INPUTS)
derive(op_adaptive_max_pool2d, _d_adaptive_max_pool2d,
       lambda x, o: adaptive_max_pool2d(x, o), SAVE_INPUTS | SAVE_RESULT)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_max_pool2d_backward.entry = max_pool2d_with_indices_backward
op_avg_pool2d_backward.entry = avg_pool2d_backward
op_adaptive_avg_pool2d_backward.entry = _adaptive_avg_pool2d_backward
op_adaptive_max_pool2d_backward.entry = adaptive_max_pool2d_backward
