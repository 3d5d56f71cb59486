"""ember.autograd: PyTorch's autograd API over the engine in core/_autograd.pyx (its
entry points, grad modes and Function live in the core: core/gradients.py,
core/grad_mode.py, core/function.py)."""
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from ember.autograd.function import Function, FunctionCtx, once_differentiable
from ember.autograd.grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from ember.core.gradients import backward
from ember.core.gradients import grad as _grad

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "detect_anomaly",
           "enable_grad", "enforce_grad_layout_policy", "forward_ad", "functional", "grad",
           "gradcheck", "gradgradcheck", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "no_grad", "once_differentiable", "set_detect_anomaly",
           "set_grad_enabled", "set_multithreading_enabled"]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs`` (nothing accumulates into .grad);
    ``is_grads_batched``: each grad_output's first dim is a batch, vmapped over (one
    vector-Jacobian product per row, as PyTorch's)."""
    if is_grads_batched:
        from ember.autograd._batched import batched_grad
        return batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                            allow_unused, materialize_grads)
    return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs,
                 allow_unused, False, materialize_grads)


def __getattr__(name):
    if name == "Variable":
        from ember.autograd.variable import Variable
        return Variable
    if name in ("forward_ad", "functional", "graph", "profiler", "variable"):
        import importlib
        return importlib.import_module(f"ember.autograd.{name}")
    if name in ("gradcheck", "gradgradcheck"):
        from ember.autograd import _gradcheck
        return getattr(_gradcheck, name)
    raise AttributeError(f"module 'ember.autograd' has no attribute {name!r}")
