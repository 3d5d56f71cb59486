"""Batching rules: the kernels vmap registers at the Batched dispatch key.

A rule gets the innermost vmap level among the call's wrappers, the op, and the call's
arguments; it runs the op once on the physical tensors (under that level's thread state,
see ember.func._levels) and wraps the result.  Rules are grouped by op family in the
modules beside this one; every op without one gets the loop fallback, which warns (as
PyTorch's fallback does) and runs the op sample by sample.  Python composites that cannot
run on wrappers (they read values on the host, or write batched values into a tensor
they made unbatched) fall back to the same loop."""
import warnings

from ember.core import _dispatch
from ember.core import _tensor as _T
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase
from ember.func import _levels
from ember.func._batching._loop_grad import differentiable_loop, tracked
from ember.func._batching._util import (
    BatchRuleError,
    UnbatchedSelfWrite,
    refuse_unbatched_self,
    unwrap,
    wrap_all,
)

__all__ = ["BatchedKernel", "RULES", "install", "loop"]

_BATCHED = int(DispatchKey.Batched)
_VMAP_MODE = int(DispatchKey.VmapMode)
_batch_level = _T._batch_level

RULES = {}                # op name -> rule(level, op, args, kwargs)
MODE_RULES = {}           # op name -> VmapMode kernel (random ops, composites)


def rule(*names):
    """Decorator: the batching rule of the ops ``names``."""
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return register


def _level_of(args, kwargs):
    """The innermost vmap level among the wrappers in ``args``/``kwargs`` (lists too)."""
    lv = -1
    for a in args:
        if isinstance(a, TensorBase):
            b = _batch_level(a)
            if b is not None and b.level > lv:
                lv = b.level
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TensorBase):
                    b = _batch_level(x)
                    if b is not None and b.level > lv:
                        lv = b.level
    for a in kwargs.values():
        if isinstance(a, TensorBase):
            b = _batch_level(a)
            if b is not None and b.level > lv:
                lv = b.level
    return lv


class BatchedKernel:
    """What the dispatcher calls at the Batched key for one op."""

    __slots__ = ("op", "fn")

    def __init__(self, op, fn):
        self.op, self.fn = op, fn

    def __call__(self, *args, **kwargs):
        v = _levels.info(_level_of(args, kwargs))
        with _levels.switch(v):
            if self.fn is not None:
                try:
                    return self.fn(v, self.op, args, kwargs)
                except BatchRuleError:
                    pass
            return loop(v, self.op, self.op.entry, args, kwargs)


_warned = set()


def _warn(name):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for {name}. Please file us an issue on GitHub so that "
                      f"we can prioritize its implementation.", UserWarning, stacklevel=4)


def _sample(x, level, i):
    if isinstance(x, TensorBase):
        v, batched = unwrap(x, level)
        return v.select(0, i) if batched else x
    if isinstance(x, (list, tuple)) and any(isinstance(y, TensorBase) for y in x):
        return type(x)(_sample(y, level, i) for y in x)
    return x


def loop(v, op, fn, args, kwargs, name=None):
    """The fallback: ``fn`` (the op, or a composite's function) sample by sample, the
    results stacked into wrappers.  An in-place op writes each sample of its first
    argument (which must be batched) and returns it."""
    _warn(name or op.name)
    level = v.level
    first = args[0] if args else None
    inplace = kwargs.get("out") is not None and kwargs.get("out") is first or (
        op is not None and op.derivative is not None and op.derivative[2] & 8)
    out = kwargs.get("out")
    if (inplace and not unwrap(first, level)[1]) or (
            isinstance(out, TensorBase) and not unwrap(out, level)[1]):
        refuse_unbatched_self(name or op.name)      # every sample would write one tensor
    outs = []
    for i in range(v.size):
        a = tuple(_sample(x, level, i) for x in args)
        kw = {k: _sample(x, level, i) for k, x in kwargs.items()}
        outs.append(fn(*a, **kw))
    if inplace:
        return first
    return _stack_results(outs, level, name or op.name)


def _stack_results(outs, level, name):
    r = outs[0]
    if isinstance(r, TensorBase):
        return wrap_all(_stack(outs), level)
    if isinstance(r, (tuple, list)):
        parts = [_stack_results([o[k] for o in outs], level, name) for k in range(len(r))]
        return type(r)(*parts) if hasattr(r, "_fields") else type(r)(parts)
    if r is None:
        return None
    raise RuntimeError(f"vmap: {name} returned a {type(r).__name__}, which cannot be "
                       f"batched (a value that depends on the data: data-dependent control "
                       f"flow is not supported in vmap)")


def _stack(ts):
    from ember.core.shapes import stack
    return stack(ts)


def _fallback(op):
    return BatchedKernel(op, None)


def _vmap_composite(op, fn, args, kwargs):
    """A Python composite inside vmap: its own VmapMode rule if it has one, else its body
    on the wrappers (it is made of ops with rules); if the body reads values on the host,
    it runs sample by sample."""
    lv = _level_of(args, kwargs)
    if lv < 0:
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    except (_T.BatchedDataAccess, UnbatchedSelfWrite):
        v = _levels.info(lv)
        if tracked(args, kwargs) and kwargs.get("out") is None and not op.name.endswith("_"):
            # the graph an enclosing grad or jvp records on the wrappers goes through it
            return differentiable_loop(v, op.name, fn, args, kwargs, loop)
        with _levels.switch(v):
            return loop(v, None, fn, args, kwargs, name=op.name)


_installed = False


def _register(op):
    if op.name in RULES:
        op.register(_BATCHED, BatchedKernel(op, RULES[op.name]))
    if op.name in MODE_RULES:
        op.register(_VMAP_MODE, MODE_RULES[op.name](op))


def install():
    """Register the batching rules (on the first vmap; no tensor carries the Batched key
    before that)."""
    global _installed
    if _installed:
        return
    _installed = True
    from ember.func._batching import (  # noqa: F401  (their @rule decorators fill RULES)
        elementwise,
        indexing,
        linalg,
        nn_ops,
        products,
        random_ops,
        reductions,
        selection,
        views,
    )
    for op in _dispatch.all_ops().values():
        _register(op)
    _dispatch.on_define(_register)      # composites of modules imported later (nn's one_hot)
    _dispatch.set_fallback(_BATCHED, _fallback)
    _dispatch.set_fallthrough(_BATCHED, False)
    _dispatch._set_vmap_composite(_vmap_composite)
    random_ops.install()
