"""vmap's levels: what each running vmap knows (its batch size, its randomness, the thread
state it started with) and the switch into that state that batching rules run under.

A vmap level is a transform level (core/_forward.pxi's counter, shared with forward AD).
While it runs, the VmapMode key is on for the thread.  A batching rule of level L runs the
op on the physical tensors with the dispatch state L started with: the keys an outer
transform (a grad's Autograd, a jvp's tangents) needs are live again there, and the
innermost vmap is the one that encloses L (for nested randomness).  Autograd comes back
only if what switched it off was an Autograd kernel recording the op on the wrappers; a
no_grad, or a backward pass that records nothing, inside the vmap keeps it off."""
import threading

from ember.core import _autograd as _ag
from ember.core import _state
from ember.core._dispatch import DispatchKey

__all__ = ["VmapLevel", "current", "enter", "exit", "info", "switch"]

VMAP_MODE = 1 << int(DispatchKey.VmapMode)
AUTOGRAD = 1 << int(DispatchKey.Autograd)


class VmapLevel:
    """One running vmap."""

    __slots__ = ("level", "size", "randomness", "included", "excluded", "ceiling", "depth",
                 "alive")

    def __repr__(self):
        return f"VmapLevel(level={self.level}, size={self.size}, randomness={self.randomness!r})"


_levels = {}                    # level -> VmapLevel (levels are unique: never reused)
_tls = threading.local()


def _stack():
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
        _tls.active = 0
    return s


def current():
    """The innermost vmap level visible here (None outside vmap): inside a batching rule of
    level L, the one enclosing L."""
    s = _stack()
    return s[_tls.active - 1] if _tls.active else None


def info(level):
    v = _levels.get(level)
    if v is None or not v.alive:
        raise RuntimeError("vmap: a BatchedTensor escaped the vmap that created it (it was "
                           "returned out of vmap by a side channel, or kept past it): it "
                           "cannot be used any more.")
    return v


def enter(size, randomness):
    """Start a vmap level of batch size ``size``; the VmapMode key goes on."""
    s = _stack()
    v = VmapLevel()
    v.level = _ag._new_level(False)
    v.size, v.randomness, v.alive = size, randomness, True
    v.included, v.excluded = _state._get_tls_keys()
    v.ceiling = _ag._fw_ceiling_get()
    v.depth = _tls.active
    s.append(v)
    _tls.active = len(s)
    _levels[v.level] = v
    _state._set_tls_keys(v.included | VMAP_MODE, v.excluded)
    return v


def exit(v):
    s = _stack()
    s.remove(v)
    v.alive = False
    _levels.pop(v.level, None)
    _ag._end_level(v.level)
    _tls.active = v.depth
    inc, exc = _state._get_tls_keys()
    _state._set_tls_keys((inc & ~VMAP_MODE) | (v.included & VMAP_MODE), exc)


class switch:
    """Context manager: the thread state level ``v`` started with (a batching rule's)."""

    __slots__ = ("v", "saved")

    def __init__(self, v):
        self.v = v

    def __enter__(self):
        _stack()
        inc, exc = _state._get_tls_keys()
        below = _state._get_ag_below()
        self.saved = (inc, exc, _ag._fw_ceiling_get(), _tls.active, below)
        v = self.v
        excluded = v.excluded
        if exc & AUTOGRAD and not below:     # no_grad (or a backward) inside the vmap
            excluded |= AUTOGRAD
        _state._set_tls_keys(v.included, excluded)
        _state._set_ag_below(0)
        # tangent levels a ForwardAD kernel is processing above this call stay hidden
        _ag._fw_ceiling_set(min(v.ceiling, self.saved[2]))
        _tls.active = v.depth

    def __exit__(self, *exc):
        inc, exc_keys, ceiling, active, below = self.saved
        _state._set_tls_keys(inc, exc_keys)
        _state._set_ag_below(below)
        _ag._fw_ceiling_set(ceiling)
        _tls.active = active
