"""Reductions and statistics as composites: var/std and var_mean/std_mean, nansum/nanmean,
count_nonzero, logsumexp and logcumsumexp; order statistics and moments: aminmax, nanmedian,
quantile/nanquantile (all of torch's interpolation modes), cov, corrcoef, trapezoid/
cumulative_trapezoid.  Sorted values are read back with gather from the sort's indices, so
they carry gradients.  (The norms are in core/norms.py, sort/median/mode in
core/sorting.py.)"""
import math
import warnings

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core._results import result_type, values_indices, values_indices_out
from ember.core._tensor import TensorBase
from ember.core.complex_functions import complex as _complex
from ember.core.complex_ops import logaddexp as _complex_logaddexp
from ember.core.elementwise import _opmath, _out, isinf, isnan, logaddexp
from ember.core.function import Function
from ember.core.shape_rules import _wrap
from ember.core.shapes import cat
from ember.core.sorting import _empty_median, _evenly_distributed, _int_dim, sort
from ember.core.ternary import lerp
from ember.core.typeinfo import finfo

__all__ = ["aminmax", "corrcoef", "count_nonzero", "cov", "cumulative_trapezoid",
           "logcumsumexp", "logsumexp", "nanmean", "nanmedian", "nanquantile", "nansum",
           "quantile", "std", "std_mean", "trapezoid", "trapz", "var", "var_mean"]


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
_MinMax = result_type("aminmax", ("min", "max"))


def _var(input, dim, correction, keepdim, op, root=False):
    """(variance, or with ``root`` its square root; the mean) over ``dim``."""
    x = _tensor_arg(input, op)
    if not x.is_floating_point() and not x.is_complex():
        raise RuntimeError(f"{'std and var' if op in ('var', 'std') else op} only support "
                           f"floating point and complex dtypes")
    if _opmath(x.dtype) != x.dtype:                 # torch computes these in float32
        v, m = _var(x.float(), dim, correction, keepdim, op, root)
        return v.to(x.dtype), m.to(x.dtype)
    mean = x.mean(dim, keepdim=True)
    if x.is_complex():          # E|z - mean|^2: real, the parts' squared deviations summed
        d = x - mean
        sq = _T.square(d.real) + _T.square(d.imag)
    else:
        sq = _T.square(x - mean)
    n = x.numel() // max(1, mean.numel())
    if n - correction <= 0:
        import warnings
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    var = sq.sum(dim, keepdim=keepdim) / max(0, n - correction)
    if root:
        var = _StdRoot.apply(var) if _ag._tracked(var) else _T.sqrt(var)
    return var, (mean if keepdim else mean.squeeze(dim) if dim is not None else mean.view(()))


class _StdRoot(Function):
    """std = sqrt(var) with PyTorch's derivative: g / (2 std), 0 where std is 0 (a constant
    row: sqrt's own derivative there gave NaN gradients)."""

    _node_name = "StdBackward0"

    @staticmethod
    def forward(ctx, var):
        r = _T.sqrt(var)
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        r, = ctx.saved_tensors
        return _T.where(r == 0, 0.0, g / (2 * r))

    @staticmethod
    def jvp(ctx, t):
        r, = ctx.saved_tensors
        return _T.where(r == 0, 0.0, t / (2 * r))


# PyTorch's overloads of var/std (var_mean/std_mean: the same without out=)
_MOMENT_OVERLOADS = ("(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = "
                     "False, *, Tensor out = None), (Tensor input, tuple of ints dim = None, *, "
                     "Number correction = None, bool keepdim = False, Tensor out = None), "
                     "(Tensor input, bool unbiased = True)")


