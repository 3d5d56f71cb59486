"""Batching rules of the view and shape ops: the same view of the physical tensor with its
batch dim kept in front (per-sample dims shifted by one), so a view of a wrapper is still
a view of the wrapped tensor; cat and the splits likewise."""
from ember.core import _tensor as _T
from ember.func._batching import rule
from ember.func._batching._util import align, dim_of, materialize, unwrap, wrap, wrap_view

__all__ = []


def _shape_arg(args):
    """A view op's sizes, given as varargs or as one sequence."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _value(v, args):
    return unwrap(args[0], v.level)[0]


@rule("view")
def _view(v, op, args, kwargs):
    x = _value(v, args)
    return wrap_view(x.view((x.shape[0],) + _shape_arg(args[1:])), v.level, args[0])


@rule("reshape")
def _reshape(v, op, args, kwargs):
    x = _value(v, args)
    r = x.reshape((x.shape[0],) + _shape_arg(args[1:]))
    if r.untyped_storage() is x.untyped_storage():        # a view, not a copy
        return wrap_view(r, v.level, args[0])
    return wrap(r, v.level)


@rule("permute")
def _permute(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    dims = _shape_arg(args[1:])
    if len(dims) != nd:                     # the op's own error, with per-sample sizes
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    return wrap_view(x.permute([0] + [dim_of(d, nd) for d in dims]), v.level, args[0])


@rule("transpose")
def _transpose(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    if nd == 0:
        return wrap_view(x.view(x.shape), v.level, args[0])
    return wrap_view(x.transpose(dim_of(args[1], nd), dim_of(args[2], nd)), v.level, args[0])


@rule("expand")
def _expand(v, op, args, kwargs):
    x = _value(v, args)
    sizes = _shape_arg(args[1:])
    x = align(x, True, len(sizes))
    return wrap_view(x.expand((x.shape[0],) + sizes), v.level, args[0])


@rule("squeeze")
def _squeeze(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    dim = args[1] if len(args) > 1 else None
    if nd == 0:
        return wrap_view(x.view(x.shape), v.level, args[0])
    if dim is None:
        dims = tuple(i + 1 for i in range(nd) if x.shape[i + 1] == 1)
    else:
        dims = tuple(dim_of(d, nd) for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
    return wrap_view(x.squeeze(dims) if dims else x.view(x.shape), v.level, args[0])


@rule("unsqueeze")
def _unsqueeze(v, op, args, kwargs):
    x = _value(v, args)
    return wrap_view(x.unsqueeze(dim_of(args[1], x.dim())), v.level, args[0])


@rule("narrow")
def _narrow(v, op, args, kwargs):
    x = _value(v, args)
    return wrap_view(op.entry(x, dim_of(args[1], x.dim() - 1), *args[2:]), v.level, args[0])


@rule("select")
def _select(v, op, args, kwargs):
    x = _value(v, args)
    return wrap_view(x.select(dim_of(args[1], x.dim() - 1), args[2]), v.level, args[0])


@rule("diagonal")
def _diagonal(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    return wrap_view(x.diagonal(args[1], dim_of(args[2], nd), dim_of(args[3], nd)), v.level,
                     args[0])


@rule("as_strided")
def _as_strided(v, op, args, kwargs):
    """The per-sample geometry on the batch's storage: sample i starts one batch stride
    after sample 0 (PyTorch's rule; the samples' regions must not overlap)."""
    x = _value(v, args)
    size, stride = tuple(args[1]), tuple(args[2])
    offset = args[3] if len(args) > 3 and args[3] is not None else args[0].storage_offset()
    span = sum((s - 1) * st for s, st in zip(size, stride) if s > 0) + 1
    if x.shape[0] > 1 and span > x.stride(0) > 0 and 0 not in size:
        raise RuntimeError("vmap: as_strided would read memory of other samples of the "
                           "batch (the per-sample view spans more than the batch stride); "
                           "as_strided is only supported inside vmap when every sample's "
                           "view stays within its own sample")
    return wrap_view(x.as_strided((x.shape[0],) + size, (x.stride(0),) + stride, offset),
                     v.level, args[0])


@rule("cat")
def _cat(v, op, args, kwargs):
    dim, tensors = args[0], args[1:]
    parts, nd = [], None
    for t in tensors:
        x, b = unwrap(t, v.level)
        shape = tuple(t.shape)
        if len(shape) == 1 and shape[0] == 0:
            continue                         # PyTorch's legacy rule: a 1-D empty joins any cat
        nd = len(shape) if nd is None else nd
        parts.append(materialize(x, b, v.size))
    if not parts:
        x, b = unwrap(tensors[0], v.level)
        return wrap(materialize(x, b, v.size).clone(), v.level)
    r = _T._cat(parts, dim_of(dim, nd) if nd else 1)
    out = kwargs.get("out")
    if out is not None:
        out.copy_(wrap(r, v.level))
        return out
    return wrap(r, v.level)


@rule("split", "split_with_sizes", "_split_views")
def _split(v, op, args, kwargs):
    x = _value(v, args)
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    return tuple(wrap_view(p, v.level, args[0])
                 for p in op.entry(x, args[1], dim_of(dim, x.dim() - 1)))


@rule("unbind")
def _unbind(v, op, args, kwargs):
    x = _value(v, args)
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    return tuple(wrap_view(p, v.level, args[0]) for p in op.entry(x, dim_of(dim, x.dim() - 1)))
