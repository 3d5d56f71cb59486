"""What every batching rule uses: unwrapping the innermost vmap level's wrappers (the
physical tensor, batch dim first), wrapping results, aligning batched and unbatched
operands, and mapping a per-sample dim to the physical tensor."""
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase

__all__ = ["BatchRuleError", "UnbatchedSelfWrite", "align", "dim_of", "logical_ndim",
           "materialize", "refuse_unbatched_self", "unwrap", "unwrap_shared", "wrap",
           "wrap_all", "wrap_view"]

_batch_level = _T._batch_level
_make_batched = _T._make_batched


class BatchRuleError(RuntimeError):
    """A batching rule met a case it does not cover: the loop fallback runs instead."""


def unwrap(x, level):
    """(physical tensor, True) for a wrapper of ``level``; (x, False) otherwise."""
    if isinstance(x, TensorBase):
        b = _batch_level(x)
        if b is not None and b.level == level:
            return b.value, True
    return x, False


def unwrap_shared(x, level):
    """unwrap, with a batch that is an expanded tensor (stride 0: every sample the same, as
    grad's inputs shared by the samples are) read as unbatched, so rules take their
    unbatched path (one GEMM, one convolution) for it."""
    v, batched = unwrap(x, level)
    if batched and v.stride(0) == 0:
        return v.select(0, 0), False
    return v, batched


def wrap(value, level):
    return _make_batched(value, level)


def wrap_view(value, level, base):
    """A view op's result: the wrapper of ``value`` whose _base is the wrapper it views."""
    return _make_batched(value, level, base)


def wrap_all(r, level):
    """A rule's physical result(s) wrapped (tensors; tuples of them; None kept)."""
    if isinstance(r, TensorBase):
        return _make_batched(r, level)
    if isinstance(r, (tuple, list)):
        return type(r)(None if x is None else wrap_all(x, level) for x in r) \
            if not hasattr(r, "_fields") else type(r)(*(wrap_all(x, level) for x in r))
    return r


def logical_ndim(x, batched):
    return x.dim() - 1 if batched else x.dim()


def materialize(x, batched, size):
    """x with a batch dim: its physical tensor, or an unbatched tensor expanded (a view)."""
    if batched:
        return x
    return x.unsqueeze(0).expand(size, *x.shape)


def align(x, batched, ndim):
    """A batched physical tensor given ``ndim`` per-sample dims (size-1 dims inserted after
    the batch dim), so it broadcasts against tensors of ``ndim`` dims and batched ones."""
    if not batched:
        return x
    for _ in range(ndim - (x.dim() - 1)):
        x = x.unsqueeze(1)
    return x


def dim_of(d, ndim):
    """Per-sample dim ``d`` (of a tensor with ``ndim`` dims) as a dim of the physical one."""
    return _T._wrap_dim(d, ndim) + 1



class UnbatchedSelfWrite(RuntimeError):
    """Batched values written in place into an unbatched tensor: a composite doing so runs
    sample by sample instead (its result would be batched)."""


def refuse_unbatched_self(op_name="inplace arithmetic"):
    """An in-place op on an unbatched tensor with batched operands (PyTorch's message)."""
    raise UnbatchedSelfWrite(
        f"vmap: {op_name}(self, *extra_args) is not possible because there exists a Tensor "
        f"`other` in extra_args that has more elements than `self`. This happened due to "
        f"`other` being vmapped over but `self` not being vmapped over in a vmap. Please try "
        f"to use out-of-place operators instead of inplace arithmetic. If said operator is "
        f"being called inside the PyTorch framework, please file a bug report instead.")
