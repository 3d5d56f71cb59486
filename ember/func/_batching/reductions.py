"""Batching rules of the ops over dims: reductions (sum, mean, prod, amax, amin, argmax,
argmin), scans (cumsum, cumprod, cummax, cummin) and the softmax family with its backward
ops.  A per-sample dim d is physical dim d + 1; "every dim" is every dim but the batch
dim; a per-sample scalar gets a dim of size 1 to reduce over."""
from ember.func._batching import rule
from ember.func._batching._util import dim_of, materialize, unwrap, wrap, wrap_all

__all__ = []


def _all_dims(dim):
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


@rule("sum", "mean", "prod", "amax", "amin", "argmax", "argmin")
def _reduce(v, op, args, kwargs):
    x, _ = unwrap(args[0], v.level)
    dim = args[1] if len(args) > 1 else None
    keepdim = bool(args[2]) if len(args) > 2 else False
    kw = {k: val for k, val in kwargs.items() if k != "out"}
    nd = x.dim() - 1
    if nd == 0:                             # a per-sample scalar: reduce a dim of size 1
        r = op.entry(x.unsqueeze(1), 1, False, **kw)
    elif _all_dims(dim):
        if op.name in ("argmax", "argmin"):  # over the flattened sample
            r = op.entry(x.reshape(x.shape[0], -1), 1, False, **kw)
            if keepdim:
                r = r.reshape((x.shape[0],) + (1,) * nd)
        else:
            r = op.entry(x, tuple(range(1, nd + 1)), keepdim, **kw)
    else:
        dims = tuple(dim_of(d, nd) for d in dim) if isinstance(dim, (tuple, list)) \
            else dim_of(dim, nd)
        r = op.entry(x, dims, keepdim, **kw)
    r = wrap(r, v.level)
    out = kwargs.get("out")
    if out is not None:
        out.copy_(r)
        return out
    return r


@rule("cumsum", "cumprod", "cummax", "cummin")
def _scan(v, op, args, kwargs):
    x, _ = unwrap(args[0], v.level)
    nd = x.dim() - 1
    if nd == 0:
        r = op.entry(x.unsqueeze(1), 1, **kwargs)
        r = r.squeeze(1) if not isinstance(r, tuple) else type(r)(*(t.squeeze(1) for t in r))
    else:
        r = op.entry(x, dim_of(args[1], nd), **kwargs)
    return wrap_all(r, v.level)


@rule("softmax", "log_softmax")
def _softmax(v, op, args, kwargs):
    x, _ = unwrap(args[0], v.level)
    nd = x.dim() - 1
    rest = args[2:]
    if nd == 0:
        return wrap(op.entry(x.unsqueeze(1), 1, *rest, **kwargs).squeeze(1), v.level)
    return wrap(op.entry(x, dim_of(args[1], nd), *rest, **kwargs), v.level)


@rule("_softmax_backward_data", "_log_softmax_backward_data")
def _softmax_backward(v, op, args, kwargs):
    (g, gb), (o, ob) = unwrap(args[0], v.level), unwrap(args[1], v.level)
    g, o = materialize(g, gb, v.size), materialize(o, ob, v.size)
    nd = g.dim() - 1
    if nd == 0:
        r = op.entry(g.unsqueeze(1), o.unsqueeze(1), 1, *args[3:], **kwargs).squeeze(1)
    else:
        r = op.entry(g, o, dim_of(args[2], nd), *args[3:], **kwargs)
    return wrap(r, v.level)
