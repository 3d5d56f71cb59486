"""custom_fwd/custom_bwd (``torch.amp.custom_fwd``): decorators for an autograd.Function's
forward and backward so they run in the autocast state the forward was called in (forward
optionally with its floating inputs cast to ``cast_inputs`` and autocast off)."""
import collections.abc
import functools

from ember.amp import autocast_mode as _am

__all__ = ["custom_bwd", "custom_fwd"]


def _cast(value, device_type, dtype):
    from ember.core._dtype import _dtype_by_name
    from ember.core._tensor import TensorBase
    if isinstance(value, TensorBase):
        eligible = value.is_floating_point() and value.device.type == device_type and \
            value.dtype is not _dtype_by_name["float64"]
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a Function's forward: it records the autocast state for backward; with
    ``cast_inputs``, inside an autocast region it runs with autocast off and its floating
    CPU/device inputs cast to that dtype."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _am.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _am.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if _am.is_autocast_enabled(device_type):
            with _am.autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a Function's backward: it runs in the autocast state its forward ran in."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with _am.autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                          dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
