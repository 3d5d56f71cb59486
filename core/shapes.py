"""Shape and joining ops over views, cat and the index ops: cat/concat/stack, h/v/d/column/
row_stack, block_diag, cartesian_prod, combinations; tensor_split and h/v/dsplit; repeat,
tile and roll; tril/triu, diag, diag_embed, diagflat; broadcast_to/tensors/shapes, meshgrid,
atleast_*d; ravel, unfold, rot90, diff and vander.  Composites of primitive ops (views +
copy_ / where), so every device has them.

Elsewhere by kind: take_along_dim and argwhere (core/index_ops.py), msort (core/sorting.py),
the factories tril/triu_indices, eye, range, ... (core/factories.py)."""
import itertools
import warnings

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name, promote_types
from ember.core._errors import _tensor_arg
from ember.core._results import into_out
from ember.core._size import Size
from ember.core._tensor import TensorBase
from ember.core.index_ops import flip
from ember.core.shape_rules import _wrap
from ember.core.shape_rules import broadcast_shapes as _broadcast_shapes

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "broadcast_to", "cartesian_prod", "cat", "column_stack",
           "combinations", "concat", "concatenate", "diag", "diag_embed", "diagflat", "diff",
           "dsplit", "dstack", "hsplit", "hstack", "meshgrid", "ravel", "roll", "rot90",
           "row_stack", "stack", "tensor_split", "tile", "tril", "triu", "vander", "vsplit",
           "vstack"]

_INT64 = _dtype_by_name["int64"]
_BOOL = _dtype_by_name["bool"]


def _tensors(args, op):
    """*tensors or one sequence of them, checked."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for i, t in enumerate(args):
        _tensor_arg(t, op, f"tensors[{i}]")
    return args


# --- joining, repeating and triangular ops: views + copy_ / where, so every device has them

def _joined(op, tensors, dim, axis, empty_message, empty_error=RuntimeError):
    """(dim, tensors as a list) of a joining op: NumPy's ``axis`` alias resolved, an empty
    sequence refused with PyTorch's message and exception type."""
    if axis is not None:
        dim, _ = _T._numpy_names(op, dim, False, axis, None, 0)
    tensors = list(tensors)
    if not tensors:
        raise empty_error(empty_message)
    return dim, tensors


def cat(tensors, dim=0, *, out=None, axis=None):
    """Concatenate ``tensors`` along ``dim`` (1-D empty tensors are skipped, as PyTorch).
    One autograd node whose backward hands each input a view of the gradient."""
    dim, tensors = _joined("cat", tensors, dim, axis,
                           "torch.cat(): expected a non-empty list of Tensors", ValueError)
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):          # the message only when it is needed
            _tensor_arg(t, "cat", f"tensors[{i}]")
    return _T._cat(tensors, dim, out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None, axis=None):
    """Stack same-shaped ``tensors`` along a new dim ``dim``."""
    dim, tensors = _joined("stack", tensors, dim, axis, "stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if _tensor_arg(t, "stack", f"tensors[{i}]").shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = _wrap(dim, tensors[0].dim() + 1, "stack")
    return cat([t.unsqueeze(d) for t in tensors], d, out=out)


def hstack(tensors, *, out=None):
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    parts = [t if t.dim() else t.reshape(1) for t in tensors]
    return into_out("hstack", cat(parts, 0 if parts[0].dim() == 1 else 1), out, tensors)


def vstack(tensors, *, out=None):
    """Concatenate along dim 0, treating 1-D tensors as rows."""
    r = cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)
    return into_out("vstack", r, out, tensors)


def _repeat(input, repeats):
    repeats = tuple(repeats[0]) if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)) \
        else tuple(repeats)
    if len(repeats) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(repeats) - input.dim()) + tuple(input.shape)
    x = input.reshape(shape)
    # interleave a broadcast dim before every dim, then fold: [r0, s0, r1, s1, ...]
    expanded = x.reshape(sum(((1, s) for s in shape), ())).expand(
        sum(((r, s) for r, s in zip(repeats, shape)), ()))
    return expanded.contiguous().reshape(tuple(r * s for r, s in zip(repeats, shape)))


def repeat(input, *repeats, **kwargs):
    """``input`` tiled ``repeats`` times along each dim (Tensor.repeat; PyTorch's keyword
    form ``repeats=`` too)."""
    if kwargs:
        unknown = sorted(set(kwargs) - {"repeats"})
        if unknown:
            raise TypeError(f"repeat() got an unexpected keyword argument '{unknown[0]}'")
        if repeats:
            raise TypeError("repeat() got multiple values for argument 'repeats'")
        repeats = (kwargs["repeats"],)
    return _repeat(_tensor_arg(input, "repeat"), repeats)


