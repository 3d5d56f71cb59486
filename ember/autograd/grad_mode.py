"""ember.autograd.grad_mode: the grad-mode context managers (defined in core/grad_mode.py),
at PyTorch's module path."""
from ember.core.grad_mode import *  # noqa: F403
from ember.core.grad_mode import __all__  # noqa: F401
