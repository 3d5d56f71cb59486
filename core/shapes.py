"""Shape and joining composites over views, cat and the index ops: broadcast_to/tensors/
shapes, meshgrid, atleast_*d, tensor_split and h/v/dsplit, d/column/row_stack,
take_along_dim, ravel, unfold, rot90, diagflat, block_diag, cartesian_prod, combinations,
tril/triu_indices, vander, isin, argwhere, msort, and small factories (scalar_tensor,
empty_strided, range, can_cast)."""
import builtins
import itertools
import math
import warnings

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name, promote_types
from ember.core._errors import _tensor_arg
from ember.core._size import Size
from ember.core._tensor import TensorBase
from ember.core.composites import _wrap, cat, diag, hstack, stack, vstack
from ember.core.index_ops import flip
from ember.core.shape_rules import broadcast_shapes as _broadcast_shapes
from ember.core.sorting import sort

__all__ = ["argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag",
           "broadcast_shapes", "broadcast_tensors", "broadcast_to", "can_cast",
           "cartesian_prod", "column_stack", "combinations", "diagflat", "dsplit", "dstack",
           "empty_strided", "hsplit", "isin", "meshgrid", "msort", "range", "ravel", "rot90",
           "row_stack", "scalar_tensor", "take_along_dim", "tensor_split", "tril_indices",
           "triu_indices", "vander", "vsplit"]

_INT64 = _dtype_by_name["int64"]
_BOOL = _dtype_by_name["bool"]


