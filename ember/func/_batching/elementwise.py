"""Batching rules of the elementwise ops (unary, binary, where, copies and fills), with
broadcasting: each batched operand gets size-1 dims after its batch dim up to the widest
operand's per-sample dims, so that one call on the physical tensors broadcasts as every
sample would.  In place, the written tensor must be batched when an operand is.

Type promotion follows the samples: a batched operand that is 0-d per sample promotes as
the 0-d tensor it is in each sample (it does not raise a dimensioned operand of its
category), although its physical tensor has a dim, so the binary ops compute in the
samples' common dtype.  where needs nothing: its caller passes the samples' result dtype
(the dtype keyword), which is also what where gives outside vmap (torch.func.vmap's where
promotes the physical tensors instead: float32 x and a 0-d float64 y give float64 there,
float32 here and in every sample)."""
from ember.core import _dispatch
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.func._batching import RULES
from ember.func._batching._util import align, logical_ndim, refuse_unbatched_self, unwrap, wrap

__all__ = ["elementwise"]

_FAMILIES = (1, 2, 8)           # unary, binary, where (core/_tensor.pyx's FAMILY_*)
_BINARY = 2


def _physical(level, args):
    """(the physical operands, aligned; which are batched; whether a batched operand is 0-d
    per sample)."""
    vals, flags, nd, scalar = [], [], 0, False
    for a in args:
        x, b = unwrap(a, level)
        vals.append(x)
        flags.append(b)
        if isinstance(x, TensorBase):
            n = logical_ndim(x, b)
            nd = max(nd, n)
            scalar = scalar or (b and n == 0)
    return [align(x, b, nd) if isinstance(x, TensorBase) else x
            for x, b in zip(vals, flags)], flags, scalar


def _promote(args, phys, keep_first):
    """``phys`` with its tensors cast to the samples' common dtype (result_type of the
    logical operands, which reads only their dtypes and whether they are 0-d), when the
    operands' dtypes differ; not the first when it is written in place."""
    ts = [a for a in args if isinstance(a, TensorBase)]
    if len(ts) != 2 or ts[0].dtype is ts[1].dtype:
        return phys
    dt = _T.result_type(*(_T.empty((), dtype=a.dtype) if a.dim() == 0 else
                          _T.empty((1,), dtype=a.dtype) for a in ts))
    return [x.to(dt) if isinstance(x, TensorBase) and x.dtype is not dt and
            not (keep_first and i == 0) else x for i, x in enumerate(phys)]


def elementwise(v, op, args, kwargs):
    phys, flags, scalar = _physical(v.level, args)
    out = kwargs.get("out")
    writes_self = (out is not None and out is args[0]) or op.name in ("copy_", "fill_")
    if scalar and op.family == _BINARY:     # a 0-d sample: promote as the samples do
        phys = _promote(args, phys, writes_self)
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
