# Pointwise activations through a backend's optional `activation` entry (ABI 6.4, abi.h
# EMBER_ACTIVATION_*): leaky_relu, hardtanh, hardsigmoid, hardswish, silu, elu, softplus,
# logsigmoid, hardshrink, softshrink and mish as one kernel each way instead of their
# composites' three to eight primitives (core/activations.py asks here first).
#
# The fused op runs only where nothing but autograd and the profiler sees the call: under
# vmap, forward AD, autocast or a Python mode (ember.compile's capture, FakeTensor), on the
# meta device, for other dtypes, or on a backend without the entry, the caller's composite
# runs, and with it the primitives' batching rules, tangents and lowerings.  Each activation
# is an Op of PyTorch's name and arguments (leaky_relu(self, negative_slope), elu(self,
# alpha, scale, input_scale), ...; its node is LeakyReluBackward0, ...).  Its derivative
# calls the backward kernel, or, when the backward is itself recorded (create_graph), the
# composite derivative of core/activations.py, so it can be differentiated again.  clamp
# has the kernel alone (_activation_kernel): its nodes are core/elementwise_nodes.py's.

cdef uint64_t FUSABLE_KEYS = BACKEND_MASK | (
    (<uint64_t>1 << DispatchKey.ADInplaceOrView) | (<uint64_t>1 << DispatchKey.Autograd)
    | (<uint64_t>1 << DispatchKey.Profiler) | (<uint64_t>1 << DispatchKey.BackendSelect))

# the kernels' names, by EMBER_ACTIVATION_* code (PyTorch's op names)
cdef tuple _ACTIVATION_NAMES = (
    "leaky_relu", "hardtanh", "clamp", "hardsigmoid", "hardswish", "silu", "elu", "softplus",
    "log_sigmoid", "hardshrink", "softshrink", "mish")
cdef dict _activation_ops = {}              # op name -> Op (Op.code: its kernel's code)


class _NotFused(Exception):
    """The kernel declined the call (op or dtype): the caller runs its composite."""


cdef bint plain_floating(TensorBase x) noexcept:
    """Whether only autograd and the profiler see a call on x (see above), and x is a real
    floating tensor on a device with memory (not meta)."""
    return not (effective_keys(x._keys) & ~FUSABLE_KEYS) and x._bt is None \
        and not x._backend.is_meta and x._dtype.is_floating_point and not x._dtype.is_complex


cdef bint activation_fusable(TensorBase x) noexcept:
    """plain_floating, on a backend with the entry."""
    return plain_floating(x) and x._backend.kernels().activation is not NULL


cdef TensorBase run_activation(int code, TensorBase x, TensorBase g, double p0, double p1,
                               double p2, TensorBase dst=None):
    """out = f(x), or g * f'(x), through the entry; raises _NotFused when it declines.
    ``dst``: where to write, contiguous (x itself: in place; the entry's out may be its a)."""
    cdef ember_kernel_table* tab = x._backend.kernels()
    if tab.activation is NULL:
        raise _NotFused()
    if not x.contiguous_c():
        x = contiguous_copy(x)
    if g is not None:
        same_device(_ACTIVATION_NAMES[code], x, g)
        if g.shape != x.shape:
            raise RuntimeError(f"{_ACTIVATION_NAMES[code]}_backward: grad_output of shape "
                               f"{list(g.shape)} for an input of shape {list(x.shape)}")
        if not g.contiguous_c() or g._dtype is not x._dtype:
            g = contiguous_copy(cast_to(g, x._dtype))
    cdef TensorBase o = empty_c(x._ndim, x._sizes, x._dtype, x._device) if dst is None \
        else dst
    if o.numel_c() == 0:
        return o
    cdef ember_view vo, va, vb
    o.view_c(&vo)
    x.view_c(&va)
    if g is not None:
        g.view_c(&vb)
    cdef const ember_view* pb = &vb if g is not None else NULL
    cdef double p[3]
    p[0], p[1], p[2] = p0, p1, p2
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    if o.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = tab.activation(&ctx, code, p, &vo, &va, pb)
    else:
        rc = tab.activation(&ctx, code, p, &vo, &va, pb)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        raise _NotFused()
    if rc:
        raise_kernel_error(rc, &ctx)
    return o


cdef object written(int code, TensorBase x, TensorBase g, double p0, double p1, double p2,
                    object out):
    """The kernel writing into ``out`` (x itself for the in-place forms, or an out=
    tensor of x's shape, dtype and device), where nothing records the write (autograd's
    rules for it take the composite's copy_) and out is contiguous; None otherwise."""
    if not isinstance(out, TensorBase):
        return None
    cdef TensorBase o = <TensorBase>out
    if (x._keys & AUTOGRAD_BIT and is_grad_enabled_c()) or (o._keys & AUTOGRAD_BIT) or \
            not o.contiguous_c() or o._dtype is not x._dtype or o._device != x._device or \
            o._ndim != x._ndim or memcmp(o._sizes, x._sizes, x._ndim * sizeof(int64_t)) or \
            (o is not x and not x.contiguous_c()):
        return None
    grant_out_write(o, x, g)                # out=, not in place: a captured out may be written
    check_writable(o, x, g)
    try:
        run_activation(code, x, g, p0, p1, p2, o)
    except _NotFused:
        return None
    o.bump()
    return o


