"""The loop fallback of a Python composite inside vmap, kept differentiable.

A composite that reads values on the host or writes batched values into a tensor it made
runs sample by sample on the physical tensors (``loop``), which cuts the graph that an
enclosing grad or jvp records on the wrappers: their gradients and tangents came out zero.
When an input requires grad or carries a tangent, the loop runs as the forward of a
Function recorded on the wrappers instead; its backward (and jvp) runs the composite again
per sample, differentiated on that sample alone, and stacks the results into wrappers -
what a per-sample loop with its own autograd would give.  It is differentiable once: a
second derivative through it raises (never a silent zero)."""
from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.function import Function
from ember.core.grad_mode import enable_grad
from ember.core.gradients import grad as _autograd_grad
from ember.func import _levels
from ember.func._batching._util import unwrap, wrap_all

_batch_level = _T._batch_level
_NO_CEILING = 0x7fffffff        # core/_forward.pxi: no tangent level hidden

__all__ = ["tracked", "differentiable_loop"]


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _flatten(x, tensors):
    """x with each tensor (also inside a list or tuple) replaced by a slot into tensors."""
    if isinstance(x, TensorBase):
        tensors.append(x)
        return _Slot(len(tensors) - 1)
    if isinstance(x, (list, tuple)) and any(isinstance(y, TensorBase) for y in x):
        return _rebuilt(x, [_flatten(y, tensors) for y in x])
    return x


def _rebuilt(x, items):
    return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)


def _fill(x, tensors):
    if isinstance(x, _Slot):
        return tensors[x.i]
    if isinstance(x, (list, tuple)) and any(isinstance(y, _Slot) for y in x):
        return _rebuilt(x, [_fill(y, tensors) for y in x])
    return x


def _sample(t, level, i):
    v, batched = unwrap(t, level)
    return v.select(0, i) if batched else v


def tracked(args, kwargs):
    """Whether a composite's tensor arguments carry what a loop would drop: a recording
    of autograd (an input requiring grad, grad mode on) or a forward tangent."""
    tensors = []
    _flatten(args, tensors)
    _flatten(tuple(kwargs.values()), tensors)
    if _ag.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return True
    return _ag._fw_scan(tuple(tensors))[0] >= 0


class _Call:
    """One composite call inside vmap level ``v``: ``fn`` over slots into the tensors."""

    def __init__(self, v, name, fn, args, kwargs, loop):
        self.v, self.name, self.fn, self.loop = v, name, fn, loop
        self.tensors = []
        self.args = _flatten(args, self.tensors)
        self.kwargs = {k: _flatten(x, self.tensors) for k, x in kwargs.items()}
        self.out_type = None

    def run(self, tensors):
        """The composite over the whole batch (the plain loop)."""
        with _levels.switch(self.v):
            r = self.loop(self.v, None, self.fn, _fill(self.args, tensors),
                          {k: _fill(x, tensors) for k, x in self.kwargs.items()},
                          name=self.name)
        if isinstance(r, tuple) and hasattr(r, "_fields"):
            self.out_type = type(r)
            r = tuple(r)
        return r

    def per_sample(self, tensors, i, prepare):
        """The composite on sample ``i`` of the physical tensors, each made by
        ``prepare(index, sample)``; returns (the samples, the outputs as a tuple)."""
        xs = [prepare(k, _sample(t, self.v.level, i)) for k, t in enumerate(tensors)]
        out = self.fn(*_fill(self.args, xs), **{k: _fill(x, xs) for k, x in self.kwargs.items()})
        return xs, (tuple(out) if isinstance(out, (tuple, list)) else (out,))

    def vjp(self, tensors, need, grads):
        """Per-sample gradients of the inputs that ``need`` them, for the output gradients
        ``grads`` (batched at this level at most)."""
        cols = [[] if n else None for n in need]
        level = self.v.level
        with _levels.switch(self.v), enable_grad():
            for i in range(self.v.size):
                xs, outs = self.per_sample(
                    tensors, i, lambda k, s: _detached_leaf(s) if need[k] else s)
                pairs = [(o, g) for o, g in zip(outs, grads)
                         if isinstance(o, TensorBase) and o.requires_grad and g is not None]
                wrt = [x for x, n in zip(xs, need) if n]
                gs = _autograd_grad(tuple(o for o, _ in pairs), tuple(wrt),
                                    tuple(_sample(g, level, i) for _, g in pairs),
                                    allow_unused=True) if pairs else [None] * len(wrt)
                it = iter(gs)
                for k, n in enumerate(need):
                    if n:
                        g = next(it)
                        cols[k].append(_T.zeros_like(xs[k]) if g is None else g)
        return self.stack(cols)

    def jvp(self, tensors, tangents):
        """Per-sample tangents of the outputs for the input ``tangents``."""
        from ember.autograd import forward_ad as fwAD
        ceiling = _ag._fw_ceiling_get()
        # Function.jvp runs with its own tangent level hidden: the new one must be seen
        _ag._fw_ceiling_set(_NO_CEILING)
        try:
            with _levels.switch(self.v), fwAD.dual_level():
                cols = self._jvp_samples(tensors, tangents, fwAD)
        finally:
            _ag._fw_ceiling_set(ceiling)
        return self.stack(cols)

    def _jvp_samples(self, tensors, tangents, fwAD):
        level, cols = self.v.level, None
        for i in range(self.v.size):
            _, outs = self.per_sample(tensors, i, lambda k, s: fwAD.make_dual(
                s.detach(), _sample(tangents[k], level, i)))
            ts = [fwAD.unpack_dual(o).tangent if isinstance(o, TensorBase) else None
                  for o in outs]
            if cols is None:
                cols = [None if t is None else [] for t in ts]
            for k, (o, t) in enumerate(zip(outs, ts)):
                if cols[k] is not None:
                    cols[k].append(_T.zeros_like(o.detach()) if t is None else t)
        return cols

    def stack(self, columns):
        """Per-input lists of per-sample results, stacked into wrappers (None kept)."""
        from ember.core.shapes import stack
        return tuple(None if c is None else wrap_all(stack(c), self.v.level) for c in columns)


