"""Memory formats (``ember.contiguous_format``, ``preserve_format``, ``channels_last``,
``channels_last_3d``): which strides a new tensor gets.

A format only picks strides; kernels read any strides, so nothing else changes.  The default
of ``clone`` and the ``*_like`` factories is ``preserve_format``, as PyTorch's: a dense,
non-overlapping input keeps its strides, any other input gets dense strides in the same
order as its own."""

from ember.core.layout import _NamedConstant

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d", "legacy_contiguous_format"]


class memory_format(_NamedConstant):
    """The type of the memory-format constants (``torch.memory_format``)."""
    __slots__ = ()
    __module__ = "ember"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
# PyTorch's name for contiguous_format where legacy code asks for it
legacy_contiguous_format = memory_format("legacy_contiguous_format")

_CHANNELS_LAST_RANK = {channels_last: 4, channels_last_3d: 5}


def _check(fmt, op):
    if fmt is not None and not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be ember.memory_format, not "
                        f"{type(fmt).__name__}")


def _contiguous_strides(shape):
    strides, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def format_strides(fmt, shape):
    """The strides of a fresh tensor of ``shape`` laid out in ``fmt`` (not preserve)."""
    rank = _CHANNELS_LAST_RANK.get(fmt)
    if rank is None:
        return _contiguous_strides(shape)
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    # channels innermost: (N, C, *spatial) laid out as (N, *spatial, C)
    order = (0, *range(2, rank), 1)
    inner = _contiguous_strides([shape[d] for d in order])
    strides = [0] * rank
    for pos, d in enumerate(order):
        strides[d] = inner[pos]
    return tuple(strides)


def _same_layout(shape, strides, want):
    """Strides agree wherever they matter (dims of size 1 may have any stride)."""
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want))


def is_contiguous_as(t, fmt):
    """``t.is_contiguous(memory_format=fmt)``."""
    _check(fmt, "is_contiguous")
    if fmt is None or fmt is contiguous_format:
        return t.is_contiguous()
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    shape = tuple(t.shape)
    if len(shape) != _CHANNELS_LAST_RANK[fmt]:
        return False
    return t.numel() == 0 or _same_layout(shape, t.stride(), format_strides(fmt, shape))


def _dense_strides_like(t):
    """t's strides if it is dense and non-overlapping, else dense strides in t's order
    (PyTorch's rule for preserve_format: stride-0 dims keep their place)."""
    shape, strides = tuple(t.shape), t.stride()
    nd = len(shape)
    order = sorted((d for d in range(nd) if shape[d] != 1), key=lambda d: strides[d])
    step = 1
    for d in order:                     # dense iff each stride is the product of the inner sizes
        if strides[d] != step:
            break
        step *= shape[d]
    else:
        return strides
    perm = list(range(nd - 1, -1, -1))  # innermost first; a stable insertion sort by stride
    for i in range(1, nd):
        j = i
        for k in range(i - 1, -1, -1):
            a, b = perm[k], perm[j]
            if strides[a] == 0 or strides[b] == 0:
                cmp = 0
            elif strides[a] != strides[b]:
                cmp = 1 if strides[a] > strides[b] else -1
            else:
                cmp = 1 if shape[a] > shape[b] else 0
            if cmp > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif cmp < 0:
                break
    out, step = [0] * nd, 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def strides_for(t, fmt, op):
    """The strides a tensor made from ``t`` in ``fmt`` gets, or None for plain contiguous."""
    _check(fmt, op)
    if fmt is contiguous_format or ((fmt is None or fmt is preserve_format)
                                    and t.is_contiguous() and t.numel()):
        return None
    shape = tuple(t.shape)
    strides = _dense_strides_like(t) if fmt is None or fmt is preserve_format \
        else format_strides(fmt, shape)
    return None if strides == _contiguous_strides(shape) else strides


def contiguous(t, memory_format=None):
    """``t.contiguous(memory_format=)``: t itself when already laid out so."""
    fmt = contiguous_format if memory_format is None else memory_format
    if is_contiguous_as(t, fmt):
        return t
    return t.clone(memory_format=fmt)