def tile(input, dims):
    """Like repeat, but with fewer ``dims`` than dimensions the leading ones repeat once."""
    _tensor_arg(input, "tile")
    if not isinstance(dims, (tuple, list, Size)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    dims = tuple(dims)
    return _repeat(input, (1,) * (input.dim() - len(dims)) + dims)


def _tile_method(self, *sizes, dims=None):
    """Tensor.tile(*dims): the dims as varargs, one sequence, or the keyword ``dims``."""
    if dims is None:
        dims = sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    return tile(self, dims)


def _int_tuple(value, op, name, position):
    """An int-list argument as PyTorch parses it: one int (an __index__ object: a number, a
    one-element integer tensor) or a sequence of them; bools and other tensors are refused."""
    def one(v):
        if isinstance(v, bool) or not hasattr(v, "__index__") or \
                isinstance(v, TensorBase) and (v.numel() != 1 or v.is_floating_point()):
            raise TypeError
        return v.__index__()
    seq = isinstance(value, (list, tuple))
    try:
        return tuple(one(v) for v in value) if seq else (one(value),)
    except TypeError:
        bad = next((i for i, v in enumerate(value) if isinstance(v, bool) or
                    not hasattr(v, "__index__")), 0) if seq else None
        detail = f"but found element of type {type(value[bad]).__name__} at pos {bad}" \
            if seq else f"not {type(value).__name__}"
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of "
                        f"ints, {detail}") from None


def roll(input, shifts, dims=None):
    """Elements shifted by ``shifts`` along ``dims`` (flattened when dims is None)."""
    _tensor_arg(input, "roll")
    shifts = _int_tuple(shifts, "roll", "shifts", 2)
    if dims is None and len(shifts) == 1:
        return roll(input.flatten(), shifts, 0).view(input.shape)
    dims = () if dims is None else _int_tuple(dims, "roll", "dims", 3)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    r = input
    for s, d in zip(shifts, dims):
        n = r.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            r = cat([r.narrow(d, n - s, s), r.narrow(d, 0, n - s)], d)
    return r if r is not input else input.clone()


def _triangle_keep(input, diagonal, upper, op):
    """The [rows, cols] mask of what tril/triu keep of ``input``'s last two dims."""
    _T._refuse_limited(op, _tensor_arg(input, op).dtype)
    if input.dim() < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    rows, cols = input.shape[-2], input.shape[-1]
    # col - row >= diagonal (upper) as one broadcast comparison: [cols] against [rows, 1]
    col = _T.arange(cols, device=input.device)
    row = _T.arange(diagonal, rows + diagonal, device=input.device).view(rows, 1)
    return col >= row if upper else col <= row


def _triangle(input, diagonal, upper, op):
    keep = _triangle_keep(input, diagonal, upper, op)
    return _T.where(keep, input, _T.zeros((), dtype=input.dtype, device=input.device))


def triangle_(self, diagonal, upper):
    """tril_/triu_ where nothing records the write: zeros written over what the triangle
    drops (one masked fill, not a where and a copy back); None otherwise."""
    if not isinstance(self, TensorBase) or _ag._tracked(self):
        return None
    # tril drops what triu(diagonal + 1) keeps, and triu what tril(diagonal - 1) keeps
    drop = _triangle_keep(self, diagonal + (-1 if upper else 1), not upper,
                          "triu" if upper else "tril")
    return self.masked_fill_(drop, 0)


def tril(input, diagonal=0, *, out=None):
    """The lower triangle (on and below ``diagonal``) of the last two dims; zeros above."""
    return into_out("tril", _triangle(input, diagonal, False, "tril"), out, input)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle (on and above ``diagonal``) of the last two dims; zeros below."""
    return into_out("triu", _triangle(input, diagonal, True, "triu"), out, input)


@composite("diag")
def diag(input, diagonal=0, *, out=None):
    """1-D input: a matrix with it on ``diagonal``; 2-D input: that diagonal, as 1-D."""
    return into_out("diag", _diag(input, diagonal), out, input)


def _diag(input, diagonal):
    _tensor_arg(input, "diag")
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    if input.dim() != 1:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.dim()}D")
    n = input.shape[0] + abs(diagonal)
    out = _T.zeros(n, n, dtype=input.dtype, device=input.device)
    out.diagonal(diagonal).copy_(input)
    return out


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (``offset``) over dims ``dim1``, ``dim2`` hold the last dim
    of ``input``; zeros elsewhere."""
    _tensor_arg(input, "diag_embed", "input")
    nd = input.dim() + 1
    d1, d2 = (_T._wrap_dim(d, nd) for d in (dim1, dim2))
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.dim() else 1) + abs(offset)
    rest = iter(input.shape[:-1])
    shape = [n if i in (d1, d2) else next(rest) for i in range(nd)]
    out = input.new_zeros(shape)
    out.diagonal(offset, d1, d2).copy_(input)
    return out