def _detached_leaf(sample):
    s = sample.detach()
    _ag.set_requires_grad(s, True)
    return s


def _peeled(call, fn, values):
    """fn(values), where values may carry vmap levels inside the composite's: a vmap that
    runs over the backward (jacrev's rows) or over the tangents (jacfwd's columns), taken
    sample by sample, innermost first, as its own fallback would."""
    inner = [b.level for b in map(_batch_level, values) if b is not None]
    inner = [lv for lv in inner if lv > call.v.level]
    if not inner:
        return fn(values)
    v = _levels.info(max(inner))
    with _levels.switch(v):
        return call.loop(v, None, lambda *vs: _peeled(call, fn, vs), values, {},
                         name=call.name)


class _LoopFunction(Function):
    @staticmethod
    def forward(ctx, call, *tensors):
        ctx.call = call
        ctx.save_for_backward(*tensors)
        return call.run(tensors)

    @staticmethod
    def backward(ctx, *grads):
        call, tensors = ctx.call, ctx.saved_tensors
        need = ctx.needs_input_grad[1:]
        seen = tensors + tuple(g for g in grads if g is not None)
        if (_ag.is_grad_enabled() and any(t.requires_grad for t in seen)
                or _ag._fw_scan(seen)[0] >= 0):
            raise RuntimeError(
                f"vmap: {call.name} has no batching rule and runs sample by sample; that "
                f"fallback can be differentiated once, not twice (a double backward or "
                f"forward-over-reverse through it, as hessian's, is not supported)")
        return (None,) + tuple(_peeled(call, lambda gs: call.vjp(tensors, need, gs), grads))

    @staticmethod
    def jvp(ctx, _, *tangents):
        call, tensors = ctx.call, ctx.saved_tensors
        r = _peeled(call, lambda ts: call.jvp(tensors, ts), tangents)
        return r[0] if len(r) == 1 else tuple(r)


def differentiable_loop(v, name, fn, args, kwargs, loop):
    """``loop`` of the composite ``fn`` as a Function on the wrappers (see the module)."""
    call = _Call(v, name, fn, args, kwargs, loop)
    out = _LoopFunction.apply(call, *call.tensors)
    return call.out_type(*out) if call.out_type is not None else out
