"""Batching rules of the elementwise ops (unary, binary, where, copies and fills), with
broadcasting: each batched operand gets size-1 dims after its batch dim up to the widest
operand's per-sample dims, so that one call on the physical tensors broadcasts as every
sample would.  In place, the written tensor must be batched when an operand is."""
from ember.core import _dispatch
from ember.core._tensor import TensorBase
from ember.func._batching import RULES
from ember.func._batching._util import align, logical_ndim, refuse_unbatched_self, unwrap, wrap

__all__ = ["elementwise"]

_FAMILIES = (1, 2, 8)           # unary, binary, where (core/_tensor.pyx's FAMILY_*)


def _physical(level, args):
    vals, flags, nd = [], [], 0
    for a in args:
        x, b = unwrap(a, level)
        vals.append(x)
        flags.append(b)
        if isinstance(x, TensorBase):
            nd = max(nd, logical_ndim(x, b))
    return [align(x, b, nd) if isinstance(x, TensorBase) else x
            for x, b in zip(vals, flags)], flags


def elementwise(v, op, args, kwargs):
    phys, flags = _physical(v.level, args)
    out = kwargs.get("out")
    writes_self = (out is not None and out is args[0]) or op.name in ("copy_", "fill_")
    if writes_self:
        if not flags[0]:
            refuse_unbatched_self()
        if out is not None:
            kwargs = dict(kwargs, out=phys[0])
        if op.name == "fill_" and flags[1]:      # a batched 0-d value: each sample's own
            phys[0].copy_(phys[1])
        else:
            op.entry(*phys, **kwargs)
        return args[0]
    if out is not None:                     # out= another tensor: computed, then copied in
        r = wrap(op.entry(*phys, **dict(kwargs, out=None)), v.level)
        out.copy_(r)
        return out
    return wrap(op.entry(*phys, **kwargs), v.level)


for _name, _op in _dispatch.all_ops().items():
    if _op.family in _FAMILIES or _name in ("copy_", "fill_", "_to_copy", "clone"):
        RULES[_name] = elementwise