def _activation(str name, input, double p0=0.0, double p1=0.0, double p2=0.0, out=None):
    """Activation op ``name`` (leaky_relu ... mish, celu) of ``input`` with abi.h's
    parameters p0..p2 as one kernel and one graph node, or None where the fused op does not
    apply (see above): the caller then runs its composite.  ``out``: input itself, for the
    in-place forms (written in place where nothing records it)."""
    if not isinstance(input, TensorBase) or not activation_fusable(<TensorBase>input):
        return None
    cdef Op op = <Op>_activation_ops[name]
    if out is input:
        r = written(op.code, <TensorBase>input, None, p0, p1, p2, out)
        if r is not None:
            return r
    cdef object kernel = routed(op, <TensorBase>input)
    try:
        if kernel is not None:
            return kernel(input, p0, p1, p2)
        return run_activation(op.code, <TensorBase>input, None, p0, p1, p2)
    except _NotFused:
        return None


def _activation_kernel(str kernel, input, grad_output=None, double p0=0.0, double p1=0.0,
                       double p2=0.0, out=None):
    """The entry's ``kernel`` (a name of abi.h's EMBER_ACTIVATION_* codes) on ``input``,
    the backward with ``grad_output``, recording nothing; None where it does not apply.
    ``out``: where to write (see written)."""
    if not isinstance(input, TensorBase) or not activation_fusable(<TensorBase>input) or (
            grad_output is not None and not (isinstance(grad_output, TensorBase)
                                             and activation_fusable(<TensorBase>grad_output))):
        return None
    if out is not None:
        return written(_ACTIVATION_NAMES.index(kernel), <TensorBase>input, grad_output, p0,
                       p1, p2, out)
    try:
        return run_activation(_ACTIVATION_NAMES.index(kernel), <TensorBase>input,
                              grad_output, p0, p1, p2)
    except _NotFused:
        return None


cdef object activation_formula(str name, int code):
    # the composite derivatives, grad * f'(x) in differentiable ops (core/activations.py,
    # which imports this module)
    derivative = []

    def composite(x, g, p0, p1, p2):
        if not derivative:
            from ember.core.activations import DERIVATIVES
            derivative.append(DERIVATIVES[_ACTIVATION_NAMES[code]])
        return derivative[0](x, g, p0, p1, p2)

    def formula(ctx, g):
        x, p0, p1, p2 = ctx.args
        if name == "celu":              # PyTorch's celu backward: 1 / alpha.toFloat()
            p2 = 1.0 / <double><float>p0
        # the backward is recorded, or a vmap's wrapper (jacrev's batch of cotangents) or a
        # tangent reaches it: differentiable ops, which the dispatcher's keys handle
        if is_grad_enabled_c() or not (isinstance(g, TensorBase) and plain_floating(g)
                                       and plain_floating(x)):
            return (composite(x, g, p0, p1, p2), None, None, None)
        try:
            return (run_activation(code, x, g, p0, p1, p2), None, None, None)
        except _NotFused:               # (a backend that fused the forward declines this)
            return (composite(x, g, p0, p1, p2), None, None, None)
    return formula


cdef object activation_entry(int code):
    def entry(x, p0=0.0, p1=0.0, p2=0.0):
        return run_activation(code, as_tensor_arg(x, _ACTIVATION_NAMES[code], "input"), None,
                              p0, p1, p2)
    return entry


# PyTorch's arguments after self, named by op (p0, p1, p2 in abi.h)
cdef dict _ARGUMENTS = {
    "leaky_relu": "Scalar negative_slope=0.01", "hardtanh": "Scalar min_val=-1, Scalar "
    "max_val=1", "hardsigmoid": "", "hardswish": "", "silu": "", "elu": "Scalar alpha=1, "
    "Scalar scale=1, Scalar input_scale=1", "celu": "Scalar alpha=1, Scalar scale=1, Scalar "
    "input_scale=1", "softplus": "Scalar beta=1, Scalar threshold=20", "log_sigmoid": "",
    "hardshrink": "Scalar lambd=0.5", "softshrink": "Scalar lambd=0.5", "mish": ""}


cdef int define_activations() except -1:
    cdef Op op
    cdef int code
    for name, arguments in _ARGUMENTS.items():
        code = _ACTIVATION_NAMES.index("elu" if name == "celu" else name)
        op = Op(name, f"{name}(Tensor self{', ' if arguments else ''}{arguments}) -> Tensor",
                FAMILY_ACTIVATION, code, _rules.elementwise)
        _activation_ops[name] = op
        derive(op, activation_formula(name, code), activation_entry(code), SAVE_INPUTS)
    return 0


define_activations()

# op name -> its kernel's name (celu: elu), for the forward-mode formulas
ACTIVATION_KERNELS = {name: _ACTIVATION_NAMES[(<Op>op).code]
                      for name, op in _activation_ops.items()}
