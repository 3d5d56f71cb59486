# lerp, addcmul and addcdiv through a backend's optional `ternary` entry (ABI 6.5, abi.h
# EMBER_TERNARY_*): one pass with PyTorch's fused multiply-add formulas, where the
# composites (core/ternary.py) take three to five primitives, a temporary each, and round
# the product apart.  core/ternary.py asks here first; like the activations, the entry
# runs only where nothing but autograd and the profiler sees the call (plain_floating),
# the caller deciding whether autograd records it.

cdef bint ternary_operand(object t, TensorBase first) noexcept:
    """t may go to the entry beside `first`: a plain floating tensor of its dtype and device."""
    return isinstance(t, TensorBase) and plain_floating(<TensorBase>t) and \
        (<TensorBase>t)._dtype is first._dtype and (<TensorBase>t)._device == first._device


cdef bint ternary_ready(object a, object b, object c) noexcept:
    """Whether the entry may take these operands (c None: a number)."""
    if not isinstance(a, TensorBase) or not plain_floating(<TensorBase>a):
        return False
    return (<TensorBase>a)._backend.kernels().ternary is not NULL and \
        ternary_operand(b, <TensorBase>a) and (c is None or ternary_operand(c, <TensorBase>a))


def _ternary_ready(a, b, c):
    """Whether _ternary may run on these operands (it may still decline: shapes, kernel)."""
    return ternary_ready(a, b, c)


def _ternary(int code, a, b, c, double p, out=None):
    """The EMBER_TERNARY_* op ``code`` of a, b and w = c (None: the number p), broadcast,
    as a new tensor or written into ``out`` (only ever ``a`` itself: the in-place forms);
    None where the entry does not apply (operands, dtypes, modes, shapes, a backend
    without it, or the kernel declining): the caller runs its composite."""
    if not ternary_ready(a, b, c):
        return None
    cdef TensorBase ta = <TensorBase>a
    cdef ember_kernel_table* tab = ta._backend.kernels()
    cdef int64_t sizes[MAX_DIM]
    cdef int nd = ta._ndim, i, j
    cdef TensorBase t
    for x in (b, c):
        if x is not None:
            nd = max(nd, (<TensorBase>x)._ndim)
    for i in range(nd):
        sizes[i] = 1
    for x in (a, b, c):
        if x is None:
            continue
        t = <TensorBase>x
        for i in range(t._ndim):
            j = nd - t._ndim + i
            if sizes[j] == 1:
                sizes[j] = t._sizes[i]
            elif t._sizes[i] != 1 and t._sizes[i] != sizes[j]:
                return None                 # the composite raises PyTorch's error
    cdef TensorBase o
    if out is not None:
        if out is not a or ta._ndim != nd:
            return None
        for i in range(nd):
            if ta._sizes[i] != sizes[i]:
                return None                 # (PyTorch's "doesn't match the broadcast shape")
        check_writable(ta, b, c)
        o = ta
    else:
        o = empty_c(nd, sizes, ta._dtype, ta._device)
    if o.numel_c() == 0:
        return o
    cdef ember_view vo, va, vb, vc
    o.view_c(&vo)
    expanded_view(ta, nd, sizes, &va)
    expanded_view(<TensorBase>b, nd, sizes, &vb)
    if c is not None:
        expanded_view(<TensorBase>c, nd, sizes, &vc)
    cdef const ember_view* pc = &vc if c is not None else NULL
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    if o.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = tab.ternary(&ctx, code, &vo, &va, &vb, pc, p)
    else:
        rc = tab.ternary(&ctx, code, &vo, &va, &vb, pc, p)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        return None
    if rc:
        raise_kernel_error(rc, &ctx)
    if out is not None:
        o.bump()
    return o
