"""Batching rules of the index ops: gather and the scatters on batched (or expanded)
operands with the dim shifted; index_select and take through gather when the index is
batched; advanced indexing (getitem, index_put) with a leading full slice for the batch
dim when the index tensors are shared by every sample and form one block; index_fill with a
batched value (0-d per sample) through a mask of the indexed positions.  Other cases
(batched index tensors of index_put / put / index_fill, split index blocks) run the loop;
index_add and index_copy with an index per sample fold the batch into the indexed dim;
searchsorted takes the batch as one more leading dim of its sequences and values."""
from ember.core import _dtype
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.func._batching import rule
from ember.func._batching._util import (
    BatchRuleError,
    align,
    dim_of,
    materialize,
    refuse_unbatched_self,
    unwrap,
    wrap,
)

__all__ = []


def _mat(v, x):
    t, b = unwrap(x, v.level)
    return materialize(t, b, v.size) if isinstance(t, TensorBase) else t


def _out(v, r, kwargs):
    r = wrap(r, v.level)
    out = kwargs.get("out")
    if out is None:
        return r
    out.copy_(r)
    return out


def _kw(kwargs):
    return {k: x for k, x in kwargs.items() if k != "out"}


@rule("gather", "scatter", "scatter_add", "scatter_reduce")
def _gather_scatter(v, op, args, kwargs):
    a = _mat(v, args[0])
    nd = args[0].dim()
    rest = [_mat(v, x) for x in args[2:]]
    if nd == 0 or args[2].dim() != nd:
        raise BatchRuleError(op.name)         # the 0-d / 1-d mix: sample by sample
    return _out(v, op.entry(a, dim_of(args[1], nd), *rest, **_kw(kwargs)), kwargs)


def _positive(idx, size):
    return _T.where(idx < 0, idx + size, idx)


@rule("index_select")
def _index_select(v, op, args, kwargs):
    (a, ab), (idx, ib) = unwrap(args[0], v.level), unwrap(args[2], v.level)
    nd = args[0].dim()
    d = dim_of(args[1], nd) if nd else 1
    if nd == 0:
        raise BatchRuleError(op.name)
    if not ib:
        return _out(v, op.entry(materialize(a, ab, v.size), d, idx), kwargs)
    a = materialize(a, ab, v.size)
    shape = list(a.shape)
    shape[d] = idx.shape[1]
    view = [v.size] + [1] * nd
    view[d] = idx.shape[1]
    i = _positive(idx, a.shape[d]).reshape(view).expand(shape)
    return _out(v, _T.gather(a, d, i), kwargs)


@rule("index_add", "index_copy", "index_fill")
def _index_update(v, op, args, kwargs):
    nd = args[0].dim()
    if nd == 0:
        raise BatchRuleError(op.name)
    if unwrap(args[2], v.level)[1]:
        if op.name == "index_fill" or len(args) < 4:
            raise BatchRuleError(op.name)     # a batched index: sample by sample
        return _out(v, _index_update_batched(v, op, args, kwargs), kwargs)
    a = _mat(v, args[0])
    d = dim_of(args[1], nd)
    if op.name == "index_fill":
        value, vb = unwrap(args[3], v.level)
        if vb:
            return _out(v, _fill_where(a, d, args[2], value), kwargs)
        extra = [value]             # a 0-d tensor (or a number) for every sample
    else:
        extra = [_mat(v, x) for x in args[3:]]
    return _out(v, op.entry(a, d, args[2], *extra, **_kw(kwargs)), kwargs)


