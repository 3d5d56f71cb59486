"""NaN-ignoring reductions and torch.norm, as composites of primitive reductions."""
from ember.core import _tensor as _T
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core.composites import isnan, vector_norm

__all__ = ["nanmean", "nansum", "norm"]


def _zero_nans(x):
    return _T.where(isnan(x), 0, x).to(x.dtype) if x.is_floating_point() else x


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None,
           keepdims=None):
    """Sum over ``dim`` treating NaN as zero."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("nansum", dim, keepdim, axis, keepdims)
    x = _tensor_arg(input, "nansum", position=1)
    return _T.sum(_zero_nans(x), dim, keepdim, dtype=dtype, out=out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None,
            keepdims=None):
    """Mean over ``dim`` of the non-NaN elements (NaN where there are none)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("nanmean", dim, keepdim, axis, keepdims)
    x = _tensor_arg(input, "nanmean", position=1)
    if not x.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_scalar_name(x)}")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must "
                               f"be either a floating point or complex dtype. Got: {dtype}")
        x = x.to(dtype)
    count = (x == x).sum(dim, keepdim, dtype=x.dtype)       # the non-NaN elements
    r = _T.sum(_zero_nans(x), dim, keepdim) / count
    return r if out is None else out.copy_(r)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector ``p``-norm over ``dim`` (all elements by default); 'fro' is
    the 2-norm over the dims given (at most two), 'nuc' is not supported here."""
    x = _tensor_arg(input, "norm", position=1)
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("norm(): p='nuc' needs singular values, which ember "
                                      "does not compute yet")
        if p != "fro":
            raise RuntimeError(f"norm(): unsupported p {p!r}: expected 'fro', 'nuc' or a number")
        if dim is not None and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {tuple(dim)}")
        p = 2
    if p is None:
        p = 2
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro', not "
                        f"{type(p).__name__}")
    r = vector_norm(x, p, dim, keepdim, dtype=dtype)
    return r if out is None else out.copy_(r)

