"""ember.autograd.function: custom autograd Functions (defined in core/function.py), at
PyTorch's module path."""
from ember.core.function import *  # noqa: F403
from ember.core.function import __all__  # noqa: F401