def _index_update_batched(v, op, args, kwargs):
    """index_add / index_copy with an index per sample (an embedding's backward in per-
    sample gradients): the batch dim folded into the indexed one, each sample's index
    offset into its own block, so one call does every sample, in each sample's order."""
    nd = args[0].dim()
    d = dim_of(args[1], nd)
    a, idx, src = _mat(v, args[0]), _mat(v, args[2]), _mat(v, args[3])
    if idx.dim() != 2 or src.dim() != nd + 1:
        raise BatchRuleError(op.name)
    size = a.shape[d]
    if idx.numel() and bool(((idx < 0) | (idx >= size)).any()):
        raise BatchRuleError(op.name)         # the op's own error, sample by sample
    offsets = _T.arange(v.size, device=idx.device, dtype=idx.dtype).unsqueeze(1) * size
    flat = (idx + offsets).reshape(-1)
    a2 = a.movedim(0, d - 1)
    s2 = src.movedim(0, d - 1)
    folded = a2.reshape(a2.shape[:d - 1] + (-1,) + a2.shape[d + 1:])
    r = op.entry(folded, d - 1, flat, s2.reshape(s2.shape[:d - 1] + (-1,) + s2.shape[d + 1:]),
                 **_kw(kwargs))
    return r.reshape(a2.shape).movedim(d - 1, 0)


def _fill_where(a, d, index, value):
    """index_fill of the physical ``a`` along its dim ``d`` with a batched 0-d value (one
    per sample): a mask of the indexed positions (index_fill on a bool vector, which checks
    and wraps the index as the op does) selects the value, cast to a's dtype as the op
    casts it."""
    mask = _T.zeros(a.shape[d], dtype=_dtype.bool, device=a.device).index_fill(0, index, True)
    shape = [1] * a.dim()
    shape[d] = a.shape[d]
    value = value.to(a.dtype).reshape((a.shape[0],) + (1,) * (a.dim() - 1))
    return _T.where(mask.reshape(shape), value, a)


@rule("searchsorted")
def _searchsorted(v, op, args, kwargs):
    """The samples' sequences as the leading dim of one N-d sorted sequence (its values
    matched dim for dim), or one shared 1-d sequence for every sample's values."""
    if len(args) != 2 or kwargs.get("out") is not None or \
            not isinstance(args[0], TensorBase) or args[0].dim() == 0:
        raise BatchRuleError(op.name)      # the op's own checks and out=, sample by sample
    seq, value = args
    kw = _kw(kwargs)
    s, sb = unwrap(seq, v.level)
    sorter = kw.get("sorter")
    shared = not sb and not (isinstance(sorter, TensorBase) and unwrap(sorter, v.level)[1])
    if not isinstance(value, TensorBase):  # a number: a 0-d value as the op makes it
        value = _T.full((), value, device=s.device)
    x, xb = unwrap(value, v.level)
    if shared and seq.dim() == 1:          # one sequence: any values, the batch among them
        return wrap(op.entry(s, materialize(x, xb, v.size), **kw), v.level)
    if sorter is not None:
        kw["sorter"] = _mat(v, sorter)
    s, x = materialize(s, sb, v.size), materialize(x, xb, v.size)
    if seq.dim() == 1:                     # a sequence per sample: its values as one row
        return wrap(op.entry(s, x.reshape(v.size, -1), **kw).reshape(x.shape), v.level)
    if value.dim() != seq.dim() or value.shape[:-1] != seq.shape[:-1]:
        raise BatchRuleError(op.name)      # the op's shape error, sample by sample
    return wrap(op.entry(s, x, **kw), v.level)


@rule("take")
def _take(v, op, args, kwargs):
    a = _mat(v, args[0]).reshape(v.size, -1)
    (idx, ib) = unwrap(args[1], v.level)
    shape = tuple(args[1].shape)
    i = materialize(idx, ib, v.size).reshape(v.size, -1)
    r = _T.gather(a, 1, _positive(i, a.shape[1]))
    return _out(v, r.reshape((v.size,) + shape), kwargs)


def _is_index(x):
    return isinstance(x, (TensorBase, list))


def _one_block(items):
    """The positions of the index tensors (lists) in ``items`` are consecutive."""
    pos = [i for i, x in enumerate(items) if _is_index(x)]
    return not pos or pos[-1] - pos[0] + 1 == len(pos)


def _shared_items(v, items):
    """``items`` for the physical tensor (a full slice for the batch dim first), or None
    when an index tensor is batched or the index tensors do not form one block."""
    if not _one_block(items):
        return None
    for x in items:
        if isinstance(x, TensorBase) and unwrap(x, v.level)[1]:
            return None
    return (slice(None),) + tuple(items)


