"""Redispatch for kernels at mode keys (Profiler, PythonMode, Autocast): run an op as the
dispatcher would below the kernel's own key, with that key excluded on this thread so the
op's own redispatch does not come back to it.  For a composite, ``composite_too=False``
leaves the key live for the ops its body calls: that is how the profiler sees a
composite's children."""
from ember.core import _state
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase

__all__ = ["autocast_active", "redispatch_below"]

_AUTOCAST = 1 << int(DispatchKey.Autocast)


def autocast_active():
    """Whether an autocast region is on in this thread (its key is included): modules check
    argument dtypes after autocast's casts, as PyTorch's do, so a low-precision activation
    may meet a float32 weight where autocast will cast them to one dtype."""
    return bool(_state._get_tls_keys()[0] & _AUTOCAST)


def _input_keys(args, kwargs):
    keys = 0
    for x in (*args, *kwargs.values()):
        if isinstance(x, TensorBase):
            keys |= x._keys
        elif isinstance(x, (list, tuple)):
            for v in x:
                if isinstance(v, TensorBase):
                    keys |= v._keys
    return keys


def redispatch_below(op, key, args, kwargs, composite_too=True):
    """Call ``op`` on ``args``/``kwargs`` below mode key ``key``: the next live key with a
    kernel (a lower mode key, Autograd, ...), else the op's entry."""
    bit = 1 << int(key)
    exclude = composite_too or op.family != -1
    included, excluded = _state._get_tls_keys()
    keys = (_input_keys(args, kwargs) | included) & ~(excluded | bit)
    if not exclude:
        return op.redispatch(int(key), keys, args, kwargs)
    _state._set_tls_keys(included, excluded | bit)
    try:
        return op.redispatch(int(key), keys, args, kwargs)
    finally:
        included, _ = _state._get_tls_keys()
        _state._set_tls_keys(included, excluded)
