"""Index composites written once over the index primitives (gather/scatter, search) and
nonzero, so every device has them: flip, repeat_interleave, bincount, histc, bucketize,
masked_select, masked_scatter, take_along_dim and argwhere.

Why composite: each is a gather or scatter_add once its index is known (flip reverses an
arange, repeat_interleave searches a cumsum, bincount/histc scatter-add ones, the masked ops
take nonzero() positions), so a backend gets them from its two index entries."""
import math

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.determinism import alert_nondeterministic
from ember.core.shape_rules import _wrap, broadcast_shapes

__all__ = ["argwhere", "bincount", "bucketize", "flip", "fliplr", "flipud", "histc",
           "masked_scatter", "masked_select", "repeat_interleave", "take_along_dim"]

_INT64 = _dtype_by_name["int64"]
_BOOL = _dtype_by_name["bool"]


def _dims(t, dims, op):
    n = max(t.dim(), 1)
    out = []
    for d in (dims if isinstance(dims, (tuple, list)) else (dims,)):
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        d %= n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out


def flip(input, dims):
    """``input`` with the order of elements reversed along each dim in ``dims`` (a copy)."""
    t = _tensor_arg(input, "flip")
    _T._refuse_limited("flip", t.dtype)
    r = t
    for d in _dims(t, dims, "flip"):
        if t.dim() == 0:
            break
        n = t.shape[d]
        r = _T.index_select(r, d, _T.arange(n - 1, -1, -1, device=t.device))
    return r.clone() if r is t else r


def fliplr(input):
    """flip(input, [1]): left and right swapped (at least 2 dims)."""
    if _tensor_arg(input, "fliplr").dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    """flip(input, [0]): up and down swapped (at least 1 dim)."""
    if _tensor_arg(input, "flipud").dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None, axis=None):
    """Each slice of ``input`` along ``dim`` (of the flattened input when None) repeated
    ``repeats`` times (an int, or a 1-d tensor with one count per slice);
    ``repeat_interleave(repeats)`` repeats the positions 0..n-1."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("repeat_interleave", dim, None, axis, None, None)[0]
    t = _tensor_arg(input, "repeat_interleave")
    if repeats is None:                # repeat_interleave(repeats): indices 0..n-1 repeated
        if t.dim() > 1 or t.dtype.is_floating_point:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(_T.arange(t.numel(), device=t.device), t.reshape(-1),
                                 output_size=output_size)
    if dim is None:
        t, d = t.reshape(-1), 0
    else:
        d = _dims(t, dim, "repeat_interleave")[0]
    n = t.shape[d] if t.dim() else 1
    if isinstance(repeats, TensorBase) and repeats.dim() == 0:
        repeats = repeats.item()
    if not isinstance(repeats, TensorBase):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        index = _T.arange(n, device=t.device).reshape(n, 1).expand(n, repeats).reshape(-1)
        return _T.index_select(t, d, index)
    if repeats.dim() != 1 or repeats.dtype.is_floating_point:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor of integers")
    if repeats.numel() == 1 and n != 1:
        repeats = repeats.expand(n)
    if repeats.numel() != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.numel()} and input.size({d}) = {n}")
    if n and bool((repeats < 0).any()):
        raise RuntimeError("repeats can not be negative")
    ends = _T.cumsum(repeats.to(_INT64), 0)
    total = int(ends[-1].item()) if n else 0
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: output_size ({output_size}) does not match "
                           f"the sum of repeats ({total})")
    # output position j comes from the first slice whose running end exceeds j
    index = _T.searchsorted(ends, _T.arange(total, device=t.device), right=True)
    return _T.index_select(t, d, index)


@composite("bincount")
def bincount(input, weights=None, minlength=0):
    """Occurrences of each value 0..max(input) of the 1-d non-negative ``input`` (summing
    ``weights`` instead of ones when given), at least ``minlength`` bins."""
    t = _tensor_arg(input, "bincount")
    alert_nondeterministic("bincount", t.device.type)
    if t.dtype.is_floating_point or t.dtype == _BOOL:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{_T._st_name(t.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if t.dim() != 1 or (t.numel() and int(t.amin().item()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = max(minlength, int(t.amax().item()) + 1 if t.numel() else 0)
    if weights is None:
        src, dt = _T.ones(1, dtype=_INT64, device=t.device).expand(t.numel()), _INT64
    else:
        w = _tensor_arg(weights, "bincount", "weights")
        if w.dim() != 1 or w.numel() != t.numel():
            raise RuntimeError("weights should be 1-d and have the same length as input")
        dt = w.dtype if w.dtype == _dtype_by_name["float32"] else _dtype_by_name["float64"]
        src = w.to(dt)
    return _T.scatter_add(_T.zeros(n, dtype=dt, device=t.device), 0, t.to(_INT64), src)


@composite("histc")
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``input`` in ``bins`` equal bins over [min, max] (the data's range when
    min == max); elements outside are ignored."""
    t = _tensor_arg(input, "histc")
    alert_nondeterministic("histc", t.device.type)
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{_T._st_name(t.dtype)}'")
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0")
    lo, hi = float(min), float(max)
    if lo == hi and t.numel():
        lo, hi = float(t.amin().item()), float(t.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):     # NaN/inf data or bounds: no bins
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = t.reshape(-1)
    x = masked_select(x, (x >= lo) & (x <= hi))
    pos = ((x - lo) * (bins / (hi - lo))).floor().to(_INT64).clamp(0, bins - 1)
    r = _T.scatter_add(_T.zeros(bins, dtype=t.dtype, device=t.device), 0, pos,
                       _T.ones(1, dtype=t.dtype, device=t.device).expand(pos.numel()))
    return r if out is None else _T._result_out(r, out, "histc")


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each element of ``input`` among the sorted 1-d ``boundaries``
    (searchsorted with the arguments swapped)."""
    b = _tensor_arg(boundaries, "bucketize", "boundaries")
    if b.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.dim()})")
    return _T.searchsorted(b, input, out_int32=out_int32, right=right, out=out)


def _mask(mask, op):
    m = _tensor_arg(mask, op, "mask")
    if m.dtype != _BOOL:
        raise RuntimeError(f"{op}: expected BoolTensor for mask")
    return m


def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where the bool ``mask`` (broadcast with it) is True, as a
    1-d tensor."""
    t = _tensor_arg(input, "masked_select")
    m = _mask(mask, "masked_select")
    shape = broadcast_shapes(t.shape, m.shape)
    positions = _T.nonzero(m.expand(shape).reshape(-1), as_tuple=True)[0]
    r = _T.index_select(t.expand(shape).reshape(-1), 0, positions)
    return r if out is None else _T._result_out(r, out, "masked_select")