def _tensors(args, op):
    """*tensors or one sequence of them, checked."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for i, t in enumerate(args):
        _tensor_arg(t, op, f"tensors[{i}]")
    return args


def broadcast_shapes(*shapes):
    """The shape ``shapes`` (sizes or ints) broadcast to, as a Size."""
    return Size(_broadcast_shapes(*((s,) if isinstance(s, int) else tuple(s) for s in shapes)))


def broadcast_to(input, size):
    """``input`` expanded (a view) to ``size``."""
    return _tensor_arg(input, "broadcast_to").expand(tuple(size))


def broadcast_tensors(*tensors):
    """The tensors expanded (views) to their common broadcast shape."""
    tensors = _tensors(tensors, "broadcast_tensors")
    shape = _broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D (or 0-d) tensors; ``indexing`` 'ij' (the default, with
    PyTorch's warning when not given) or 'xy' (the first two dims swapped)."""
    tensors = _tensors(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        return ()
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to "
                               "have the same dtype")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    n = len(flat)
    grids = [t.reshape((1,) * i + (-1,) + (1,) * (n - i - 1)).expand(shape)
             for i, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _atleast(args, n, op):
    many = len(args) != 1 or isinstance(args[0], (tuple, list))
    tensors = _tensors(args, op)
    out = []
    for t in tensors:
        if t.dim() < n:
            shape = {0: (1,) * n, 1: (1, -1) if n == 2 else (1, -1, 1),
                     2: tuple(t.shape) + (1,)}[t.dim()]
            t = t.reshape(shape)
        out.append(t)
    return tuple(out) if many else out[0]


def atleast_1d(*tensors):
    """Each tensor as at least 1-D (0-d: [1])."""
    return _atleast(tensors, 1, "atleast_1d")


def atleast_2d(*tensors):
    """Each tensor as at least 2-D (1-D: a row)."""
    return _atleast(tensors, 2, "atleast_2d")


def atleast_3d(*tensors):
    """Each tensor as at least 3-D (1-D [n]: [1, n, 1]; 2-D [m, n]: [m, n, 1])."""
    return _atleast(tensors, 3, "atleast_3d")


def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` split along ``dim``: into n near-equal parts (the first
    size % n one longer), or at the given indices."""
    t = _tensor_arg(input, "tensor_split")
    if t.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap(dim, t.dim(), "tensor_split")
    size = t.shape[d]
    arg = indices_or_sections
    if isinstance(arg, TensorBase):
        if arg.dtype != _INT64 or arg.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arg.dim()} dims")
        arg = arg.item() if arg.dim() == 0 else arg.tolist()
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        q, r = divmod(size, arg)
        bounds = list(itertools.accumulate([q + 1] * r + [q] * (arg - r), initial=0))
    else:
        bounds = [0] + [min(max(i if i >= 0 else i + size, 0), size) for i in arg] + [size]
    if all(lo <= hi for lo, hi in zip(bounds[:-1], bounds[1:])):
        # one autograd node for all pieces: backward is linear in their number
        return _T._split_views(t, [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])], d)
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):     # decreasing indices: overlapping views
        lo = min(lo, size)
        out.append(t.narrow(d, lo, max(hi - lo, 0)))
    return tuple(out)


def _split_dir(op, input, indices_or_sections, dim, min_dim):
    t = _tensor_arg(input, op)
    if t.dim() < min_dim:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {t.dim()} dimensions!")
    if isinstance(indices_or_sections, int) and indices_or_sections and \
            t.shape[dim] % indices_or_sections:
        raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {t.shape[dim]} is not divisible by the "
                           f"split_size {indices_or_sections}!")
    return tensor_split(t, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for 1-D), sections dividing evenly."""
    t = _tensor_arg(input, "hsplit")
    return _split_dir("hsplit", t, indices_or_sections, 1 if t.dim() > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of an at least 2-D tensor."""
    return _split_dir("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of an at least 3-D tensor."""
    return _split_dir("dsplit", input, indices_or_sections, 2, 3)


def dstack(tensors, *, out=None):
    """Concatenate along dim 2 after atleast_3d."""
    r = cat(list(atleast_3d(list(tensors))), 2)
    return r if out is None else out.copy_(r)


def column_stack(tensors, *, out=None):
    """1-D (and 0-d) tensors as columns, then hstack."""
    cols = [t.reshape(-1, 1) if t.dim() < 2 else t for t in _tensors((tensors,), "column_stack")]
    r = hstack(cols)
    return r if out is None else out.copy_(r)


def row_stack(tensors, *, out=None):
    """vstack (PyTorch's alias)."""
    r = vstack(list(tensors))
    return r if out is None else out.copy_(r)


def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of ``input`` at ``indices`` along ``dim`` (over the flattened input when dim
    is None); the other dims broadcast."""
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
        shape = list(_broadcast_shapes(tuple(ts), tuple(js)))
        st, si = list(shape), list(shape)
        st[d], si[d] = t.shape[d], idx.shape[d]
        r = t.expand(st).gather(d, idx.expand(si))
    return r if out is None else out.copy_(r)


def ravel(input):
    """``input`` flattened to 1-D (a view when contiguous)."""
    return _tensor_arg(input, "ravel").reshape(-1)


def unfold(self, dimension, size, step):
    """Windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim:
    an as_strided view.  Overlapping windows (step < size) are read through a gather when
    autograd records, so their gradients add up (a write-through view cannot sum them)."""
    t = _tensor_arg(self, "unfold")
    nd = t.dim()
    d = _wrap(dimension, max(nd, 1), "unfold")
    length = t.shape[d] if nd else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    n = (length - size) // step + 1
    if nd == 0:
        return t.reshape(1)
    if step < size and t.requires_grad and _ag.is_grad_enabled():
        starts = _T.arange(n, device=t.device) * step
        idx = (starts.unsqueeze(1) + _T.arange(size, device=t.device)).reshape(-1)
        r = t.index_select(d, idx)
        shape = list(t.shape)
        shape[d:d + 1] = [n, size]
        return r.reshape(shape).movedim(d + 1, -1)
    sizes, strides = list(t.shape), list(t.stride())
    sizes[d] = n
    strides[d] = t.stride(d) * step
    return t.as_strided(sizes + [size], strides + [t.stride(d)], t.storage_offset())


def argwhere(input):
    """Indices of the nonzero elements, [n, ndim]."""
    return _T.nonzero(_tensor_arg(input, "argwhere"))


def msort(input, *, out=None):
    """``input`` sorted along dim 0."""
    t = _tensor_arg(input, "msort")
    r = t.gather(0, sort(t, 0).indices) if t.dim() else t.clone()
    return r if out is None else out.copy_(r)


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by 90 degrees ``k`` times, from dims[0] towards dims[1]."""
    t = _tensor_arg(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if t.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {t.dim()}")
    d0, d1 = (_wrap(d, t.dim(), "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(t, [d1]).transpose(d0, d1)
    if k == 2:
        return flip(t, [d0, d1])
    if k == 3:
        return flip(t, [d0]).transpose(d0, d1)
    return t.clone()


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal ``offset``."""
    return diag(_tensor_arg(input, "diagflat").reshape(-1), offset)


def block_diag(*tensors):
    """The tensors (0-d, 1-D as a row, or 2-D) placed along the diagonal of a zero matrix."""
    mats = []
    for i, t in enumerate(_tensors(tensors, "block_diag")):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return _T.empty(1, 0)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = promote_types(dtype, m.dtype)
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = _T.zeros(rows, cols, dtype=dtype, device=mats[0].device)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows."""
    tensors = _tensors(tensors, "cartesian_prod")
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-D tensor, as rows."""
    t = _tensor_arg(input, "combinations")
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _T.empty(0, dtype=t.dtype, device=t.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(pick(builtins.range(t.shape[0]), r))
    if not idx:
        return _T.empty(0, r, dtype=t.dtype, device=t.device)
    index = _T.tensor(idx, dtype=_INT64, device=t.device)
    return t.index_select(0, index.reshape(-1)).reshape(len(idx), r)


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


def vander(x, N=None, increasing=False):
    """Columns of powers of a 1-D ``x`` (decreasing unless ``increasing``)."""
    t = _tensor_arg(x, "vander", "x")
    if t.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = t.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = promote_types(t.dtype, _INT64)
    if n == 0:
        return _T.empty(t.shape[0], 0, dtype=dt, device=t.device)
    # cumulative products of x (not pow): exact for integers, differentiable everywhere
    cols = t.to(dt).unsqueeze(1).expand(t.shape[0], n - 1)
    powers = cat([_T.ones(t.shape[0], 1, dtype=dt, device=t.device), _T.cumprod(cols, 1)], 1)
    return powers if increasing else flip(powers, [1])


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a
    number): a binary search in the sorted test elements."""
    if not isinstance(test_elements, TensorBase):
        _tensor_arg(elements, "isin", "elements")   # one of the two must be a Tensor
    ref = elements if isinstance(elements, TensorBase) else test_elements
    e = elements if isinstance(elements, TensorBase) else _T.tensor(elements, device=ref.device)
    s = test_elements if isinstance(test_elements, TensorBase) else \
        _T.tensor(test_elements, device=ref.device)
    dt = promote_types(e.dtype, s.dtype)
    _T._refuse_limited("isin", dt)
    e, s = e.to(dt), s.reshape(-1).to(dt)
    if s.numel() == 0:
        found = _T.zeros_like(e, dtype=_BOOL)
    else:
        values = sort(s).values
        pos = _T.searchsorted(values, e.reshape(-1)).clamp(max=values.numel() - 1)
        found = (values[pos] == e.reshape(-1)).reshape(e.shape)
    return found.logical_not() if invert else found


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
    return r.requires_grad_() if requires_grad else r


def can_cast(from_, to):
    """PyTorch's casting rule: no float -> integral, no non-bool -> bool."""
    if from_.is_floating_point and not to.is_floating_point and to != _BOOL:
        return False
    return not (to == _BOOL and from_ != _BOOL)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
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
    r = r.to(dtype or _T._state_default_dtype())
    return r.requires_grad_() if requires_grad else r
