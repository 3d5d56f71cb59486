"""Batching rules of the view and shape ops: the same view of the physical tensor with its
batch dim kept in front (per-sample dims shifted by one), so a view of a wrapper is still
a view of the wrapped tensor; cat and the splits likewise."""
from ember.core import _tensor as _T
from ember.func._batching import rule
from ember.func._batching._util import align, dim_of, materialize, unwrap, wrap, wrap_all

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
    return wrap(x.view((x.shape[0],) + _shape_arg(args[1:])), v.level)


@rule("reshape")
def _reshape(v, op, args, kwargs):
    x = _value(v, args)
    return wrap(x.reshape((x.shape[0],) + _shape_arg(args[1:])), v.level)


@rule("permute")
def _permute(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    dims = _shape_arg(args[1:])
    if len(dims) != nd:                     # the op's own error, with per-sample sizes
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    return wrap(x.permute([0] + [dim_of(d, nd) for d in dims]), v.level)


@rule("transpose")
def _transpose(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    if nd == 0:
        return wrap(x.view(x.shape), v.level)
    return wrap(x.transpose(dim_of(args[1], nd), dim_of(args[2], nd)), v.level)


@rule("expand")
def _expand(v, op, args, kwargs):
    x = _value(v, args)
    sizes = _shape_arg(args[1:])
    x = align(x, True, len(sizes))
    return wrap(x.expand((x.shape[0],) + sizes), v.level)


@rule("squeeze")
def _squeeze(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    dim = args[1] if len(args) > 1 else None
    if nd == 0:
        return wrap(x.view(x.shape), v.level)
    if dim is None:
        dims = tuple(i + 1 for i in range(nd) if x.shape[i + 1] == 1)
    else:
        dims = tuple(dim_of(d, nd) for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
    return wrap(x.squeeze(dims) if dims else x.view(x.shape), v.level)


@rule("unsqueeze")
def _unsqueeze(v, op, args, kwargs):
    x = _value(v, args)
    return wrap(x.unsqueeze(dim_of(args[1], x.dim())), v.level)


@rule("narrow")
def _narrow(v, op, args, kwargs):
    x = _value(v, args)
    return wrap(op.entry(x, dim_of(args[1], x.dim() - 1), *args[2:]), v.level)


@rule("select")
def _select(v, op, args, kwargs):
    x = _value(v, args)
    return wrap(x.select(dim_of(args[1], x.dim() - 1), args[2]), v.level)


@rule("diagonal")
def _diagonal(v, op, args, kwargs):
    x = _value(v, args)
    nd = x.dim() - 1
    return wrap(x.diagonal(args[1], dim_of(args[2], nd), dim_of(args[3], nd)), v.level)


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
    return wrap(x.as_strided((x.shape[0],) + size, (x.stride(0),) + stride, offset), v.level)


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
    return wrap_all(tuple(op.entry(x, args[1], dim_of(dim, x.dim() - 1))), v.level)


@rule("unbind")
def _unbind(v, op, args, kwargs):
    x = _value(v, args)
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    return wrap_all(tuple(op.entry(x, dim_of(dim, x.dim() - 1))), v.level)