def _masked_scatter_(self, mask, source):
    """In place: the elements of ``source`` (in order) written where ``mask`` is True."""
    m = _mask(mask, "masked_scatter_")
    src = _tensor_arg(source, "masked_scatter_", "source")
    if src.dtype != self.dtype:
        raise RuntimeError(f"masked_scatter_: expected self and source to have same dtypes "
                           f"but got {_T._st_name(self.dtype)} and {_T._st_name(src.dtype)}")
    positions = _T.nonzero(m.expand(self.shape).reshape(-1), as_tuple=True)[0]
    n = positions.numel()
    if src.numel() < n:
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in "
                           "mask")
    values = src.reshape(-1)[:n]
    if _ag._tracked(self) or _ag._tracked(values):
        # Tensor.put_ records self.copy_(put(self, ...)): the put node saves self, the copy
        # then writes it, and backward refuses the stale tensor.  A put of a private copy
        # saves a tensor nothing writes.
        return self.copy_(_T.put(self.clone(), positions, values))
    return self.put_(positions, values)


@composite("masked_scatter")
def masked_scatter(input, mask, source):
    """A copy of ``input`` (broadcast with ``mask``) with ``source``'s elements written in
    order where ``mask`` is True."""
    t = _tensor_arg(input, "masked_scatter")
    shape = broadcast_shapes(t.shape, _mask(mask, "masked_scatter").shape)
    return _masked_scatter_(t.expand(shape).clone(), mask, source)


def take_along_dim(input, indices, dim=None, *, out=None, axis=None):
    """Values of ``input`` at ``indices`` along ``dim`` (over the flattened input when dim
    is None); the other dims broadcast."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("take_along_dim", dim, None, axis, None, None)[0]
    t, idx = _tensor_arg(input, "take_along_dim"), _tensor_arg(indices, "take_along_dim", "indices")
    if idx.dtype != _INT64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_T._st_name(idx.dtype)}")
    if dim is None:
        r = t.reshape(-1).gather(0, idx.reshape(-1))
    else:
        if t.dim() != idx.dim():
            raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {t.dim()} dimensions for input, "
                               f"and {idx.dim()} dimensions for indices")
        d = _wrap(dim, max(t.dim(), 1), "take_along_dim")
        ts, js = list(t.shape), list(idx.shape)
        ts[d] = js[d] = 1
        shape = list(broadcast_shapes(tuple(ts), tuple(js)))
        st, si = list(shape), list(shape)
        st[d], si[d] = t.shape[d], idx.shape[d]
        n = t.shape[d]
        if n and idx.numel() and bool(((idx < 0) | (idx >= n)).any()):
            idx = idx.remainder(n)          # PyTorch's take_along_dim wraps along a dim
        r = t.expand(st).gather(d, idx.expand(si))
    return r if out is None else _T._result_out(r, out, "take_along_dim")


def argwhere(input):
    """Indices of the nonzero elements, [n, ndim]."""
    return _T.nonzero(_tensor_arg(input, "argwhere"))
