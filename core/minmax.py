"""ember.max / ember.min with PyTorch's overloads: the full reduction, (values, indices)
over ``dim``, or the elementwise maximum/minimum with another tensor.  (A module of its
own: the names shadow Python's builtins.)"""
from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._errors import _tensor_arg
from ember.core._results import values_indices, values_indices_out
from ember.core._tensor import TensorBase

__all__ = ["max", "min"]


def _extreme(name, input, dim, keepdim, other, other_fn, full_fn, pos_fn):
    _tensor_arg(input, name)
    if other is not None:               # max(input, other=...): nothing else goes with it
        if not isinstance(other, TensorBase) or dim is not None or keepdim is not False:
            raise TypeError(f"{name}() received an invalid combination of arguments - "
                            f"expected one of: (Tensor input), (Tensor input, Tensor other), "
                            f"(Tensor input, int dim, bool keepdim = False)")
        dim = other
    if isinstance(dim, TensorBase):                      # max(input, other)
        return other_fn(input, dim)
    if input.is_complex():                               # complex numbers have no order
        if dim is None:
            raise NotImplementedError(f'"{name}_all" not implemented for '
                                      f"'{_T._st_name(input.dtype)}'")
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        return full_fn(input)
    # argmax refuses bool input (PyTorch); max(dim) takes it: bools order as 0/1 bytes
    indices = pos_fn(input.byte() if input.dtype.name == "bool" else input, dim, keepdim)
    if input.requires_grad and input.dim() and _ag.is_grad_enabled():
        # the gradient goes to the chosen element alone (torch), not split between ties
        picked = input.gather(dim, indices if keepdim else indices.unsqueeze(dim))
        return values_indices(name, picked if keepdim else picked.squeeze(dim), indices)
    return values_indices(name, full_fn(input, dim, keepdim), indices)


def _written(name, input, r, out):
    """``r``, or ``out`` holding it (checked and resized as PyTorch's out= does): a tensor,
    or the (values, indices) pair of the reduction over a dim."""
    if out is None:
        return r
    if isinstance(r, TensorBase):
        return _T._result_out(r, out, name)
    return values_indices_out(name, input, r, out)


def max(input, dim=None, keepdim=False, *, other=None, out=None, axis=None,
        keepdims=None):
    """max(input) -> the largest element; max(input, dim, keepdim=False) -> (values, indices);
    max(input, other) -> the elementwise maximum."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("max", dim, keepdim, axis, keepdims)
    r = _extreme("max", input, dim, keepdim, other, _T.maximum, _T.amax, _T.argmax)
    return _written("max", input, r, out)


def min(input, dim=None, keepdim=False, *, other=None, out=None, axis=None,
        keepdims=None):
    """min(input) -> the smallest element; min(input, dim, keepdim=False) -> (values, indices);
    min(input, other) -> the elementwise minimum."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("min", dim, keepdim, axis, keepdims)
    r = _extreme("min", input, dim, keepdim, other, _T.minimum, _T.amin, _T.argmin)
    return _written("min", input, r, out)
