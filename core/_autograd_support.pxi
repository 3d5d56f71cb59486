# What the autograd engine (core/_autograd.pyx) needs from the tensor module: the
# requires_grad bit, detach, the reduction of a gradient to its input's shape, and each
# op's derivative: `derive(op, formula, entry, save)` stores on the op
#   formula(ctx, grad) -> one gradient per positional argument (None where there is none),
#   entry(*args, **kwargs) -> runs the op again (called with Autograd excluded),
#   save: which values the formula reads and whether the op writes its first argument
#         (the DerivativeFlags of _dispatch.pxd).
# Formulas sit next to their op's definition, written with ember ops, so they run on
# every device and can themselves be differentiated (create_graph=True).

cdef void derive(Op op, object formula, object entry, int save):
    op.derivative = (formula, entry, save)
    op.entry = entry                # what a mode key (Autocast, Profiler) redispatches to


cdef TensorBase with_grad(TensorBase t, object requires_grad):
    """A factory's result, with requires_grad=True applied (a leaf)."""
    if requires_grad:
        if not (t._dtype.is_floating_point or t._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._keys |= AUTOGRAD_BIT
    return t


cdef TensorBase detach_c(TensorBase t, bint share_version):
    """An alias of t with no autograd history; PyTorch's detach() shares the version
    counter, `.data` does not."""
    cdef TensorBase r = new_tensor(t._storage, t._dtype, t._ndim, t._sizes, t._strides,
                                   t._offset)
    if share_version:
        r._version = t.version()
    r._inference = t._inference
    r._level = t._level                 # detach() is a view: a captured tensor's stays one
    if t._bt is not None:               # an alias of a vmap wrapper is one too
        r._bt = t._bt
        r._keys |= BATCHED_BIT
    return r


cdef object sum_to(TensorBase g, object shape):
    """g summed over the dims it was broadcast along to reach its shape from `shape`."""
    cdef int nd = len(shape), lead = g._ndim - nd, i
    if lead == 0 and shape_c(g) == shape:
        return g
    dims = list(range(lead))
    for i in range(nd):
        if shape[i] == 1 and g._sizes[lead + i] != 1:
            dims.append(lead + i)
    r = reduce_op(op_sum, g, tuple(dims), True, None, None) if dims else g
    return reshape_c(r, (shape,)) if r.shape != shape else r


def _adopt_view(TensorBase t, TensorBase v):
    """The in-place view ops (t_, unsqueeze_, ...): t takes the geometry of v, a view of t,
    and v's history (the view node recorded on top of t's old history)."""
    check_write(t)
    t._ndim, t._offset, t._shape = v._ndim, v._offset, None
    memcpy(t._sizes, v._sizes, v._ndim * sizeof(int64_t))
    memcpy(t._strides, v._strides, v._ndim * sizeof(int64_t))
    if v._grad_fn is not None:
        t._grad_fn, t._output_nr = v._grad_fn, v._output_nr
    return t


def _adopt_data(TensorBase t, TensorBase src):
    """`t.data = src`: storage and metadata from src; t's autograd state stays."""
    cdef uint64_t ag = t._keys & AUTOGRAD_BIT
    adopt(t, src)
    t._version = VersionCounter.__new__(VersionCounter)
    t._shape = None
    t._keys = (t._keys & ~AUTOGRAD_BIT) | ag
