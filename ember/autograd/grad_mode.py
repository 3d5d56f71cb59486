"""ember.autograd.grad_mode: the grad-mode context managers (defined in core/grad_mode.py),
at PyTorch's module path."""
from ember.core.grad_mode import *  # noqa: F403
from ember.core.grad_mode import __all__ as _core_all

__all__ = list(_core_all) + ["enforce_grad_layout_policy", "set_multithreading_enabled"]


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
