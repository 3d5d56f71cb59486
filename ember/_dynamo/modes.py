"""The grad, inference and autocast modes each captured op ran under.

A graph replays ops, not the Python around them: a ``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``inference_mode`` or ``autocast`` entered inside the compiled
function would be lost from the second call on (the ops would run in the caller's mode).
So the recorder notes the mode of every op (``op_mode``); when all of them ran in one mode
that differs from the caller's (a ``@no_grad`` decorator inside, say), the graph replays
under that mode (``replaying``); when it changed between ops, the capture breaks (the
call runs eagerly), as one graph cannot switch modes half-way.

Grad mode only counts for ops with an input that requires grad: elsewhere it changes
nothing, so a ``no_grad`` block over tensors that do not require grad is no change.
"""
import contextlib
import sys

from ember.core import _autograd as _ag
from ember.core import _state
from ember.core._tensor import TensorBase
from ember.core.function import forwards_running

__all__ = ["Mode", "caller_mode", "op_mode", "replay_mode", "replaying"]


class Mode(tuple):
    """(grad enabled, inference mode, autocast): each None where it does not matter."""

    __slots__ = ()

    def __new__(cls, grad, inference, autocast):
        return super().__new__(cls, (grad, inference, autocast))

    grad = property(lambda self: self[0])
    inference = property(lambda self: self[1])
    autocast = property(lambda self: self[2])


def _autocast():
    """The autocast state ops see: the enabled device types with their dtypes."""
    mod = sys.modules.get("ember.amp.autocast_mode")
    if mod is None:
        return ()
    tls = mod._tls
    return tuple(sorted(((dev, mod.get_autocast_dtype(dev))
                         for dev, on in tls.enabled.items() if on), key=lambda p: p[0]))


def _requires_grad(args):
    for a in args:
        if isinstance(a, TensorBase):
            if a.requires_grad:
                return True
        elif type(a) in (tuple, list) and _requires_grad(a):
            return True
    return False


def caller_mode():
    """The mode the compiled function is called in."""
    return Mode(_ag.is_grad_enabled(), _ag.is_inference_mode_enabled(), _autocast())


def op_mode(args, kwargs):
    """The mode an op called with ``args`` and ``kwargs`` runs in now.  An Autograd kernel
    running its op below itself switches the Autograd key off too: that is no no_grad (the
    recorder sees most ops from there); nor is the one a custom Function's forward runs
    under (its graph node is what the capture records for autograd)."""
    grad = None
    if not forwards_running() and (_requires_grad(args) or _requires_grad(kwargs.values())):
        grad = _ag.is_grad_enabled() or _state._get_ag_below() > 0
    return Mode(grad, _ag.is_inference_mode_enabled(), _autocast())


def replay_mode(caller, modes):
    """(the mode to replay ops that ran in ``modes``, a set of ``op_mode`` results, from
    ``caller``: None if it is the caller's; why they cannot be replayed, or None)."""
    found = []
    for part, what in enumerate(("grad mode", "inference mode", "autocast")):
        seen = {m[part] for m in modes} - {None}
        if len(seen) > 1:
            return None, (f"{what} changed between the ops of the compiled function (a "
                          f"graph replays all its ops in one mode)")
        found.append(seen.pop() if seen else None)
    if all(v is None or v == c for v, c in zip(found, caller)):
        return None, None
    return Mode(*(None if v == c else v for v, c in zip(found, caller))), None


@contextlib.contextmanager
def replaying(mode):
    """Run the block in ``mode`` (its parts that are not None)."""
    prev_grad = prev_inf = None
    ac = contextlib.nullcontext()
    if mode.autocast is not None:
        from ember.amp import autocast_mode
        dtypes = dict(mode.autocast)
        ac = autocast_mode._restored(({dev: True for dev in dtypes}, dtypes,
                                      autocast_mode.is_autocast_cache_enabled()))
    if mode.inference is not None:
        prev_inf = _ag._set_inference_mode(mode.inference)
    if mode.grad is not None:
        prev_grad = _ag._set_grad_enabled(mode.grad)
    try:
        with ac:
            yield
    finally:
        if prev_grad is not None:
            _ag._set_grad_enabled(prev_grad)
        if prev_inf is not None:
            _ag._set_inference_mode(prev_inf)