def diff(input, n=1, dim=-1, prepend=None, append=None, *, axis=None, out=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first;
    bool inputs use !=)."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("diff", dim, None, axis, None, -1)[0]
    return into_out("diff", _diff(input, n, dim, prepend, append), out, input, prepend, append)


def _diff(input, n, dim, prepend, append):
    x = _tensor_arg(input, "diff")
    if x.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap(dim, x.dim(), "diff")
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        if not isinstance(extra, TensorBase):
            extra = _T.full((), extra, dtype=x.dtype, device=x.device)
        if extra.dim() == 0:
            shape = list(x.shape)
            shape[d] = 1
            extra = extra.expand(shape)
        parts.append(extra)
    if parts:
        parts.insert(1 if prepend is not None else 0, x)
        x = cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = _T.logical_xor(hi, lo) if x.dtype == _BOOL else hi - lo
    return x


# --- broadcasting, splitting and the NumPy-style stacks and layouts

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


_SPLIT_OVERLOADS = ("(Tensor input, tuple of ints indices, int dim = 0), (Tensor input, Tensor "
                    "tensor_indices_or_sections, int dim = 0), (Tensor input, int sections, "
                    "int dim = 0)")


def _split_keyword(arg, indices, sections, tensor_indices_or_sections):
    """The one split argument, from a position or from PyTorch's overloads' keywords
    (``sections`` an int, ``indices`` a sequence of ints, ``tensor_indices_or_sections``
    a tensor)."""
    given = {k: v for k, v in (("indices", indices), ("sections", sections),
                               ("tensor_indices_or_sections", tensor_indices_or_sections))
             if v is not None}
    fits = {"sections": lambda v: hasattr(v, "__index__") and not isinstance(v, bool) and
            not (isinstance(v, TensorBase) and v.dim()),
            "indices": lambda v: isinstance(v, (list, tuple)),
            "tensor_indices_or_sections": lambda v: isinstance(v, TensorBase)}
    if len(given) + (arg is not None) != 1 or \
            not all(fits[k](v) for k, v in given.items()):
        got = ", ".join([f"{k}={type(v).__name__}" for k, v in given.items()])
        raise TypeError(f"tensor_split() received an invalid combination of arguments - got "
                        f"({got}), but expected one of: {_SPLIT_OVERLOADS}")
    return arg if arg is not None else next(iter(given.values()))


def tensor_split(input, indices_or_sections=None, dim=0, *, indices=None, sections=None,
                 tensor_indices_or_sections=None, axis=None):
    """Views of ``input`` split along ``dim``: into n near-equal parts (the first
    size % n one longer), or at the given indices."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("tensor_split", dim, None, axis, None, 0)[0]
    t = _tensor_arg(input, "tensor_split")
    indices_or_sections = _split_keyword(indices_or_sections, indices, sections,
                                         tensor_indices_or_sections)
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
    return r if out is None else _T._result_out(r, out, "dstack")


def column_stack(tensors, *, out=None):
    """1-D (and 0-d) tensors as columns, then hstack."""
    cols = [t.reshape(-1, 1) if t.dim() < 2 else t for t in _tensors((tensors,), "column_stack")]
    r = hstack(cols)
    return r if out is None else _T._result_out(r, out, "column_stack")


def row_stack(tensors, *, out=None):
    """vstack (PyTorch's alias)."""
    r = vstack(list(tensors))
    return r if out is None else _T._result_out(r, out, "row_stack")


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


@composite("diagflat")
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal ``offset``."""
    return diag(_tensor_arg(input, "diagflat").reshape(-1), offset)


@composite("block_diag")
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
    idx = list(pick(range(t.shape[0]), r))
    if not idx:
        return _T.empty(0, r, dtype=t.dtype, device=t.device)
    index = _T.tensor(idx, dtype=_INT64, device=t.device)
    return t.index_select(0, index.reshape(-1)).reshape(len(idx), r)


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
