# What function transforms need from the tensor module: vmap's wrappers (a tensor whose
# sizes and strides are one sample's, holding the physical tensor with the batch dim
# first; ember.func's batching rules unwrap it) and the refusal to read a wrapper's data
# outside the dispatcher (its storage is the batch's: reading it would silently give
# sample 0).  Forward AD's tangents live in TensorBase._fw (core/_autograd.pyx owns them).

cdef class BatchLevel:
    """A vmap wrapper's physical tensor (batch dim first) and the vmap level it belongs to."""

    def __repr__(self):
        return f"BatchLevel(level={self.level}, value shape={tuple(self.value.shape)})"


def _make_batched(TensorBase value, int level, TensorBase base=None):
    """The wrapper of vmap level ``level`` around ``value`` (its dim 0 is the batch): a
    tensor with one sample's sizes and strides that the Batched key routes to the batching
    rules.  It shares value's storage and version counter (in-place ops write value).  A
    view op's result names the wrapper it views as ``base`` (its ``_base``, which autograd
    needs for in-place writes through views)."""
    if value._ndim == 0:
        raise RuntimeError("vmap: a batched tensor needs a batch dimension")
    cdef TensorBase w = new_tensor(value._storage, value._dtype, value._ndim - 1,
                                   value._sizes + 1, value._strides + 1, value._offset)
    cdef BatchLevel b = BatchLevel.__new__(BatchLevel)
    b.value = value
    b.level = level
    w._bt = b
    w._version = value.version()
    w._keys |= BATCHED_BIT
    w._inference = value._inference
    w._level = value._level
    if base is not None:
        w._base_ref = base._base_ref if base._base_ref is not None else base
    return w


def _zeros_for(g, shape):
    """zeros_for: zeros of ``shape`` batched as ``g`` is (every vmap level)."""
    return zeros_for(g, tuple(shape))


def _batch_level(TensorBase t):
    """t's BatchLevel if t is a vmap wrapper, else None."""
    return t._bt


cdef object zeros_for(object g, object shape):
    """Zeros of ``shape`` with g's dtype and device and g's vmap batch (every level of it):
    what a backward formula writes g's pieces into (a plain zero tensor could not take a
    batched gradient in place)."""
    cdef TensorBase t = <TensorBase>g
    if t._bt is None:
        return zeros(shape, dtype=t._dtype, device=t._device)
    cdef TensorBase v = <TensorBase>t._bt.value
    return _make_batched(zeros_for(v, (v._sizes[0],) + tuple(shape)), t._bt.level)


cdef int refuse_batched(TensorBase t, bint item) except -1:
    """Data access that bypasses the dispatcher is an error on a vmap wrapper (PyTorch's
    messages: .item() and data-dependent control flow)."""
    if item:
        raise BatchedDataAccess(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
            "over calling .item() on a Tensor, please try to rewrite what you're doing with "
            "other operations. If error is occurring somewhere inside PyTorch internals, "
            "please file a bug report.")
    raise BatchedDataAccess(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
        "control flow. We don't support that yet, please shout over at "
        "https://github.com/pytorch/functorch/issues/257 .")


class BatchedDataAccess(RuntimeError):
    """A vmap wrapper's values were read outside the dispatcher (item, bool, numpy, ...):
    ember.func's composite handling catches it and runs the composite sample by sample."""
