# What the other op modules call of core/_views.pyx (the Tensor module reaches the ones it
# calls through its hooks, _tensor.pxd).
from libc.stdint cimport int64_t

from ember.core._dtype cimport EMBER_BOOL
from ember.core._tensor cimport TensorBase

cdef TensorBase expand_c(TensorBase t, tuple args)
cdef TensorBase index_view(TensorBase t, tuple index, list adv)
cdef TensorBase narrow_c(TensorBase t, object dim, int64_t start, int64_t length, int64_t step)
cdef TensorBase permute_c(TensorBase t, object dims)
cdef TensorBase reshape_c(TensorBase t, tuple args)
cdef TensorBase select_c(TensorBase t, object dim, int64_t index)
cdef TensorBase squeeze_c(TensorBase t, object dim)
cdef TensorBase transpose_c(TensorBase t, object dim0, object dim1)
cdef TensorBase unsqueeze_c(TensorBase t, object dim)


# which indices are advanced (a getitem's path: the view or the index family)
cdef inline bint is_index_tensor(object ix) noexcept:
    """An advanced index once converted: a tensor that is not a 0-d integer (a 0-d integer
    tensor indexes like an int), or a vmap wrapper of any (one sample's index is 0-d, the
    batch's values differ: the index op's batching rule takes it, as PyTorch's does)."""
    return isinstance(ix, TensorBase) and (
        (<TensorBase>ix)._ndim > 0 or (<TensorBase>ix)._dtype.code == EMBER_BOOL
        or (<TensorBase>ix)._bt is not None)


cdef inline int mask_dims(object ix) noexcept:
    """Dims an index consumes: a bool mask its ndim, anything else 1."""
    if isinstance(ix, TensorBase) and (<TensorBase>ix)._dtype.code == EMBER_BOOL:
        return (<TensorBase>ix)._ndim
    return 1


cdef inline bint has_advanced(tuple items):
    for ix in items:
        if isinstance(ix, (list, bool, range)) or is_index_tensor(ix) or is_array(ix):
            return True
    return False


cdef inline bint is_array(object ix):
    """A NumPy-style array with at least one dim (a 0-d one indexes like an int)."""
    return not isinstance(ix, TensorBase) and hasattr(ix, "__array__") and \
        getattr(ix, "ndim", 0) > 0
