"""Activation checkpointing: run a function without keeping its intermediate values and
recompute them during backward (memory for compute)."""
from ember.autograd import Function, backward
from ember.autograd.grad_mode import enable_grad
from ember.core._tensor import TensorBase

__all__ = ["checkpoint", "checkpoint_sequential"]


def _rng_state():
    from ember.core import _tensor as _T
    return _T._default_generator("cpu").get_state()


def _set_rng_state(state):
    from ember.core import _tensor as _T
    _T._default_generator("cpu").set_state(state)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, fn, preserve_rng, kwargs, *args):
        ctx.fn, ctx.kwargs, ctx.preserve_rng = fn, kwargs, preserve_rng
        ctx.rng = _rng_state() if preserve_rng else None
        ctx.positions = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        ctx.others = [None if isinstance(a, TensorBase) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, TensorBase)])
        return fn(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        args = list(ctx.others)
        for i, t in zip(ctx.positions, saved):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        if ctx.preserve_rng:
            now = _rng_state()
            _set_rng_state(ctx.rng)
        try:
            with enable_grad():
                out = ctx.fn(*args, **ctx.kwargs)
        finally:
            if ctx.preserve_rng:
                _set_rng_state(now)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, TensorBase) and o.requires_grad and g is not None]
        if pairs:
            backward(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
        return (None, None, None) + tuple(
            a.grad if isinstance(a, TensorBase) else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check=None,
               debug=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, keeping only its inputs for backward, where it is run
    again with recording on (the RNG state restored, so dropout masks match)."""
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a sequence of modules/callables) in ``segments`` checkpointed
    chunks."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, (len(functions) + segments - 1) // segments)

    def run(chunk):
        def f(x):
            for fn in chunk:
                x = fn(x)
            return x
        return f

    for start in range(0, len(functions), size):
        input = checkpoint(run(functions[start:start + size]), input, **kwargs)
    return input
