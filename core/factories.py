"""Factories: tensors made from numbers, not from an input tensor: eye, linspace, logspace,
scalar_tensor, empty_strided, tril_indices/triu_indices and the deprecated range.  (The
Cython core has the primitive ones: empty, zeros, ones, full, arange, rand, ...)"""
import math
import warnings

from ember.core import _tensor as _T
from ember.core._autograd import set_requires_grad
from ember.core._dtype import _dtype_by_name
from ember.core._factories import _sequence, factory_out, out_spec
from ember.core.shapes import stack

__all__ = ["empty_strided", "eye", "linspace", "logspace", "range", "scalar_tensor",
           "tril_indices", "triu_indices"]

_INT64 = _dtype_by_name["int64"]
_FLOAT64 = _dtype_by_name["float64"]


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
        requires_grad=False):
    """An n x m matrix with ones on the diagonal."""
    result = _T.zeros(n, n if m is None else m, dtype=dtype, device=device)
    _T._refuse_limited("eye", result.dtype)
    result.diagonal().fill_(1)              # before requires_grad: a leaf is not written
    if out is not None:
        return out.copy_(result) if tuple(out.shape) == tuple(result.shape) else \
            out.resize_(result.shape).copy_(result)
    return set_requires_grad(result, requires_grad)


_COMPLEX_CXX = {"complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _space_dtype(op, start, end, dtype):
    """The result dtype: ``dtype``, else the default dtype, made complex (as PyTorch infers
    it) when an endpoint is complex; a real ``dtype`` cannot hold complex endpoints."""
    inferred = _T._state_default_dtype()
    if any(isinstance(v, complex) or isinstance(v, _T.TensorBase) and v.is_complex()
           for v in (start, end)):
        inferred = inferred.to_complex()
        if dtype is not None and not dtype.is_complex:
            name = _COMPLEX_CXX.get(inferred.name, inferred.name)
            raise RuntimeError(f"torch.{op}(): inferred dtype {name} can't be safely cast to "
                               f"passed dtype {_T._st_name(dtype)}")
    return inferred if dtype is None else dtype


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if out is not None:                 # computed in out's dtype, then written there
        dtype, device = out_spec(out, dtype, device, "linspace")
        return factory_out(linspace(start, end, steps, dtype=dtype, device=device), out,
                           requires_grad)
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    if dtype is not None:
        dtype = _T._dtypes.as_dtype(dtype, "linspace", "dtype")
        _T._refuse_limited("linspace", dtype)
    dtype = _space_dtype("linspace", start, end, dtype)
    numbers = type(start) in (int, float) and type(end) in (int, float)
    if numbers and not (dtype.is_floating_point or dtype.is_complex):
        # PyTorch's integer kernel converts the endpoints to the dtype first (7.5 -> 7; out
        # of its range raises)
        start, end = (_T.full((), v, dtype=dtype).item() for v in (start, end))
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    # from both ends, as PyTorch does, so the last value is exactly `end`
    # (a single step is `start`, as PyTorch's); in double, rounded to dtype once
    half = 1 if steps == 1 else steps // 2
    if numbers and not dtype.is_complex:
        values = _sequence(steps, float(start), step, float(end), half, _FLOAT64, device)
    else:
        i = _T.arange(steps, dtype=_FLOAT64, device=device)
        values = _T.where(i < half, start + step * i, end - step * (steps - 1 - i))
    return set_requires_grad(values.to(dtype), requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``base`` ** linspace(start, end, steps)."""
    if out is not None:
        dtype, device = out_spec(out, dtype, device, "logspace")
        return factory_out(logspace(start, end, steps, base, dtype=dtype, device=device), out,
                           requires_grad)
    if dtype is not None:
        dtype = _T._dtypes.as_dtype(dtype, "logspace", "dtype")
    dtype = _space_dtype("logspace", start, end, dtype)
    exps = linspace(start, end, steps, device=device, dtype=_dtype_by_name[
        "complex128" if dtype.is_complex else "float64"])
    values = (base ** exps).to(dtype)
    return set_requires_grad(values, requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """A 0-d tensor holding ``s`` (the default float dtype unless ``dtype``)."""
    return _T.full((), s, dtype=dtype or _T._state_default_dtype(), device=device,
                   requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given sizes and strides."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    span = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    buf = _T.empty(span, dtype=dtype, device=device)
    r = buf.as_strided(size, stride, 0).detach()
    return set_requires_grad(r) if requires_grad else r


def _triangle_indices(row, col, offset, upper, dtype, device):
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else
                           f"col must be non-negative, got{col}")
    r = _T.arange(row, device=device).reshape(-1, 1).expand(row, col)
    c = _T.arange(col, device=device).reshape(1, -1).expand(row, col)
    keep = (c - r >= offset) if upper else (c - r <= offset)
    return stack([r[keep], c[keep]]).to(dtype) if row * col else \
        _T.empty(2, 0, dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """[2, n] row/column indices of the lower triangle (on and below ``offset``)."""
    return _triangle_indices(row, col, offset, False, dtype or _INT64, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """[2, n] row/column indices of the upper triangle (on and above ``offset``)."""
    return _triangle_indices(row, col, offset, True, dtype or _INT64, device)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """Deprecated: values from ``start`` to ``end`` INCLUSIVE (use arange)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = math.floor((end - start) / step) + 1
    r = (_T.arange(n, dtype=_dtype_by_name["float64"], device=device) * step + start)
    dtype, device = out_spec(out, dtype, device, "range")
    r = r.to(dtype=dtype or _T._state_default_dtype(), device=device)
    return factory_out(r, out, requires_grad)
