"""Order statistics and moments as composites: aminmax, nanmedian, quantile/nanquantile
(all of torch's interpolation modes), cov, corrcoef, trapezoid/cumulative_trapezoid.
Sorted values are read back with gather from the sort's indices, so they carry gradients."""
import collections
import math
import warnings

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.composites import _wrap, isnan, lerp
from ember.core.sorting import sort

__all__ = ["aminmax", "corrcoef", "cov", "cumulative_trapezoid", "nanmedian", "nanquantile",
           "quantile", "trapezoid", "trapz"]

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
_MinMax = collections.namedtuple("aminmax", ["min", "max"])
_MinMax.__module__ = "ember.return_types"


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) of ``input`` over ``dim`` (all elements by default) in one call."""
    t = _tensor_arg(input, "aminmax")
    if t.numel() == 0 and (dim is None or t.shape[_wrap(dim, max(t.dim(), 1), "aminmax")] == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    red = () if dim is None else dim
    lo, hi = _T.amin(t, red, keepdim), _T.amax(t, red, keepdim)
    if dim is None and keepdim:
        lo, hi = lo.reshape((1,) * t.dim()), hi.reshape((1,) * t.dim())
    return _MinMax(lo, hi)


def _sorted_last(x):
    """x sorted along its last dim (NaN last) and the sort's indices."""
    idx = sort(x, -1).indices
    return x.gather(-1, idx), idx


def _check_q(op, q, x):
    if isinstance(q, TensorBase):
        if q.dtype != x.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        if q.dim() > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
        return q, q.dim() == 0
    if not 0 <= q <= 1:
        raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
    return _T.tensor(float(q), dtype=x.dtype, device=x.device), True


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    x = _tensor_arg(input, op)
    if x.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    qt, scalar = _check_q(op, q, x)
    if x.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if dim is None:
        rows, d = x.reshape(1, -1), None
    else:
        d = _wrap(dim, max(x.dim(), 1), op)
        rows = x.movedim(d, -1) if x.dim() else x.reshape(1)
    values, _ = _sorted_last(rows)
    nan = isnan(rows)
    n = rows.shape[-1]
    count = nan.logical_not().sum(-1, keepdim=True) if ignore_nan else \
        _T.full((), n, device=x.device)
    rank = qt.reshape(-1) * (count - 1).to(x.dtype)
    rank = _T._maximum_scalar(rank, 0.0).expand(rows.shape[:-1] + (qt.numel(),))  # [..., Q]
    if interpolation == "nearest":
        rank = _T._round(rank)
    lo, hi = rank.floor(), rank.ceil()
    pick_lo = values.gather(-1, lo.to(_dtype_by_name["int64"]))
    pick_hi = values.gather(-1, hi.to(_dtype_by_name["int64"]))
    if interpolation in ("lower", "nearest"):
        r = pick_lo
    elif interpolation == "higher":
        r = pick_hi
    else:
        w = rank - lo if interpolation == "linear" else \
            _T.full((), 0.5, dtype=x.dtype, device=x.device)
        r = lerp(pick_lo, pick_hi, w)
    bad = (count == 0) if ignore_nan else nan.any(-1, keepdim=True)
    r = _T.where(bad, math.nan, r)
    if dim is None:
        r = r.reshape(-1)
        if keepdim:
            r = r.reshape((-1,) + (1,) * x.dim())
    elif keepdim and x.dim():
        r = r.unsqueeze(d)                                     # [..., 1 at d, ..., Q]
    r = r.movedim(-1, 0)
    return r.squeeze(0) if scalar else r


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-quantiles of ``input`` over ``dim`` (all elements by default); a NaN makes
    its row NaN.  A 1-D ``q`` adds a leading dim."""
    r = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return r if out is None else out.copy_(r)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile ignoring NaN (a row of only NaN gives NaN)."""
    r = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return r if out is None else out.copy_(r)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values; with ``dim``, (values, indices)."""
    x = _tensor_arg(input, "nanmedian")
    if dim is None:
        if x.numel() == 0:
            return _T.full((), math.nan, dtype=x.dtype, device=x.device)
        return nanmedian(x.reshape(-1), 0).values
    d = _wrap(dim, max(x.dim(), 1), "nanmedian")
    rows = x.movedim(d, -1) if x.dim() else x.reshape(1)
    if rows.shape[-1] == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
    values, idx = _sorted_last(rows)
    count = isnan(rows).logical_not().sum(-1, keepdim=True) if x.is_floating_point() else \
        _T.full(rows.shape[:-1] + (1,), rows.shape[-1], device=x.device)
    pos = _T._maximum_scalar(((count - 1) / 2).floor(), 0).long()   # no integer //: toy
    v, i = values.gather(-1, pos), idx.gather(-1, pos)
    if keepdim and x.dim():
        v, i = v.movedim(-1, d), i.movedim(-1, d)
    else:
        v, i = v.squeeze(-1), i.squeeze(-1)
    return _T._ValuesIndices("nanmedian", v, i)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    columns), with optional frequency and analytic weights."""
    x = _tensor_arg(input, "cov")
    if x.dim() > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {x.dim()} dimensions")
    x = x.reshape(1, -1) if x.dim() < 2 else x
    if not x.is_floating_point():
        x = x.to(_T._state_default_dtype())
    n = x.shape[1]
    w = None
    for weights, name in ((fweights, "fweights"), (aweights, "aweights")):
        if weights is None:
            continue
        _tensor_arg(weights, "cov", name)
        if weights.dim() > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but "
                               f"got {name} with {weights.dim()} dimensions")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {weights.numel()} != {n}")
        if name == "fweights" and weights.is_floating_point():
            raise RuntimeError("cov(): expected fweights to have integral dtype but got "
                               f"fweights with {_T._st_name(weights.dtype)} dtype")
        if name == "aweights" and not weights.is_floating_point():
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_T._st_name(weights.dtype)} dtype")
        if n and not bool((weights >= 0).all()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    if w is None:
        w_sum = float(n)
        avg = x.mean(1, keepdim=True)
        norm = n - correction
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        norm = w_sum - correction if aweights is None else \
            w_sum - correction * (w * aweights).sum() / w_sum
    if float(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, TensorBase) else 0.0
    xm = x - avg
    c = _T.matmul(xm if w is None else xm * w, xm.t()) / norm
    return c.squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = _T.sqrt(c.diagonal())
    return (c / std.unsqueeze(1) / std.unsqueeze(0)).clamp(-1, 1)


def _spacing(op, y, x, dx, d):
    """The step between samples along ``d``: a number, or a tensor broadcast against y's
    pairwise sums."""
    if x is None:
        return 1 if dx is None else dx
    _tensor_arg(x, op, "x")
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        step = x[1:] - x[:-1]
        return step.reshape((-1,) + (1,) * (y.dim() - 1 - d))
    return x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1)


def _pair_areas(op, y, x, dx, dim):
    _tensor_arg(y, op, "y")
    if x is not None and dx is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: x and dx")
    d = _wrap(dim, max(y.dim(), 1), op)
    m = y.shape[d]
    step = _spacing(op, y, x, dx, d)
    return (y.narrow(d, min(m, 1), max(m - 1, 0)) + y.narrow(d, 0, max(m - 1, 0))) * step / 2, d


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: sample points ``x``, or a constant spacing
    ``dx`` (1 by default)."""
    areas, d = _pair_areas("trapezoid", y, x, dx, dim)
    return areas.sum(d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element fewer there)."""
    areas, d = _pair_areas("cumulative_trapezoid", y, x, dx, dim)
    return _T.cumsum(areas, d)