def _moment_args(op, dim, unbiased, keepdim, correction, axis, keepdims, out=None):
    """(dim, correction, keepdim) from PyTorch's three overloads: (dim=None, *, correction,
    keepdim), (dim, unbiased, keepdim) and (unbiased).  A bool where ``dim`` goes is
    ``unbiased``, as PyTorch's parser reads it (a bool is never a dim)."""
    def invalid():
        return TypeError(f"{op}() received an invalid combination of arguments - expected one "
                         f"of: {_MOMENT_OVERLOADS}")
    if isinstance(dim, bool):                   # the (input, unbiased) overload: nothing else
        if unbiased is not None or correction is not None or keepdim is not False or \
                axis is not None or keepdims is not None or out is not None:
            raise invalid()
        return None, int(dim), False
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names(op, dim, keepdim, axis, keepdims)
    if unbiased is not None:
        if not isinstance(unbiased, bool) or correction is not None:
            raise invalid()
        correction = int(unbiased)
    return dim, 1 if correction is None else correction, keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None,
        keepdims=None):
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased=False``
    is correction 0)."""
    dim, correction, keepdim = _moment_args("var", dim, unbiased, keepdim, correction, axis,
                                            keepdims, out)
    return _out(_var(input, dim, correction, keepdim, "var")[0], out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None,
        keepdims=None):
    """Standard deviation over ``dim`` with Bessel's ``correction`` (1 by default;
    ``unbiased=False`` is correction 0)."""
    dim, correction, keepdim = _moment_args("std", dim, unbiased, keepdim, correction, axis,
                                            keepdims, out)
    return _out(_var(input, dim, correction, keepdim, "std", root=True)[0], out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
             keepdims=None):
    """(var, mean) over ``dim``."""
    dim, correction, keepdim = _moment_args("var_mean", dim, unbiased, keepdim, correction,
                                            axis, keepdims)
    return _var(input, dim, correction, keepdim, "var_mean")


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
             keepdims=None):
    """(std, mean) over ``dim``."""
    dim, correction, keepdim = _moment_args("std_mean", dim, unbiased, keepdim, correction,
                                            axis, keepdims)
    return _var(input, dim, correction, keepdim, "std_mean", root=True)


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
    return r if out is None else _T._result_out(r, out, "nanmean")


def count_nonzero(input, dim=None, *, axis=None):
    """How many elements of ``input`` (over ``dim``) are nonzero, as int64."""
    if axis is not None:
        dim, _ = _T._numpy_names("count_nonzero", dim, False, axis, None)
    _T._refuse_limited("count_nonzero", _tensor_arg(input, "count_nonzero").dtype)
    return (input != 0).sum(dim)


def logsumexp(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """log(sum(exp(input))) over ``dim`` (``axis``), stable for large values and
    infinities."""
    dim = _T._dim_or_axis("logsumexp", dim, axis)
    if keepdims is not None:
        keepdim = keepdims
    x = _tensor_arg(input, "logsumexp")
    if not x.is_floating_point() and not x.is_complex():
        x = x.to(_T._state_default_dtype())
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        # torch: dim=() reduces over every dim.  On a non-empty input without keepdim its
        # kernel then adds the keepdim row maxima to the reduced result and fails; we say so
        if x.numel() and x.dim() and not keepdim:
            raise RuntimeError("output with shape [] doesn't match the broadcast shape "
                               f"[{', '.join(['1'] * x.dim())}]")
        dim = tuple(range(x.dim()))
    re = x.real if x.is_complex() else x            # complex: shifted by the real parts' max
    m = _T.amax(re, dim, True) if x.numel() else _T.zeros_like(re.sum(dim, keepdim=True))
    m = _T.where(isinf(m), 0.0, m).to(re.dtype)      # all -inf (or +inf) rows stay exact
    e = _T.exp(x - m)
    if x.is_complex():      # C99's cexp: exp(-inf + iy) is 0 for every y, exp(inf + 0i) inf
        e = _T.where(x.imag == 0, _T.exp(re - m), e)
        e = _T.where(isinf(re) & (re < 0), 0.0, e)
    r = _T.log(e.sum(dim, keepdim=True)) + m
    r = r if keepdim else r.squeeze(dim)
    return r if out is None else _T._result_out(r, out, "logsumexp")


@composite("logcumsumexp")
def logcumsumexp(input, dim=None, *, out=None, axis=None):
    """log(cumsum(exp(input))) along ``dim``, shifted by the row maximum; rows whose range
    would underflow exp fall back to a running logaddexp."""
    dim = _T._dim_or_axis("logcumsumexp", dim, axis)
    x = _tensor_arg(input, "logcumsumexp")
    if not x.is_floating_point() and not x.is_complex():
        x = x.to(_T._state_default_dtype())
    if x.dim() == 0 or x.numel() == 0:
        return _out(x.clone(), out)
    if x.is_complex():
        # a running complex logaddexp: torch's imaginary parts follow the scan's path (they
        # are not wrapped to (-pi, pi]), so a shifted log(cumsum(exp)) would not match
        d = dim % x.dim()
        acc = _T.full_like(x.narrow(d, 0, 1), -math.inf)
        parts = []
        for i in range(x.shape[d]):
            acc = _complex_logaddexp(acc, x.narrow(d, i, 1))
            parts.append(acc)
        return _out(cat(parts, d), out)
    # the shift is the row maximum of the non-NaN values: a NaN must poison only the
    # positions from it on (torch), not the whole row through the shift
    m = _T.amax(_T.where(isnan(x), -math.inf, x), dim, True)
    m = _T.where(isinf(m), 0.0, m).to(x.dtype)
    shifted = x - m
    if bool(((shifted < math.log(finfo(x.dtype).tiny) + 2) & isinf(x).logical_not()).any()):
        d = dim % x.dim()
        acc, parts = None, []
        for i in range(x.shape[d]):
            xi = x.narrow(d, i, 1)
            acc = xi if acc is None else logaddexp(acc, xi)
            parts.append(acc)
        return _out(cat(parts, d), out)
    # contiguous in the input's order of dims (cumsum along a leading dim may not be)
    return _out((_T.log(_T.cumsum(_T.exp(shifted), dim)) + m).contiguous(), out)


def aminmax(input, *, dim=None, keepdim=False, out=None, axis=None, keepdims=None):
    """(min, max) of ``input`` over ``dim`` (all elements by default) in one call; ``out``
    a pair of tensors to write them into."""
    if axis is not None or keepdims is not None:     # NumPy's names
        dim, keepdim = _T._numpy_names("aminmax", dim, keepdim, axis, keepdims, None)
    t = _tensor_arg(input, "aminmax")
    if t.numel() == 0 and (dim is None or t.shape[_wrap(dim, max(t.dim(), 1), "aminmax")] == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    red = () if dim is None else dim
    lo, hi = _T.amin(t, red, keepdim), _T.amax(t, red, keepdim)
    if dim is None and keepdim:
        lo, hi = lo.reshape((1,) * t.dim()), hi.reshape((1,) * t.dim())
    if out is not None:
        return values_indices_out("aminmax", t, (lo, hi), out, ("min", "max"))
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


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None,
             axis=None, keepdims=None):
    """The ``q``-quantiles of ``input`` over ``dim`` (all elements by default); a NaN makes
    its row NaN.  A 1-D ``q`` adds a leading dim."""
    if axis is not None or keepdims is not None:     # NumPy's names
        dim, keepdim = _T._numpy_names("quantile", dim, keepdim, axis, keepdims, None)
    r = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return r if out is None else _T._result_out(r, out, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None,
                axis=None, keepdims=None):
    """quantile ignoring NaN (a row of only NaN gives NaN)."""
    if axis is not None or keepdims is not None:     # NumPy's names
        dim, keepdim = _T._numpy_names("nanquantile", dim, keepdim, axis, keepdims, None)
    r = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return r if out is None else _T._result_out(r, out, "nanquantile")


@composite("nanmedian")    # inside vmap its gradient's pick (a host read) runs per sample
def nanmedian(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """The lower median of the non-NaN values; with ``dim``, (values, indices)."""
    if axis is not None or keepdims is not None:     # NumPy's names
        dim, keepdim = _T._numpy_names("nanmedian", dim, keepdim, axis, keepdims, None)
    x = _tensor_arg(input, "nanmedian")
    if dim is None:
        value = _empty_median(x) if x.numel() == 0 \
            else nanmedian(x.detach().reshape(-1), 0).values
        return _evenly_distributed(x, value)
    d = _wrap(_int_dim(dim, "nanmedian"), max(x.dim(), 1), "nanmedian")
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
    return values_indices("nanmedian", v, i)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    columns), with optional frequency and analytic weights."""
    x = _tensor_arg(input, "cov")
    if x.dim() > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {x.dim()} dimensions")
    x = x.reshape(1, -1) if x.dim() < 2 else x
    if not x.is_floating_point() and not x.is_complex():
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
        w = w.to(x.real.dtype if x.is_complex() else x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        norm = w_sum - correction if aweights is None else \
            w_sum - correction * (w * aweights).sum() / w_sum
    if float(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, TensorBase) else 0.0
    xm = x - avg
    c = _T.matmul(xm if w is None else xm * w, xm.t().conj()) / norm
    return c.squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = _T.sqrt(c.diagonal())
    r = c / std.unsqueeze(1) / std.unsqueeze(0)
    if r.is_complex():                      # the real and imaginary parts clipped apart
        return _complex(r.real.clamp(-1, 1), r.imag.clamp(-1, 1))
    return r.clamp(-1, 1)


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
    if x.dim() < y.dim():       # right-aligned against y (leading 1s), as torch's x.view
        x = x.reshape((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1)


def _pair_areas(op, y, x, dx, dim):
    _tensor_arg(y, op, "y")
    if x is not None and dx is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: x and dx")
    d = _wrap(dim, max(y.dim(), 1), op)
    m = y.shape[d]
    step = _spacing(op, y, x, dx, d)
    return (y.narrow(d, min(m, 1), max(m - 1, 0)) + y.narrow(d, 0, max(m - 1, 0))) * step / 2, d


def trapezoid(y, x=None, *, dx=None, dim=-1, axis=None):
    """The trapezoidal rule along ``dim``: sample points ``x``, or a constant spacing
    ``dx`` (1 by default)."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("trapezoid", dim, None, axis, None, -1)[0]
    areas, d = _pair_areas("trapezoid", y, x, dx, dim)
    return areas.sum(d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1, axis=None):
    """The running trapezoidal integral along ``dim`` (one element fewer there)."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("cumulative_trapezoid", dim, None, axis, None, -1)[0]
    areas, d = _pair_areas("cumulative_trapezoid", y, x, dx, dim)
    return _T.cumsum(areas, d)