@rule("index")
def _index(v, op, args, kwargs):
    items = _shared_items(v, args[1])
    if items is not None:
        return wrap(op.entry(_mat(v, args[0]), items), v.level)
    plan = _batched_plan(v, args[0], args[1])
    if plan is None:
        raise BatchRuleError(op.name)
    items, order = plan
    r = op.entry(_mat(v, args[0]), items)
    return wrap(r if order is None else r.permute(order), v.level)


def _batched_plan(v, a, items):
    """Batched index tensors: (the physical items, the permutation of the physical result
    into the batch of per-sample results, or None).  An index over the samples (arange)
    joins the index tensors, so the physical result is (batch, *index dims, *other dims in
    order); one sample's result has its index dims where its one block of index tensors
    starts (first when they are split).  None (the loop runs) unless every item is an int,
    a slice or an integer index tensor."""
    items = [_T.tensor(x) if isinstance(x, int) and not isinstance(x, bool) else x
             for x in items]
    for x in items:
        if not isinstance(x, (slice, TensorBase)) or isinstance(x, TensorBase) and (
                x.dtype.is_floating_point or x.dtype == _dtype.bool or x.dtype.is_complex):
            return None
    pos = [i for i, x in enumerate(items) if isinstance(x, TensorBase)]
    nb = max(x.dim() for x in items if isinstance(x, TensorBase))
    phys = [_mat(v, x).reshape((v.size,) + (1,) * (nb - x.dim()) + tuple(x.shape))
            if isinstance(x, TensorBase) else x for x in items]
    samples = _T.arange(v.size, device=a.device).reshape((v.size,) + (1,) * nb)
    first, rest = pos[0], a.dim() - len(pos)
    order = None
    if first and pos[-1] - first + 1 == len(pos):
        order = [0] + list(range(1 + nb, 1 + nb + first)) + list(range(1, 1 + nb)) + \
            list(range(1 + nb + first, 1 + nb + rest))
    return (samples, *phys), order


@rule("index_put")
def _index_put(v, op, args, kwargs):
    t, tb = unwrap(args[0], v.level)
    items = _shared_items(v, args[1])
    value, vb = unwrap(args[2], v.level)
    if not tb:
        refuse_unbatched_self("index_put_")
    if items is not None:
        if vb:              # the indexed region of one sample: align the value to it
            value = align(value, True, _region_ndim(args[0].dim(), args[1]))
        op.entry(t, items, value, *args[3:], **kwargs)
        return args[0]
    plan = _batched_plan(v, args[0], args[1])
    if plan is None:
        raise BatchRuleError(op.name)
    items, order = plan
    # the value as the batch of per-sample regions, laid out as the physical result
    n = len(order) - 1 if order is not None else None
    if isinstance(value, TensorBase):
        if n is None:
            n = _region_ndim(args[0].dim(), args[1])
        value = align(materialize(value, vb, v.size), True, n)
        if order is not None:
            inverse = [0] * len(order)
            for i, d in enumerate(order):
                inverse[d] = i
            value = value.permute(inverse)
    op.entry(t, items, value, *args[3:], **kwargs)
    return args[0]


def _list_ndim(x):
    n = 0
    while isinstance(x, (list, tuple)):
        n += 1
        x = x[0] if x else 0
    return n


def _region_ndim(nd, items):
    """The number of dims of t[items] for a tensor of ``nd`` dims (index tensors in one
    block: their broadcast dims replace the dims they consume)."""
    consumed, produced, block = 0, 0, False
    for x in items:
        if x is None:
            nd += 1
        elif isinstance(x, (TensorBase, list)):
            block = True
            k = x.dim() if isinstance(x, TensorBase) else _list_ndim(x)
            if isinstance(x, TensorBase) and x.dtype.name == "bool":
                consumed += k
                produced = max(produced, 1)
            else:
                consumed += 1
                produced = max(produced, k)
        elif isinstance(x, int):
            nd -= 1
    return nd - consumed + (produced if block else 0)
