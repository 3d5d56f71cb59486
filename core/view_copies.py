"""The ``*_copy`` forms of the view ops (a fresh tensor holding what the view would show),
the ``*_scatter`` ops (a copy of ``input`` with ``src`` written where the view would be),
and the ``unsafe_*`` splits, which in ember are the ordinary ones."""
from ember.core import _tensor as _T
from ember.core._errors import _tensor_arg
from ember.core.memory_format import contiguous_format

__all__ = ["alias_copy", "as_strided_copy", "as_strided_scatter", "detach_copy",
           "diagonal_copy", "diagonal_scatter", "expand_copy", "narrow_copy", "permute_copy",
           "select_copy", "select_scatter", "slice_copy", "slice_inverse", "slice_scatter",
           "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy",
           "unbind_copy", "unfold_copy", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes", "unsqueeze_copy", "view_as_complex_copy",
           "view_as_real_copy", "view_copy"]


def _done(result, out, op="copy"):
    result = result.clone(memory_format=contiguous_format)
    return result if out is None else _T._result_out(result, out, op)


def _slice(input, dim, start, end, step):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return input[tuple(index)]


def alias_copy(input, *, out=None):
    """A copy of ``input`` (the copy form of alias)."""
    return _done(_tensor_arg(input, "alias_copy", position=1), out)


def detach_copy(input, *, out=None):
    """A copy of ``input``'s values.  PyTorch records it (for an input that requires grad)
    as a node whose backward raises, and so does ember."""
    from ember.core.function import without_derivative
    t = _tensor_arg(input, "detach_copy", position=1)
    return _done(without_derivative("detach_copy", lambda x: x.detach(), t), out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """A copy of ``input.as_strided(size, stride, storage_offset)``."""
    return _done(input.as_strided(size, stride, storage_offset), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """A copy of ``input.diagonal(offset, dim1, dim2)``."""
    return _done(input.diagonal(offset, dim1, dim2), out)


def expand_copy(input, size, *, implicit=False, out=None):
    """A copy of ``input.expand(size)``."""
    return _done(input.expand(*size), out)


def narrow_copy(input, dim, start, length, *, out=None):
    """A copy of ``input.narrow(dim, start, length)``."""
    return _done(input.narrow(dim, start, length), out)


def permute_copy(input, dims, *, out=None):
    """A copy of ``input.permute(dims)``."""
    return _done(input.permute(*dims), out)


def select_copy(input, dim, index, *, out=None):
    """A copy of ``input.select(dim, index)``."""
    return _done(input.select(dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """A copy of ``input[..., start:end:step, ...]`` along ``dim``."""
    return _done(_slice(input, dim, start, end, step), out)


def squeeze_copy(input, dim=None, *, out=None):
    """A copy of ``input.squeeze(dim)``."""
    return _done(input.squeeze() if dim is None else input.squeeze(dim), out)


def t_copy(input, *, out=None):
    """A copy of ``input.t()``."""
    return _done(input.t(), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    """A copy of ``input.transpose(dim0, dim1)``."""
    return _done(input.transpose(dim0, dim1), out)


def unfold_copy(input, dimension, size, step, *, out=None):
    """A copy of ``input.unfold(dimension, size, step)``."""
    return _done(input.unfold(dimension, size, step), out)


def unsqueeze_copy(input, dim, *, out=None):
    """A copy of ``input.unsqueeze(dim)``."""
    return _done(input.unsqueeze(dim), out)


def view_copy(input, size, *, out=None):
    """A copy of ``input.view(size)`` (or of ``input.view(dtype)``)."""
    viewed = input.view(size) if not isinstance(size, (list, tuple)) else input.view(*size)
    return _done(viewed, out)


def view_as_real_copy(input, *, out=None):
    """A copy of ``view_as_real(input)``."""
    from ember.core.complex_functions import view_as_real
    return _done(view_as_real(input), out)


def view_as_complex_copy(input, *, out=None):
    """A copy of ``view_as_complex(input)``."""
    from ember.core.complex_functions import view_as_complex
    return _done(view_as_complex(input), out)


def _copies(parts, out):
    parts = [p.clone() for p in parts]
    if out is not None:
        for o, p in zip(out, parts, strict=True):
            o.copy_(p)
    return parts


def split_copy(input, split_size, dim=0, *, out=None):
    """Copies of ``input.split(split_size, dim)``."""
    return _copies(input.split(split_size, dim), out)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    """Copies of ``input.split(split_sizes, dim)``."""
    return _copies(input.split(list(split_sizes), dim), out)


def unbind_copy(input, dim=0, *, out=None):
    """Copies of ``input.unbind(dim)``."""
    return _copies(input.unbind(dim), out)


def unsafe_chunk(input, chunks, dim=0):
    """``input.chunk(chunks, dim)`` (PyTorch's variant without view tracking)."""
    return input.chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    """``input.split(split_size, dim)`` (PyTorch's variant without view tracking)."""
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``input.split(split_sizes, dim)`` (PyTorch's variant without view tracking)."""
    return input.split(list(split_sizes), dim)


# -- scatters: out-of-place writes into a view -------------------------------------------------

def _scatter(input, src, view):
    _tensor_arg(input, "scatter", position=1)
    result = input.clone()
    target = view(result)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    return result


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``src`` written onto its diagonal(offset, dim1, dim2)."""
    return _scatter(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input, src, dim, index):
    """``input`` with ``src`` written at ``index`` along ``dim``."""
    return _scatter(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``src`` written into its slice start:end:step along ``dim``."""
    return _scatter(input, src, lambda t: _slice(t, dim, start, end, step))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``src`` written where ``as_strided(size, stride, storage_offset)``
    looks."""
    return _scatter(input, src, lambda t: t.as_strided(size, stride, storage_offset))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """``src`` viewed as the tensor whose slice start:end:step along ``dim`` is ``input``
    (the inverse of slicing, for a ``src`` of the base's shape)."""
    return input.as_strided(tuple(src.shape), src.stride(), src.storage_offset())
