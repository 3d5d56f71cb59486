"""PyTorch's per-device autocast functions from before ``device_type`` arguments
(torch.is_autocast_cpu_enabled, torch.get_autocast_gpu_dtype, ...) and the autocast nesting
counter; each warns as PyTorch does and forwards to ember.amp.autocast_mode."""
import threading
import warnings

from ember.amp import autocast_mode as _am

__all__ = ["autocast_decrement_nesting", "autocast_increment_nesting",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "get_autocast_ipu_dtype",
           "get_autocast_xla_dtype", "is_autocast_cpu_enabled", "is_autocast_ipu_enabled",
           "is_autocast_xla_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
           "set_autocast_gpu_dtype", "set_autocast_ipu_dtype", "set_autocast_ipu_enabled",
           "set_autocast_xla_dtype", "set_autocast_xla_enabled"]

_nesting = threading.local()

# the device each old name stands for ('gpu' is cuda)
_DEVICE = {"cpu": "cpu", "gpu": "cuda", "ipu": "ipu", "xla": "xla"}


def _warn(old, new):
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def _getter_dtype(dev):
    def get():
        _warn(f"get_autocast_{dev}_dtype", f"get_autocast_dtype('{_DEVICE[dev]}')")
        return _am.get_autocast_dtype(_DEVICE[dev])
    get.__name__ = f"get_autocast_{dev}_dtype"
    get.__doc__ = f"The autocast dtype of '{_DEVICE[dev]}' (deprecated spelling)."
    return get


def _setter_dtype(dev):
    def set(dtype):
        _warn(f"set_autocast_{dev}_dtype", f"set_autocast_dtype('{_DEVICE[dev]}', dtype)")
        _am.set_autocast_dtype(_DEVICE[dev], dtype)
    set.__name__ = f"set_autocast_{dev}_dtype"
    set.__doc__ = f"Set the autocast dtype of '{_DEVICE[dev]}' (deprecated spelling)."
    return set


def _getter_enabled(dev):
    def get():
        _warn(f"is_autocast_{dev}_enabled", f"is_autocast_enabled('{_DEVICE[dev]}')")
        return _am.is_autocast_enabled(_DEVICE[dev])
    get.__name__ = f"is_autocast_{dev}_enabled"
    get.__doc__ = f"Whether autocast is on for '{_DEVICE[dev]}' (deprecated spelling)."
    return get


def _setter_enabled(dev):
    def set(enabled):
        _warn(f"set_autocast_{dev}_enabled",
              f"set_autocast_enabled('{_DEVICE[dev]}', enabled)")
        _am.set_autocast_enabled(_DEVICE[dev], enabled)
    set.__name__ = f"set_autocast_{dev}_enabled"
    set.__doc__ = f"Switch autocast for '{_DEVICE[dev]}' (deprecated spelling)."
    return set


get_autocast_cpu_dtype = _getter_dtype("cpu")
get_autocast_gpu_dtype = _getter_dtype("gpu")
get_autocast_ipu_dtype = _getter_dtype("ipu")
get_autocast_xla_dtype = _getter_dtype("xla")
set_autocast_cpu_dtype = _setter_dtype("cpu")
set_autocast_gpu_dtype = _setter_dtype("gpu")
set_autocast_ipu_dtype = _setter_dtype("ipu")
set_autocast_xla_dtype = _setter_dtype("xla")
is_autocast_cpu_enabled = _getter_enabled("cpu")
is_autocast_ipu_enabled = _getter_enabled("ipu")
is_autocast_xla_enabled = _getter_enabled("xla")
set_autocast_cpu_enabled = _setter_enabled("cpu")
set_autocast_ipu_enabled = _setter_enabled("ipu")
set_autocast_xla_enabled = _setter_enabled("xla")


def autocast_increment_nesting():
    """Count one more autocast region entered on this thread; returns the new depth."""
    _nesting.depth = getattr(_nesting, "depth", 0) + 1
    return _nesting.depth


def autocast_decrement_nesting():
    """Count one autocast region left; at depth 0 the cast cache is cleared (as PyTorch)."""
    _nesting.depth = getattr(_nesting, "depth", 0) - 1
    if _nesting.depth <= 0:
        _nesting.depth = 0
        _am.clear_autocast_cache()
    return _nesting.depth
