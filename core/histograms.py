"""histogram and histogramdd (``torch.histogram``/``torch.histogramdd``): bin edges by
linspace in the input's dtype (as PyTorch's), bin indices by searchsorted, counts by
bincount; the right edge of the last bin is inclusive."""

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core.factories import linspace
from ember.core.linalg._common import _result

__all__ = ["histogram", "histogramdd"]

_INT64, _BOOL = _dtype_by_name["int64"], _dtype_by_name["bool"]


def _edges(column, bins, lo_hi, dtype, op):
    """The bin edges of one dimension: ``bins`` edges given as a tensor, or ``bins`` equal
    bins over ``lo_hi`` (default: the data's min and max)."""
    if not isinstance(bins, int):
        edges = bins.to(dtype)
        if edges.dim() != 1 or edges.numel() < 1:
            raise RuntimeError(f"{op}(): bins tensor should have one dimension and at least "
                               f"1 element, but got {edges.dim()} dimensions and "
                               f"{edges.numel()} elements")
        return edges
    if bins <= 0:
        raise RuntimeError(f"{op}(): bins must be > 0, but got {bins} for dimension 0")
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
        if lo > hi:
            raise RuntimeError(f"{op}(): min should not exceed max, but got min {lo} max {hi} "
                               f"for dimension 0")
    elif column.numel():
        lo, hi = float(column.min()), float(column.max())
    else:
        lo, hi = 0.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5        # a degenerate range: one unit around the value
    return linspace(lo, hi, bins + 1, dtype=dtype, device=column.device)


def _bin_index(column, edges):
    """The bin of every value (-1 outside [first edge, last edge])."""
    nbins = edges.numel() - 1
    idx = _T.searchsorted(edges, column.contiguous(), right=True) - 1
    idx = _T.where(column == edges[-1], nbins - 1, idx)          # the last edge is inside
    inside = (column >= edges[0]) & (column <= edges[-1])
    return _T.where(inside, idx, -1)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): the D-dimensional histogram of the points ``input`` (N, D) (or
    (*, D)); ``bins`` an int, one int per dim, or one edge tensor per dim; ``range`` flat
    (min_0, max_0, min_1, max_1, ...)."""
    op = "histogramdd"
    if not input.is_floating_point():
        raise NotImplementedError(f'"{op}" not implemented for '
                                  f"'{input.type()[6:-6]}'")
    dims = input.shape[-1] if input.dim() else 1
    points = input.reshape(-1, dims)
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(f"{op}(): expected {dims} sequences of bin edges for each of the "
                           f"{dims} dimensions of the input, but got {len(bins)}")
    ranges = [None] * dims if range is None else [range[2 * d:2 * d + 2] for d in E_range(dims)]
    edges = [_edges(points[:, d], bins[d], ranges[d], input.dtype, op)
             for d in E_range(dims)]
    sizes = [e.numel() - 1 for e in edges]
    flat = _T.zeros(points.shape[0], dtype=_INT64, device=input.device)
    valid = _T.ones(points.shape[0], dtype=_BOOL, device=input.device)
    for d in E_range(dims):
        idx = _bin_index(points[:, d], edges[d])
        valid = valid & (idx >= 0)
        flat = flat * sizes[d] + idx.clamp(min=0)
    w = _T.ones(points.shape[0], dtype=input.dtype, device=input.device) if weight is None \
        else weight.reshape(-1).to(input.dtype)
    w = _T.where(valid, w, 0.0).to(input.dtype)
    total = 1
    for s in sizes:
        total *= s
    hist = _T.zeros(total, dtype=input.dtype, device=input.device).index_add(0, flat, w)
    hist = hist.reshape(sizes)
    if density:
        volume = None
        for d in E_range(dims):
            width = (edges[d][1:] - edges[d][:-1]).reshape(
                [-1 if k == d else 1 for k in E_range(dims)])
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return _result("histogramdd", ["hist", "bin_edges"], hist, edges)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges) of the values of ``input``: ``bins`` equal bins over ``range``
    (default: the data's min and max) or the given edges; ``weight`` per value;
    ``density`` normalises to unit integral."""
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{input.type()[6:-6]}'")
    hist, edges = histogramdd(input.reshape(-1, 1), [bins],
                              range=None if range is None else list(range), weight=weight,
                              density=density)
    result = _result("histogram", ["hist", "bin_edges"], hist, edges[0])
    if out is not None:
        out[0].copy_(hist)
        out[1].copy_(edges[0])
        return out
    return result


E_range = range                 # the builtin, under a name the ``range`` arguments leave free
