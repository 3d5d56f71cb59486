"""Order statistics inside vmap (sort, topk, kthvalue, median, mode: composites that sort on
the host): the positions are found once on the physical tensor, the dim shifted by one;
the values are then gathered from the wrapper at those positions, so that a grad (or a
jvp) inside the vmap records them as the ops' own derivative does."""
import inspect

from ember.core import _autograd as _ag
from ember.core._dispatch import DispatchKey
from ember.core._results import values_indices
from ember.core.mode_keys import redispatch_below
from ember.func import _levels
from ember.func._batching import MODE_RULES, _level_of
from ember.func._batching._util import dim_of, unwrap, wrap

__all__ = []

_DIM_DEFAULT = {"sort": -1, "topk": -1, "kthvalue": -1, "median": None, "mode": -1}


class _Selection:
    """VmapMode kernel of one order statistic."""

    __slots__ = ("op", "sig")

    def __init__(self, op):
        self.op = op
        self.sig = inspect.signature(op.entry)

    def __call__(self, *args, **kwargs):
        lv = _level_of(args, kwargs)
        if lv < 0:
            return redispatch_below(self.op, DispatchKey.VmapMode, args, kwargs)
        v = _levels.info(lv)
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        x = a["input"]
        value, batched = unwrap(x, v.level)
        if not batched:
            return redispatch_below(self.op, DispatchKey.VmapMode, args, kwargs)
        if a.get("axis") is not None:
            a["dim"], a["axis"] = a["axis"], None
        dim = a["dim"]
        name = self.op.name
        flat = name == "median" and dim is None
        if flat:                              # the median of the whole sample
            x = x.reshape(-1)
            value = value.reshape(value.shape[0], -1)
            dim = 0
        nd = x.dim()
        keepdim = a.get("keepdim", True)
        with _levels.switch(v):
            phys = dict(a, input=value.detach(), dim=dim_of(dim, nd) if nd else 1)
            if not nd:
                phys["input"] = value.detach().unsqueeze(1)
            r = self.op.entry(**phys)
        idx = wrap(r.indices if nd or keepdim else r.indices.squeeze(1), v.level)
        if not _ag._tracked(x):
            values = wrap(r.values if nd or keepdim else r.values.squeeze(1), v.level)
        elif nd == 0:
            values = x.clone()
        else:
            gi = idx if keepdim or name in ("sort", "topk") else idx.unsqueeze(dim)
            values = x.gather(dim, gi)
            if not (keepdim or name in ("sort", "topk")):
                values = values.squeeze(dim)
        if flat:
            return values
        return values_indices(name, values, idx)


for _name in _DIM_DEFAULT:
    MODE_RULES[_name] = _Selection
