"""ember.autograd: PyTorch's autograd API over the engine in core/_autograd.pyx (its
entry points, grad modes and Function live in the core: core/gradients.py,
core/grad_mode.py, core/function.py)."""
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from ember.autograd.function import Function, FunctionCtx, once_differentiable
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ember.core.gradients import backward, grad

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "detect_anomaly",
           "enable_grad", "enforce_grad_layout_policy", "functional", "grad", "gradcheck",
           "gradgradcheck", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "once_differentiable", "set_detect_anomaly", "set_grad_enabled",
           "set_multithreading_enabled"]


class set_multithreading_enabled:
    """Whether backward runs devices' work on several threads (ember's engine runs on the
    calling thread either way); a call or a context manager restoring the setting."""

    _enabled = True

    def __init__(self, mode):
        self.prev = set_multithreading_enabled._enabled
        set_multithreading_enabled._enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_multithreading_enabled._enabled = self.prev


class enforce_grad_layout_policy:
    """Whether accumulated gradients take their parameter's strides (ember's accumulation
    keeps the strides of the first gradient; the setting is recorded and restored)."""

    _enabled = True

    def __init__(self, enable=True):
        self.prev = enforce_grad_layout_policy._enabled
        enforce_grad_layout_policy._enabled = bool(enable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        enforce_grad_layout_policy._enabled = self.prev


def __getattr__(name):
    if name == "Variable":
        from ember.autograd.variable import Variable
        return Variable
    if name in ("functional", "graph", "profiler", "variable"):
        import importlib
        return importlib.import_module(f"ember.autograd.{name}")
    if name in ("gradcheck", "gradgradcheck"):
        from ember.autograd import _gradcheck
        return getattr(_gradcheck, name)
    raise AttributeError(f"module 'ember.autograd' has no attribute {name!r}")
